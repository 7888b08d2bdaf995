"""Figures of the papers for fitted estimators and :func:`~skbayes_mh.sample` results.

The cost figures (rows read per test, accuracy or risk against the data read, Firefly's
bright counts) are drawn here with matplotlib; trace and rank plots are ArviZ's, fed by
:meth:`to_arviz`. matplotlib is optional: ``pip install 'skbayes-mh[plot]'`` (and
``'skbayes-mh[arviz]'`` for trace and rank plots).

Every function takes ``ax=None`` (new axes on a new figure) or the axes to draw on, and
returns the axes, as scikit-learn's displays and ArviZ do.
"""
from collections.abc import Mapping

import numpy as np

from ._validation import checked_reference_proba

__all__ = ["plot_bright_counts", "plot_data_read", "plot_minibatch_sizes", "plot_rank",
           "plot_trace"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError("skbayes_mh.plotting needs matplotlib: "
                          "pip install 'skbayes-mh[plot]'") from error
    return plt


def _arviz():
    try:
        import arviz
    except ImportError as error:
        raise ImportError("trace and rank plots are ArviZ's: "
                          "pip install 'skbayes-mh[arviz]'") from error
    return arviz


def _axes(ax):
    return _pyplot().subplots()[1] if ax is None else ax


def _labelled(fits, what):
    """``fits`` as ``{label: fit}``: a mapping is kept, a single fit gets no label."""
    if isinstance(fits, Mapping):
        if not fits:
            raise ValueError(f"{what}: the mapping of fits is empty.")
        return dict(fits)
    return {None: fits}


def _is_fitted_estimator(fit):
    return hasattr(fit, "posterior_")


def _rows_read_per_iteration(fit):
    """Rows (or likelihood queries) read per iteration, flat.

    A :class:`~skbayes_mh.SampleResult` keeps every iteration. A fitted estimator keeps
    a draw every ``thin_`` iterations, with ``rows_per_iteration``, the mean over them
    (fit with ``thin=1`` for the per-test sizes)."""
    if _is_fitted_estimator(fit):
        return np.asarray(fit.posterior_["rows_per_iteration"], dtype=np.float64).ravel()
    if hasattr(fit, "n_data_read"):
        return np.asarray(fit.n_data_read, dtype=np.float64).ravel()
    values = np.asarray(fit)
    if values.dtype.kind not in "iuf":
        raise TypeError("expected a fitted estimator, a SampleResult or an array of rows read "
                        f"per test; got {type(fit).__name__}.")
    return values.astype(np.float64).ravel()


def plot_minibatch_sizes(fits, *, bins=30, ax=None):
    """Histogram of the rows each acceptance test read, on log-log axes.

    The figure of Seita et al. (their Figures 2 and 4) and Korattikara et al.: a
    subsampling test that decides most steps on its first minibatch has its mass at the
    left; one that often reads the whole data set has a spike at ``N``.

    Parameters
    ----------
    fits : estimator, SampleResult, array-like or mapping of str to these
        A fitted estimator (``posterior_["rows_per_iteration"]``), a result of
        :func:`~skbayes_mh.sample` (``n_data_read``), or rows read per test of shape
        ``(n_iterations,)`` or ``(n_chains, n_draws)``. A mapping draws one histogram per
        entry, labelled by its key, on shared bins. An estimator stores one draw per
        ``thin_`` iterations: its values are the mean rows read per iteration over them
        (``rows_per_iteration``).
    bins : int, default=30
        Number of logarithmically spaced bins.
    ax : matplotlib Axes, default=None
        The axes to draw on; None: new axes on a new figure.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skbayes_mh.plotting import plot_minibatch_sizes
    >>> ax = plot_minibatch_sizes({"test": np.array([100, 100, 300, 1000])})
    >>> ax.get_xscale(), ax.get_yscale()
    ('log', 'log')
    """
    if not isinstance(bins, (int, np.integer)) or isinstance(bins, bool) or bins < 1:
        raise ValueError(f"bins must be a positive integer; got {bins!r}.")
    fits = _labelled(fits, "plot_minibatch_sizes")
    reads = {label: _rows_read_per_iteration(fit) for label, fit in fits.items()}
    for label, read in reads.items():
        if read.size == 0 or not np.all(np.isfinite(read)) or np.any(read < 1):
            raise ValueError(f"rows read{'' if label is None else f' ({label})'} must be "
                             f"finite and at least 1 per test.")
    low = min(read.min() for read in reads.values())
    high = max(read.max() for read in reads.values())
    edges = np.logspace(np.log10(low), np.log10(high * 1.0001 + 1e-9), bins + 1)
    ax = _axes(ax)
    for label, read in reads.items():
        ax.hist(read, bins=edges, histtype="stepfilled" if len(reads) == 1 else "step",
                linewidth=1.5, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows read per test")
    ax.set_ylabel("tests")
    if len(reads) > 1:
        ax.legend()
    return ax


def _running_mean(probabilities):
    """Running mean over the draw axis (axis 1) of ``(n_chains, n_draws, ...)``."""
    counts = np.arange(1, probabilities.shape[1] + 1)
    return np.cumsum(probabilities, axis=1) / counts.reshape(-1, *[1] * (probabilities.ndim - 2))


def _curve_of_estimator(estimator, X, y, reference_proba):
    """(cumulative rows read, accuracy or risk) of a fitted classifier, mean over chains."""
    cumulative = np.cumsum(estimator.posterior_["n_data_read"], axis=1).mean(axis=0)
    if y is None:
        return cumulative, estimator.predictive_mean_risk(X, reference_proba).risk.mean(axis=0)
    X, eta = estimator._eta_draws(X)
    y = _checked_labels(y, X.shape[0], estimator.classes_)
    # (chain, draw, row, class)
    running = _running_mean(estimator._per_draw(estimator._probabilities(eta)))
    predicted = estimator.classes_[np.argmax(running, axis=-1)]
    return cumulative, np.mean(predicted == y, axis=-1).mean(axis=0)


def _curve_of_result(result, X, y, reference_proba, draw_proba):
    """(cumulative rows read, accuracy or risk) of a :func:`~skbayes_mh.sample` result whose
    draws give probabilities of class 1 through ``draw_proba``."""
    X = np.asarray(X, dtype=np.float64)
    probabilities = np.asarray(draw_proba(result.draws, X), dtype=np.float64)
    if probabilities.shape != (result.draws.shape[0], X.shape[0]):
        raise ValueError(f"draw_proba must return (n_draws, n_rows) = "
                         f"{(result.draws.shape[0], X.shape[0])} probabilities of class 1; got "
                         f"shape {probabilities.shape}.")
    running = _running_mean(probabilities[None])[0]  # (draw, row)
    cumulative = np.cumsum(result.n_data_read)
    if y is None:
        reference = checked_reference_proba(reference_proba, X.shape[0])
        return cumulative, np.mean((running - reference) ** 2, axis=1)
    y = _checked_labels(y, X.shape[0], np.array([0, 1]))
    return cumulative, np.mean((running > 0.5) == y, axis=1)


def _checked_labels(y, n_rows, classes):
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_rows:
        raise ValueError(f"y should have shape ({n_rows},) to match X; got {y.shape}.")
    unknown = np.setdiff1d(y, classes)
    if unknown.size:
        raise ValueError(f"y holds labels outside the classes {classes.tolist()}: "
                         f"{unknown[:5].tolist()}.")
    return y


def plot_data_read(fits, X, y=None, *, reference_proba=None, draw_proba=None, ax=None):
    """Accuracy, or predictive-mean risk, of the running posterior mean against the data
    read: the cost figure of Korattikara et al. and Seita et al.

    After ``t`` draws of a chain, its predictive mean is the average of the first ``t``
    draws' predictive probabilities; the x-axis is the rows the acceptance tests read to
    get there (warm-up excluded). For an estimator, the curve is the mean over chains.

    Parameters
    ----------
    fits : fitted classifier, SampleResult or mapping of str to these
        :class:`~skbayes_mh.MinibatchMHLogisticRegression` or
        :class:`~skbayes_mh.FireflySoftmaxClassifier` (accuracy), the logistic regression
        (risk), or a :func:`~skbayes_mh.sample` result of a binary model with
        ``draw_proba``. A mapping draws one labelled curve per entry.
    X : array-like of shape (n_rows, n_features)
        Held-out rows.
    y : array-like of shape (n_rows,), default=None
        Their labels (0 and 1 for a ``sample`` result): the y-axis is the accuracy.
    reference_proba : array-like of shape (n_rows,) or (n_rows, 2), default=None
        Reference probabilities of class 1 (e.g. from a long exact run) instead of ``y``:
        the y-axis is the predictive-mean risk (as
        :meth:`~skbayes_mh.MinibatchMHLogisticRegression.predictive_mean_risk`) on a log
        scale. Give exactly one of ``y`` and ``reference_proba``.
    draw_proba : callable, default=None
        For ``sample`` results: ``draw_proba(draws, X)`` returns the probability of class 1
        of every draw ``(n_draws, d)`` and row, ``(n_draws, n_rows)``.
    ax : matplotlib Axes, default=None
        The axes to draw on; None: new axes on a new figure.

    Returns
    -------
    matplotlib Axes
    """
    if (y is None) == (reference_proba is None):
        raise ValueError("give exactly one of y (accuracy) and reference_proba (risk).")
    fits = _labelled(fits, "plot_data_read")
    for label, fit in fits.items():
        named = "" if label is None else f" ({label})"
        if _is_fitted_estimator(fit):
            if reference_proba is not None and not hasattr(fit, "predictive_mean_risk"):
                raise TypeError(f"{type(fit).__name__} has no predictive_mean_risk: plot its "
                                f"accuracy (y=...) instead.")
            if y is not None and not hasattr(fit, "classes_"):
                raise TypeError(f"{type(fit).__name__} is not a classifier: accuracy needs "
                                f"classes.")
        elif hasattr(fit, "draws") and hasattr(fit, "n_data_read"):
            if not callable(draw_proba):
                raise TypeError(f"a sample result{named} needs draw_proba(draws, X), the "
                                f"probabilities of class 1 of every draw.")
        else:
            raise TypeError(f"plot_data_read needs fitted classifiers or sample results; got "
                            f"{type(fit).__name__}{named}.")
    curves = {label: (_curve_of_estimator(fit, X, y, reference_proba)
                      if _is_fitted_estimator(fit)
                      else _curve_of_result(fit, X, y, reference_proba, draw_proba))
              for label, fit in fits.items()}
    ax = _axes(ax)
    for label, (cumulative, values) in curves.items():
        ax.plot(cumulative, values, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("rows read (cumulative, per chain)")
    if y is None:
        ax.set_yscale("log")
        ax.set_ylabel("risk of the predictive mean")
    else:
        ax.set_ylabel("accuracy of the predictive mean")
    if len(fits) > 1:
        ax.legend()
    return ax


def plot_bright_counts(fit, *, n_rows=None, ax=None):
    """Firefly Monte Carlo's bright points per draw, one line per chain (the trace of
    Maclaurin and Adams' Figure 3).

    Parameters
    ----------
    fit : fitted estimator or Posterior
        Sampled with ``acceptance="firefly"`` (``posterior_["n_bright"]``).
    n_rows : int, default=None
        The data set's size: with it, the y-axis is the fraction of rows that are bright
        (a fitted estimator's ``bright_fraction_`` is its mean).
    ax : matplotlib Axes, default=None
        The axes to draw on; None: new axes on a new figure.

    Returns
    -------
    matplotlib Axes
    """
    if n_rows is not None and (not isinstance(n_rows, (int, np.integer)) or n_rows < 1):
        raise ValueError(f"n_rows must be a positive integer; got {n_rows!r}.")
    posterior = fit.posterior_ if _is_fitted_estimator(fit) else fit
    if not hasattr(posterior, "sample_stats") or "n_bright" not in posterior.sample_stats:
        raise ValueError("no bright counts: fit with acceptance='firefly' (posterior_ has "
                         "no 'n_bright' sample statistic).")
    bright = np.asarray(posterior["n_bright"], dtype=np.float64)
    ax = _axes(ax)
    scale = 1.0 if n_rows is None else 1.0 / n_rows
    for chain, counts in enumerate(bright):
        ax.plot(np.arange(1, counts.size + 1), counts * scale, linewidth=0.8,
                label=f"chain {chain}")
    ax.set_xlabel("draw")
    ax.set_ylabel("bright rows" if n_rows is None else "fraction of rows bright")
    if bright.shape[0] > 1:
        ax.legend()
    return ax


def _inference_data(fit):
    if hasattr(fit, "to_arviz"):
        return fit.to_arviz()
    return fit


def plot_trace(fit, **kwargs):
    """ArviZ's trace plot of a fitted estimator's (or a Posterior's) draws.

    Parameters
    ----------
    fit : fitted estimator, Posterior or ArviZ data
        Anything with a ``to_arviz()`` method is converted by it; anything else is passed
        to ArviZ as it is.
    **kwargs
        Passed to ``arviz.plot_trace`` (e.g. ``var_names``).

    Returns
    -------
    What ``arviz.plot_trace`` returns.
    """
    return _arviz().plot_trace(_inference_data(fit), **kwargs)


def plot_rank(fit, **kwargs):
    """ArviZ's rank plot (Vehtari et al. 2021): uniform ranks per chain when the chains
    mix.

    Parameters
    ----------
    fit : fitted estimator, Posterior or ArviZ data
        Anything with a ``to_arviz()`` method is converted by it; anything else is passed
        to ArviZ as it is.
    **kwargs
        Passed to ``arviz.plot_rank`` (e.g. ``var_names``).

    Returns
    -------
    What ``arviz.plot_rank`` returns.
    """
    return _arviz().plot_rank(_inference_data(fit), **kwargs)
