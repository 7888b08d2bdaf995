"""``warm_start``: which previous chains a fit may continue, and the checks that they
continue on the same data and settings."""
import warnings

import numpy as np

#: Settings that may change between a fit and its continuation.
MAY_CHANGE = ("n_draws", "max_time", "warm_start", "verbose", "n_jobs", "predict_tol")


def continuation_key(params, data, summary):
    """What must not change between a fit and its continuation: the estimator's
    parameters ``params`` (but :data:`MAY_CHANGE`) and the data's fingerprint (shape and
    type, the weights' and the offsets' sums, and the validation pass's column moments and
    summary of ``y``, ``summary``)."""
    params = {name: value for name, value in params.items() if name not in MAY_CHANGE}
    fingerprint = [("shape", (data.n_rows, data.n_features)),
                   ("dtype", str(data.X.dtype)), ("weights", float(data.weights.sum())),
                   ("offset", float(data.offset.sum()))]
    fingerprint += [(name, np.asarray(summary[name]).tolist()) for name in sorted(summary)]
    return params, fingerprint


def chains_to_continue(previous, key, n_draws, name, stacklevel):
    """``previous`` (the chains a ``warm_start`` fit kept, with the :func:`continuation_key`
    they were fitted under, or None) when they can be continued to ``n_draws`` draws under
    ``key``; None to start afresh. A ``ValueError`` names what changed."""
    if previous is None:
        return None
    chains, old_key = previous
    if not all(chain.warmup_complete for chain in chains):
        warnings.warn(f"{name}: the previous fit was interrupted before every chain had "
                      f"finished its warm-up, so the chains start afresh.", UserWarning,
                      stacklevel=stacklevel)
        return None
    (params, fingerprint), (old_params, old_fingerprint) = key, old_key
    changed = [p for p in params if not same_value(params[p], old_params[p])]
    if changed:
        raise ValueError(
            f"warm_start=True continues the previous fit's chains, so only n_draws (and "
            f"max_time, verbose, n_jobs, predict_tol) may change; {', '.join(changed)} "
            f"changed. Set warm_start=False to start afresh.")
    if fingerprint != old_fingerprint:
        raise ValueError("warm_start=True continues the previous fit's chains on the data "
                         "they were fitted on, and these data differ (their shape, type or "
                         "column moments). Set warm_start=False to fit these data afresh.")
    have = min(chain.n_draws for chain in chains)
    if isinstance(n_draws, str):  # "auto": on from where they are, as far as the rule says
        return chains
    if n_draws < have:
        raise ValueError(f"n_draws={n_draws} is fewer than the {have} draws per chain "
                         f"already kept; with warm_start=True n_draws is the total to "
                         f"reach (set warm_start=False to start afresh).")
    if n_draws == have and all(not c.interrupted for c in chains):
        warnings.warn(f"{name}: warm_start=True with n_draws={n_draws}, the draws already "
                      f"kept: nothing new is drawn. Raise n_draws to continue the chains.",
                      UserWarning, stacklevel=stacklevel)
    return chains


def same_value(a, b):
    """Whether two parameter values are the same setting: objects with ``get_params``
    (acceptance tests, proposals) by type and parameters, arrays by value, others by ``==``."""
    if a is b:
        return True
    if hasattr(a, "get_params") and hasattr(b, "get_params"):
        pa, pb = a.get_params(deep=False), b.get_params(deep=False)
        return type(a) is type(b) and pa.keys() == pb.keys() and all(
            same_value(pa[k], pb[k]) for k in pa)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False
