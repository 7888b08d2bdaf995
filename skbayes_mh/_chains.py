"""Running chains: one problem description, the kernel call with clear errors, burn-in
adaptation of the proposal, per-chain seeds, and chains in parallel through joblib."""
import time
from dataclasses import dataclass

import numpy as np
from numba.core.errors import NumbaError
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed

from ._kernels._jit import STATUS_BAD_LOG_PRIOR, STATUS_OK
from ._kernels.chain import run_chain

_NO_FACTOR = np.empty((0, 0))


def raise_for_status(status, where):
    """Turn a kernel's status code into a ValueError saying ``where`` it happened."""
    if status == STATUS_OK:
        return
    if status == STATUS_BAD_LOG_PRIOR:
        raise ValueError(f"log_prior returned NaN or +inf at {where}.")
    raise ValueError(f"loglik returned NaN or +inf at {where}; "
                     "return -inf for a parameter with zero likelihood.")


@dataclass(frozen=True)
class Target:
    """The tempered posterior a chain samples and the test that decides: everything the
    chain kernel needs apart from the state, the proposal and the generator."""

    loglik: object
    log_prior: object
    prior_kind: int
    prior_scales: np.ndarray
    data: np.ndarray
    acceptance: object
    inv_temperature: float

    def iterate(self, theta, rng, n_iter, step, factor=None, what="sampling", cache=None):
        """Run ``n_iter`` iterations from ``theta`` (updated in place).

        ``cache`` is a (1,) array holding the full-data log-likelihood of ``theta`` when a
        test knows it (NaN otherwise), updated in place: pass the same one to consecutive
        calls on a chain so that exact tests need not recompute it.

        Returns
        -------
        draws : (n_iter, d), accepted : (n_iter,) bool, n_data_read : (n_iter,) int,
        log_posterior : (n_iter,) (NaN where the test does not know it)
        """
        draws = np.empty((n_iter, theta.size))
        accepted = np.empty(n_iter, dtype=np.bool_)
        n_read = np.empty(n_iter, dtype=np.int64)
        log_posterior = np.empty(n_iter)
        support, cdf = self.acceptance._correction_arrays()
        try:
            status, iteration = run_chain(
                self.loglik, self.log_prior, self.prior_kind, self.prior_scales, self.data,
                theta, np.full(1, np.nan) if cache is None else cache, step, _NO_FACTOR if factor is None else factor,
                self.acceptance._kernel_id, self.acceptance._kernel_params(), support, cdf,
                self.inv_temperature, rng, draws, accepted, n_read, log_posterior)
        except (TypeError, NumbaError) as error:
            raise TypeError("loglik and log_prior must compile as float64(theta: float64[::1], "
                            "data: readonly float64[:, ::1], i: int64) and float64(theta): "
                            f"{error}") from error
        raise_for_status(status, f"{what} iteration {iteration}")
        return draws, accepted, n_read, log_posterior


def chain_seeds(random_state, n_chains):
    """One integer seed per chain, drawn up front from ``random_state``: chain ``c`` gets
    the same stream whatever ``n_jobs`` is."""
    return check_random_state(random_state).randint(0, 2**31 - 1, size=n_chains)


def chain_generator(seed):
    """The chain's own generator (never numba's global one)."""
    return np.random.default_rng(int(seed))


def run_in_parallel(function, arguments, n_jobs):
    """``[function(*a) for a in arguments]`` through joblib, threads by default: the numba
    kernels release the GIL. A ``joblib.parallel_backend`` context (Dask, Ray) overrides the
    backend without code changes."""
    return Parallel(n_jobs=n_jobs, prefer="threads")(delayed(function)(*a) for a in arguments)


class Progress:
    """Progress of the chains: a tqdm bar when tqdm is installed, plain lines otherwise,
    nothing when ``verbose`` is 0."""

    def __init__(self, total, verbose, description):
        self.verbose = verbose
        self.bar = None
        self.done = 0
        self.total = total
        self.description = description
        self.start = time.perf_counter()
        if verbose > 0:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                print(f"{description}: 0/{total} iterations", flush=True)
            else:
                self.bar = tqdm(total=total, desc=description)

    def update(self, n):
        if self.verbose <= 0:
            return
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        else:
            print(f"{self.description}: {self.done}/{self.total} iterations "
                  f"({time.perf_counter() - self.start:.1f} s)", flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()
