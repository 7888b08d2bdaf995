"""Checks at the Python boundary, before anything reaches numba: every failure is a
ValueError/TypeError naming the parameter, never a numba traceback."""
import numbers
import os
import textwrap
import weakref

import numba
import numpy as np
from numba.core.dispatcher import Dispatcher


def check_jitted(function, name, example_args):
    """Check that ``function`` is a numba.njit function that compiles and returns a real
    number for ``example_args``."""
    if not callable(function):
        raise TypeError(f"{name} must be a numba.njit function; got a non-callable "
                        f"{type(function).__name__}.")
    if not isinstance(function, Dispatcher):
        raise TypeError(f"{name} must be compiled with numba.njit (so that the chain loop can "
                        f"call it without the GIL); got the plain Python callable {function!r}. "
                        f"Decorate it with @numba.njit.")
    try:
        value = function(*example_args)
    except Exception as error:  # numba typing errors come in many classes
        raise TypeError(f"{name} could not be compiled or called with the documented "
                        f"arguments: {type(error).__name__}: {error}") from error
    # numba boxes a float32 result as a Python float: its compiled signature tells.
    other = {str(sig.return_type) for sig in function.nopython_signatures} - {"float64"}
    if other or not isinstance(value, float):
        returned = ", ".join(sorted(other)) if other else type(value).__name__
        raise TypeError(f"{name} must return a float64 (a Python float); it returned "
                        f"{returned}: convert with float(...) or np.float64(...) inside it.")
    _check_in_bounds(function, name, example_args)
    return float(value)


#: Bounds-checked compilations of user functions, by their Python function.
_BOUNDS_CHECKED = weakref.WeakKeyDictionary()


def _check_in_bounds(function, name, example_args):
    """Call a bounds-checked compilation of ``function`` once on ``example_args``: an index
    beyond ``theta`` or ``data`` (e.g. ``theta0`` shorter than the parameters the function
    reads) is a ``ValueError`` here instead of silent reads of other memory in the chain.
    Functions that cannot be recompiled that way are left to the chain."""
    python_function = getattr(function, "py_func", None)
    if python_function is None:
        return
    checked = _BOUNDS_CHECKED.get(python_function)
    if checked is None:  # compiled once per function and process, not per call
        try:
            checked = numba.njit(boundscheck=True)(python_function)
        except Exception:  # noqa: BLE001 - any failure to set up the check skips it
            return
        _BOUNDS_CHECKED[python_function] = checked
    try:
        checked(*example_args)
    except IndexError as error:
        shapes = ", ".join(f"{np.shape(a)}" for a in example_args if isinstance(a, np.ndarray))
        raise ValueError(f"{name} indexes beyond its arguments (shapes {shapes}): {error}. "
                         f"Is theta0 as long as the parameters {name} reads?") from None
    except Exception:  # noqa: BLE001 - other failures show in the chain itself
        return


def check_jitted_writer(function, name, example_args, out_shape):
    """Check that ``function`` is a numba.njit function ``function(*example_args, out)`` that
    compiles and writes finite numbers into ``out`` of ``out_shape``."""
    if not isinstance(function, Dispatcher):
        raise TypeError(f"{name} must be a numba.njit function {name}(theta, data, i, out); got "
                        f"{function!r}.")
    out = np.full(out_shape, np.nan)
    try:
        function(*example_args, out)
    except Exception as error:  # numba typing errors come in many classes
        raise TypeError(f"{name} could not be compiled or called as {name}(theta, data, i, out) "
                        f"with out of shape {out_shape}: {type(error).__name__}: "
                        f"{error}") from error
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name}(theta0, data, 0, out) left NaN or infinity in out (shape "
                         f"{out_shape}): it must write every entry.")
    _check_in_bounds(function, name, (*example_args, np.zeros(out_shape)))


