"""
A model of your own: sample() with its gradient and Hessian
===========================================================

:func:`~skbayes_mh.sample` runs the library's samplers on any model whose log-likelihood
is a sum over rows: you write one row's log-likelihood with ``numba.njit``. Given also
each row's gradient and Hessian, the subsampling tests use control variates: they read
each row's change *minus* its Taylor proxy at the MAP, whose sum over all rows is exact,
so that a step is decided from about a hundred rows whatever the data's size (MALA and
HMC would get their gradient from them too).

The model here: a Weibull likelihood for 200,000 lifetimes, with log-shape and log-scale
parameters ``theta = (log k, log lam)``, flat priors. The minibatch test with control
variates is compared with the exact Metropolis test on all rows. With
``SKBAYES_MH_DOCS_SMALL=1`` it reads 20,000 lifetimes and runs shorter chains.
"""

import os

import matplotlib.pyplot as plt
import numba
import numpy as np

from skbayes_mh import sample

SMALL = bool(os.environ.get("SKBAYES_MH_DOCS_SMALL"))
N = 20_000 if SMALL else 200_000
N_DRAWS, N_WARMUP = (1000, 300) if SMALL else (4000, 1000)
rng = np.random.default_rng(0)
data = (2.0 * rng.weibull(1.5, size=N))[:, None]  # shape k = 1.5, scale lam = 2

# %%
# One row's log-likelihood and its derivatives
# --------------------------------------------
# ``log p(t | k, lam) = log k - k log lam + (k - 1) log t - (t / lam)^k``. With
# ``a = log k``, ``b = log lam`` and ``z = (t / lam)^k``, its gradient is
# ``(1 + k log(t / lam) (1 - z), -k (1 - z))``.


@numba.njit(cache=True)
def loglik(theta, data, i):
    k, b = np.exp(theta[0]), theta[1]
    log_ratio = np.log(data[i, 0]) - b
    return np.log(k) - b + (k - 1.0) * log_ratio - np.exp(k * log_ratio)


@numba.njit(cache=True)
def gradient(theta, data, i, out):
    k = np.exp(theta[0])
    u = k * (np.log(data[i, 0]) - theta[1])  # k log(t / lam)
    z = np.exp(u)
    out[0] = 1.0 + u * (1.0 - z)
    out[1] = -k * (1.0 - z)


@numba.njit(cache=True)
def hessian(theta, data, i, out):
    k = np.exp(theta[0])
    u = k * (np.log(data[i, 0]) - theta[1])
    z = np.exp(u)
    out[0, 0] = u * (1.0 - z) - u * u * z
    out[0, 1] = out[1, 0] = -k * (1.0 - z) + k * u * z
    out[1, 1] = -k * k * z


# %%
# Two chains of 4,000 draws each, from the same start: the minibatch test with control
# variates, and the exact Metropolis test (every row, every iteration), both with
# random-walk proposals. :func:`~skbayes_mh.sample` keeps ``step_size`` as given: here
# about 1.7 posterior sds per coordinate (the posterior's sd shrinks as ``1/sqrt(N)``;
# ``-1/sqrt`` of the Hessian's diagonal at the MAP says it).

start = np.array([0.0, 0.0])
runs = {}
for name in ("minibatch", "metropolis"):
    runs[name] = sample(loglik, data, start, step_size=1.3 / np.sqrt(N), gradient=gradient,
                        hessian=hessian, acceptance=name, n_draws=N_DRAWS,
                        n_warmup=N_WARMUP, random_state=0)
    result = runs[name]
    k, lam = np.exp(result.draws).mean(axis=0)
    print(f"{name:>10}: rows read per iteration {result.mean_data_read:9,.1f} of {N:,}, "
          f"acceptance {result.acceptance_rate:.2f}, {result.seconds:.1f} s; posterior mean "
          f"k = {k:.4f}, lam = {lam:.4f}")

# %%
# The two posteriors of the shape ``k`` and the scale ``lam`` agree.

fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
for column, (ax, label) in enumerate(zip(axes, ["shape k", "scale lam"])):
    for name, result in runs.items():
        ax.hist(np.exp(result.draws[:, column]), bins=40, density=True, histtype="step",
                linewidth=1.5, label=name)
    ax.set_xlabel(label)
axes[0].set_ylabel("posterior density")
axes[0].legend()
fig.tight_layout()
plt.show()
