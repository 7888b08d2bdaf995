"""The README's demo: Bayesian linear regression with a known noise level, where the exact
posterior is Gaussian in closed form, sampled with every acceptance test."""
import time

import numpy as np

from ._kernels._jit import jit, F8, VECTOR, DATA, I8
from ._sample import sample
from .acceptance import ACCEPTANCE_TESTS

NOISE_SD = 1.0
PRIOR_SD = 10.0


@jit(F8(VECTOR, DATA, I8))
def linear_gaussian_loglik(theta, data, i):
    """``log N(y_i | x_i . theta, NOISE_SD^2)`` up to a constant; row ``i`` is ``[x_i, y_i]``."""
    residual = data[i, -1]
    for k in range(theta.shape[0]):
        residual -= data[i, k] * theta[k]
    return -0.5 * (residual / NOISE_SD) ** 2


@jit(F8(VECTOR))
def gaussian_log_prior(theta):
    """Independent ``N(0, PRIOR_SD^2)`` coefficients, up to a constant."""
    return -0.5 * np.sum(theta * theta) / PRIOR_SD**2


def make_problem(n_data, seed):
    """Data ``[1, x1, x2, y]`` and the exact posterior mean and covariance."""
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(n_data), rng.normal(size=(n_data, 2))])
    true_coef = np.array([0.5, -1.0, 2.0])
    y = x @ true_coef + NOISE_SD * rng.normal(size=n_data)
    precision = x.T @ x / NOISE_SD**2 + np.eye(3) / PRIOR_SD**2
    covariance = np.linalg.inv(precision)
    mean = covariance @ (x.T @ y) / NOISE_SD**2
    return np.column_stack([x, y]), mean, covariance


def run_demo(n_data=20_000, n_samples=5_000, seed=0, out=print):
    data, exact_mean, exact_cov = make_problem(n_data, seed)
    exact_sd = np.sqrt(np.diag(exact_cov))
    # A random walk with steps of 0.4 posterior sd per coordinate, the same for every test.
    step = 0.4 * exact_sd
    out(f"Bayesian linear regression, N = {n_data:,} rows, 3 coefficients, "
        f"{n_samples:,} draws per test after {n_samples // 5:,} burn-in;")
    out("random-walk step 0.4 posterior sd; the exact posterior is Gaussian in closed form.\n")
    header = (f"{'test':<11} {'accept':>7} {'rows read/test':>15} "
              f"{'max |mean - exact| / sd':>24} {'sd / exact sd':>18} {'seconds':>8}")
    out(header)
    out("-" * len(header))
    for name in ACCEPTANCE_TESTS:
        if "lipschitz" in ACCEPTANCE_TESTS[name]().get_params():
            out(f"{name:<11} (needs a per-datum Lipschitz bound; a Gaussian likelihood has none)")
            continue
        if name == "firefly":
            out(f"{name:<11} (needs a collapsible likelihood bound: logistic and softmax "
                "regression; see FireflySoftmaxClassifier)")
            continue
        start = time.perf_counter()
        result = sample(linear_gaussian_loglik, data, exact_mean, step_size=step,
                        log_prior=gaussian_log_prior, acceptance=name, n_samples=n_samples,
                        n_burnin=n_samples // 5, random_state=seed)
        seconds = time.perf_counter() - start
        mean_error = np.max(np.abs(result.draws.mean(axis=0) - exact_mean) / exact_sd)
        sd_ratio = result.draws.std(axis=0) / exact_sd
        out(f"{name:<11} {result.acceptance_rate:>7.3f} {result.mean_data_read:>15,.1f} "
            f"{mean_error:>24.3f} {np.array2string(sd_ratio, precision=2):>18} {seconds:>8.2f}")
    out("\nexact posterior mean " + np.array2string(exact_mean, precision=4)
        + ", sd " + np.array2string(exact_sd, precision=5))