def check_array(array, name, ndim):
    """float64, C-contiguous, finite, non-empty array of ``ndim`` dimensions (an array that
    already is one, e.g. an ``np.memmap``, is returned as it is, checked chunk by chunk on
    every core without temporaries of its size)."""
    if array is None:
        raise TypeError(f"{name} must be an array of real numbers; got None.")
    if hasattr(array, "tocsr") and hasattr(array, "nnz"):  # a scipy.sparse matrix or array
        raise TypeError(f"{name} must be a dense array; got a sparse matrix (pass "
                        f"{name}.toarray()).")
    try:
        array = np.ascontiguousarray(array, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be an array of real numbers: {error}") from error
    if array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array; got shape {array.shape}.")
    if array.size == 0:
        raise ValueError(f"{name} is empty (shape {array.shape}).")
    from ._passes import first_bad_row, map_stripes

    bad = [row for row in map_stripes(lambda start, stop: first_bad_row(array, start, stop),
                                      array.shape[0]) if row >= 0]
    if bad:
        raise ValueError(f"{name} contains NaN or infinity (first in row {min(bad)}).")
    return array


def file_state(X):
    """``(path, size, modification time)`` of the file under an ``np.memmap`` ``X`` (None
    for any other array): :func:`check_file_unchanged` compares it after the chains."""
    if not isinstance(X, np.memmap) or not getattr(X, "filename", None):
        return None
    state = os.stat(X.filename)
    return X.filename, state.st_size, state.st_mtime_ns


def check_file_unchanged(state, name):
    """A ``ValueError`` when the file of :func:`file_state` ``state`` was rewritten,
    truncated or removed since: the draws may mix old and new data, so they are discarded.
    (A truncation while the chains read the pages beyond the new end is the OS's SIGBUS,
    which ends the process: no draws at all, never wrong ones.)"""
    if state is None:
        return
    path, size, modified = state
    try:
        now = os.stat(path)
    except OSError:
        now = None
    if now is None or (now.st_size, now.st_mtime_ns) != (size, modified):
        raise ValueError(
            f"{name}.fit: the file under the memory-mapped X ({path}) was "
            + ("removed during the fit" if now is None else
               "changed during the fit (its size or modification time differ)")
            + ", so the draws may mix old and new data: they are discarded. "
            "Fit again once the file is final (or on a copy of it).")


def read_only(array):
    """A read-only view (no copy): the kernels take data as read-only, so writable arrays
    and read-only memmaps compile to one signature."""
    view = array.view()
    view.flags.writeable = False
    return view


def check_step_size(step_size, n_dim):
    """A positive scalar or (n_dim,) array -> (n_dim,) float64 array."""
    expected = (f"step_size must be a positive number or an array of {n_dim} positive "
                f"numbers (one per coordinate); got {step_size!r}.")
    if step_size is None:
        raise TypeError(expected)
    try:
        step = None if isinstance(step_size, str) else np.asarray(step_size, dtype=np.float64)
    except (TypeError, ValueError):  # not numbers at all (an object, a ragged list)
        raise TypeError(expected) from None
    if step is None or step.ndim > 1 or (step.ndim == 1 and step.shape != (n_dim,)):
        raise ValueError(expected)
    if not np.all(np.isfinite(step)) or np.any(step <= 0):
        raise ValueError(f"step_size must be positive and finite; got {step_size!r}.")
    return np.array(np.broadcast_to(step, (n_dim,)), dtype=np.float64)  # a writable copy


#: The smallest temperature accepted: the log-likelihood is multiplied by 1/temperature,
#: and beyond 1e100 its sums, gradients and curvatures overflow float64.
MIN_TEMPERATURE = 1e-100


def check_scalar(value, name, kind, low, low_inclusive=True):
    """A scalar of ``kind`` (numbers.Integral or numbers.Real) at or above ``low``."""
    if not isinstance(value, kind) or isinstance(value, bool):
        expected = "an integer" if kind is numbers.Integral else "a real number"
        raise TypeError(f"{name} must be {expected}; got {value!r}.")
    if not np.isfinite(value) or value < low or (value == low and not low_inclusive):
        relation = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be finite and {relation} {low}; got {value!r}.")
    return value


def resolve_option(value, registry, base, parameter, extra=()):
    """A validated fresh object for a parameter given by registry name or as an object of
    ``base`` (an object is cloned, never modified).

    Raises
    ------
    ValueError
        Unknown name, or invalid parameters of the object.
    TypeError
        Neither a name nor a ``base`` object.
    """
    from sklearn.base import clone

    names = sorted(registry) + list(extra)
    if isinstance(value, str):
        if value not in registry:
            raise ValueError(f"Unknown {parameter} {value!r}; the parameter {parameter!r} must be "
                             f"one of {names} or a {base.__name__} object.")
        return registry[value]().validate()
    if isinstance(value, base):
        return clone(value).validate()
    raise TypeError(f"The parameter {parameter!r} must be a name {names} or a {base.__name__} "
                    f"object; got {type(value).__name__}.")


def resolve_sections(parameter, class_name, registry, noun, note=""):
    """The numpydoc sections of a ``resolve_<parameter>`` function over
    :func:`resolve_option`: ``class_name`` the objects' class, ``registry`` the name of the
    registry, ``noun`` what an object is called, ``note`` a sentence more on the names."""
    def article(word):
        return "an" if word[0].lower() in "aeiou" else "a"

    entry = f"A name of :data:`{registry}` or {article(noun)} {noun} object. {note}".rstrip()
    return f"""Parameters
----------
{parameter} : str or {class_name}
{textwrap.indent(textwrap.fill(entry, 88), "    ")}

Returns
-------
{class_name}
    A validated object: a new one with default parameters for a name, a clone for
    an object.

Raises
------
ValueError
    Unknown name or invalid parameters.
TypeError
    Neither a string nor {article(class_name)} :class:`{class_name}`.
"""


def checked_reference_proba(reference_proba, n_rows):
    """Reference probabilities of class 1 for a predictive-mean risk, validated.

    Parameters
    ----------
    reference_proba : array-like of shape (n_rows,) or (n_rows, 2)
        Probabilities of class 1, or both classes' (the second column is taken).
    n_rows : int

    Returns
    -------
    ndarray of shape (n_rows,)
    """
    reference = np.asarray(reference_proba, dtype=np.float64)
    if reference.ndim == 2:
        reference = reference[:, 1]
    if reference.shape != (n_rows,):
        raise ValueError(f"reference_proba must have {n_rows} rows (one per row of X); "
                         f"got shape {np.shape(reference_proba)}.")
    valid = (reference >= 0) & (reference <= 1)
    if not np.all(valid):
        row = int(np.flatnonzero(~valid)[0])
        raise ValueError(f"reference_proba must be probabilities in [0, 1]; row {row} is "
                         f"{float(reference[row])}.")
    return reference


#: Per-draw statistics kept beside each draw (lp, acceptance rate, rows read, seconds,
#: bright count), 8 bytes each.
STATS_PER_DRAW = 5
#: Values (of a feature or of y) above this in magnitude overflow the sums of squares
#: behind the Laplace approximation and the autoscaled priors: fit asks for rescaling.
MAX_MAGNITUDE = 1e100


def check_magnitudes(summary, classes):
    """A ``ValueError`` naming the column (or y) whose mean or sd in ``summary`` (the
    validation pass's) is beyond :data:`MAX_MAGNITUDE` or overflowed."""
    for name, values in (("mean", summary["x_mean"]), ("sd", summary["x_std"])):
        values = np.abs(np.asarray(values, dtype=float))
        bad = np.flatnonzero(~(values <= MAX_MAGNITUDE))
        if bad.size:
            raise ValueError(f"Feature {bad[0]} of X has a {name} of {values[bad[0]]:.3g}: "
                             f"values beyond {MAX_MAGNITUDE:.0e} overflow the sums the "
                             f"sampler needs. Rescale it (e.g. StandardScaler).")
    if not classes:
        for key in ("mean", "std"):
            value = abs(float(summary[key]))
            if not value <= MAX_MAGNITUDE:
                raise ValueError(f"y has a {'sd' if key == 'std' else key} of {value:.3g}: "
                                 f"values beyond {MAX_MAGNITUDE:.0e} overflow the sums the "
                                 f"sampler needs. Rescale y.")


def check_draws_memory(n_chains, n_draws, n_warmup, n_features):
    """A ``ValueError`` naming ``n_draws`` or ``n_warmup`` when the draws they ask for
    cannot fit in this machine's memory (instead of an allocation that fails late, or a run
    of hours). The parameters are counted from below (one output and an intercept), so no
    fit that fits is refused."""
    n_params = n_features + 1
    kept = n_chains * n_draws * 8 * (n_params + STATS_PER_DRAW)
    warmup = n_chains * n_warmup * 8 * n_params
    available = physical_memory()
    if kept + warmup > available:
        culprit, value = ("n_draws", n_draws) if kept >= warmup else ("n_warmup", n_warmup)
        raise ValueError(
            f"{culprit}={value:,}" + (f" with n_chains={n_chains}" if n_chains != 1 else "")
            + " asks for about "
            f"{(kept + warmup) / 2**30:,.1f} GiB of draws, more than this machine's "
            f"{available / 2**30:,.1f} GiB of memory. Keep fewer draws (a larger thin keeps "
            f"fewer of the iterations).")


#: The share of physical memory the dense (d, d) matrices of one pass may take (a few copies:
#: one a thread, and their running sum).
DENSE_MATRIX_MEMORY_SHARE = 0.5


def check_dense_matrix(n, what):
    """A ``ValueError`` naming ``what`` when ``n`` x ``n`` float64 matrices, one per thread
    of a pass plus their sum, would take more than :data:`DENSE_MATRIX_MEMORY_SHARE` of this
    machine's memory (instead of an allocation that fails late or swaps)."""
    from ._passes import pass_threads

    needed = 8.0 * n * n * (pass_threads() + 2)
    available = DENSE_MATRIX_MEMORY_SHARE * physical_memory()
    if needed > available:
        raise ValueError(
            f"{what} is a dense {n:,} x {n:,} matrix: with one copy per thread it needs about "
            f"{needed / 2**30:,.1f} GiB, more than {available / 2**30:,.1f} GiB (half of this "
            f"machine's memory), for {n:,} parameters. Use acceptance='metropolis' (with "
            f"proposal 'hmc', whose preconditioner is then diagonal), or fewer features.")


def physical_memory():
    """Bytes of physical memory (infinity where the platform does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return float("inf")
