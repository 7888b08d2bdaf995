"""The posterior samples container, chain-major as ArviZ expects."""
import inspect

import numpy as np


class Posterior:
    """Posterior draws and per-draw statistics of several chains.

    Parameters
    ----------
    draws : dict of str to ndarray of shape ``(n_chains, n_draws, *shape)``
        The sampled quantities (e.g. ``coef``, ``intercept``).
    sample_stats : dict of str to ndarray of shape (n_chains, n_draws)
        Per-draw statistics, named as ArviZ does where a name exists. A fit keeps one draw
        every ``thin`` iterations; each statistic says how it treats them:

        - ``lp``: the log posterior at the draw (NaN where the test never computes it;
          with Firefly, the log pseudo-posterior);
        - ``acceptance_rate``: the fraction of the draw's ``thin`` iterations that
          accepted;
        - ``n_data_read``: the rows (with Firefly, likelihood queries) the acceptance
          tests read in those iterations, summed, so that its cumulative sum is the data
          read so far;
        - ``rows_per_iteration``: ``n_data_read / thin``, the mean per iteration (a test's
          cost, as the papers count it);
        - ``seconds``: the chain's cumulative wall time;
        - ``n_bright`` (Firefly only): the bright points at the draw.

    Examples
    --------
    >>> import numpy as np
    >>> from skbayes_mh.posterior import Posterior
    >>> p = Posterior({"coef": np.zeros((2, 5, 3))}, {"n_data_read": np.ones((2, 5))})
    >>> p.n_chains, p.n_draws, p["coef"].shape, "coef" in p
    (2, 5, (2, 5, 3), True)
    >>> p
    Posterior(2 chains x 5 draws; draws: coef (3,); sample_stats: n_data_read)
    """

    def __init__(self, draws, sample_stats):
        self.draws = {name: np.asarray(value) for name, value in draws.items()}
        self.sample_stats = {name: np.asarray(value) for name, value in sample_stats.items()}
        shapes = {value.shape[:2] for value in [*self.draws.values(), *self.sample_stats.values()]}
        if len(shapes) != 1:
            raise ValueError(f"all arrays must share (n_chains, n_draws); got {shapes}.")
        self.n_chains, self.n_draws = shapes.pop()

    def __getitem__(self, name):
        if name in self.draws:
            return self.draws[name]
        if name in self.sample_stats:
            return self.sample_stats[name]
        raise KeyError(f"{name!r} is neither a posterior variable ({', '.join(self.draws)}) nor a "
                       f"sample statistic ({', '.join(self.sample_stats)}).")

    def __contains__(self, name):
        return name in self.draws or name in self.sample_stats

    def get(self, name, discard=0, thin=1, flat=False):
        """Draws of ``name`` after discarding ``discard`` per chain and keeping every
        ``thin``-th.

        Parameters
        ----------
        name : str
            A posterior variable or a sample statistic.
        discard : int, default=0
            Draws left out at the start of each chain.
        thin : int, default=1
            Keep every ``thin``-th of the remaining draws.
        flat : bool, default=False
            Whether to merge the chains into one leading axis.

        Returns
        -------
        ndarray
            Of shape ``(n_chains, n_kept, *shape)``, or ``(n_chains * n_kept, *shape)``
            chain by chain when ``flat``; ``n_kept`` draws per chain.
        """
        values = self[name][:, discard::thin]
        return values.reshape(-1, *values.shape[2:]) if flat else values

    def to_dict(self):
        """``{"posterior": {...}, "sample_stats": {...}}`` of plain arrays."""
        return {"posterior": dict(self.draws), "sample_stats": dict(self.sample_stats)}

    def to_arviz(self, *, dims=None, coords=None, **groups):
        """An ``arviz.InferenceData`` (needs the optional dependency ArviZ), so that
        ``arviz.summary`` gives R-hat and effective sample sizes.

        Parameters
        ----------
        dims : dict of str to list of str, default=None
            Per posterior variable, the names of its parameter axes (ArviZ's ``dims``);
            an axis without a name is ArviZ's ``<variable>_dim_<axis>``.
        coords : dict of str to sequence, default=None
            Labels along named axes (ArviZ's ``coords``); an axis without labels is
            numbered from 0.
        **groups : dict of str to ndarray
            More groups by name (``observed_data``, ``constant_data``, ``log_likelihood``,
            ``posterior_predictive``). Their variable ``y`` and the first axis of ``X`` (after
            chain and draw where present) share the dimension ``row``.
        """
        try:
            import arviz
        except ImportError as error:
            raise ImportError("to_arviz needs ArviZ: pip install 'skbayes-mh[arviz]'") from error
        dims = {"y": ["row"], "X": ["row", "feature"], **(dims or {})}
        coords = {name: list(labels) for name, labels in (coords or {}).items()}
        everything = {"posterior": dict(self.draws), "sample_stats": dict(self.sample_stats),
                      **groups}
        first = next(iter(inspect.signature(arviz.from_dict).parameters))
        if first == "posterior":  # ArviZ before 1.0: one keyword per group
            return arviz.from_dict(**everything, dims=dims, coords=coords)
        # ArviZ 1.0: a dict of groups
        return arviz.from_dict(everything, dims=dims, coords=coords)

    def summary(self, *, quantiles=(0.05, 0.5, 0.95), as_frame="auto", coords=None,
                exclude=(), convergence=None):
        """Mean, sd, quantiles, Monte Carlo standard errors, bulk and tail ESS and R-hat of
        every scalar parameter (the table of ``arviz.summary``, without ArviZ).

        Parameters
        ----------
        quantiles : sequence of float, default=(0.05, 0.5, 0.95)
            Posterior quantiles to report, each in (0, 1): a column each, named in percent.
        as_frame : "auto" or bool, default="auto"
            ``True``: a ``pandas.DataFrame`` (pandas is needed); ``False``: a
            :class:`PosteriorSummary`, a plain table that prints itself; ``"auto"``: a
            DataFrame when pandas can be imported, a :class:`PosteriorSummary` otherwise.
        coords : dict of str to list of sequences, default=None
            Per variable, the labels along each of its parameter axes (e.g. ``{"coef":
            [feature_names]}``); an axis without labels is numbered from 0.
        exclude : sequence of str, default=()
            Variables to leave out (e.g. an intercept fixed at 0).
        convergence : dict, default=None
            ``{"r_hat": {variable: array}, "ess_bulk": ..., "ess_tail": ...}`` already
            computed (a fit's ``diagnostics_``); None: computed here.

        Returns
        -------
        PosteriorSummary or pandas.DataFrame
            One row per scalar parameter, labelled ``name`` or ``name[label, ...]``;
            columns ``mean``, ``sd``, the quantiles (``5%``, ``50%``, ``95%``),
            ``mcse_mean``, ``mcse_sd``, ``ess_bulk``, ``ess_tail``, ``r_hat``.

        Examples
        --------
        >>> import numpy as np
        >>> from skbayes_mh.posterior import Posterior
        >>> rng = np.random.default_rng(0)
        >>> p = Posterior({"coef": rng.normal(size=(4, 500, 2))}, {})
        >>> table = p.summary(coords={"coef": [["age", "dose"]]}, as_frame=False)
        >>> table.index
        ['coef[age]', 'coef[dose]']
        >>> table.columns[:5]
        ['mean', 'sd', '5%', '50%', '95%']
        >>> bool(np.all(np.abs(table["mean"]) < 0.1))
        True
        """
        from .diagnostics import convergence_statistics, mcse_mean, mcse_sd

        quantiles = check_quantiles(quantiles)
        use_pandas = _checked_as_frame(as_frame)
        coords, exclude = dict(coords or {}), set(exclude)
        unknown = (set(coords) | exclude) - set(self.draws)
        if unknown:
            raise ValueError(f"no posterior variable named {sorted(unknown)}; the variables "
                             f"are {list(self.draws)}.")
        quantile_names = [f"{100 * q:g}%" for q in quantiles]
        if len(set(quantile_names)) < len(quantile_names):
            raise ValueError(f"quantiles must differ from each other; got {quantiles.tolist()}.")
        columns = ["mean", "sd", *quantile_names, "mcse_mean", "mcse_sd", "ess_bulk",
                   "ess_tail", "r_hat"]
        index, blocks = [], []
        for name, draws in self.draws.items():
            if name in exclude:
                continue
            draws = np.asarray(draws, dtype=np.float64)
            shape = draws.shape[2:]
            index += _parameter_labels(name, shape, coords.get(name))
            if convergence is None:
                r_hat, bulk, tail = convergence_statistics(draws)
            else:
                r_hat, bulk, tail = (np.asarray(convergence[key][name])
                                     for key in ("r_hat", "ess_bulk", "ess_tail"))
            flat = draws.reshape(draws.shape[0] * draws.shape[1], -1)
            with np.errstate(all="ignore"):
                blocks.append(np.column_stack([
                    flat.mean(axis=0), flat.std(axis=0),
                    *np.quantile(flat, quantiles, axis=0),
                    np.ravel(mcse_mean(draws)), np.ravel(mcse_sd(draws)),
                    np.ravel(bulk), np.ravel(tail), np.ravel(r_hat)]))
        values = np.concatenate(blocks) if blocks else np.empty((0, len(columns)))
        table = PosteriorSummary(index, columns, values)
        return table.to_dataframe() if use_pandas else table

    def __repr__(self):
        draws = ", ".join(f"{k} {v.shape[2:]}" for k, v in self.draws.items())
        stats = ", ".join(self.sample_stats)
        return (f"Posterior({self.n_chains} chains x {self.n_draws} draws; draws: {draws}; "
                f"sample_stats: {stats})")


def check_quantiles(quantiles):
    """``quantiles`` as a 1-D float array, each in (0, 1).

    Parameters
    ----------
    quantiles : float or sequence of float
        Probabilities, each in (0, 1); at least one.

    Returns
    -------
    ndarray of shape (n_quantiles,)

    Raises
    ------
    ValueError
        If ``quantiles`` is empty, not 1-D, or holds a value outside (0, 1).
    """
    values = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    if values.ndim != 1 or values.size == 0 or not np.all((values > 0) & (values < 1)):
        raise ValueError(f"quantiles must be numbers in (0, 1); got {quantiles!r}.")
    return values


def _checked_as_frame(as_frame):
    """Whether a summary is a DataFrame: ``as_frame`` checked, ``"auto"`` resolved."""
    auto = isinstance(as_frame, str) and as_frame == "auto"
    if not (auto or isinstance(as_frame, (bool, np.bool_))):
        raise ValueError(f"as_frame must be 'auto', True or False; got {as_frame!r}.")
    if not (auto or as_frame):
        return False
    try:
        import pandas  # noqa: F401
    except ImportError as error:
        if auto:
            return False
        raise ImportError("summary(as_frame=True) needs pandas; as_frame=False gives a "
                          "plain table without it.") from error
    return True


def _axis_labels(name, shape, labels):
    """Each axis's labels as strings: ``labels[axis]``, numbered from 0 where None or
    missing."""
    labels = [] if labels is None else list(labels)
    axes = []
    for axis, size in enumerate(shape):
        given = labels[axis] if axis < len(labels) and labels[axis] is not None else None
        if given is not None and len(given) != size:
            raise ValueError(f"{name}: {len(given)} labels for an axis of {size} values.")
        axes.append([str(v) for v in (range(size) if given is None else given)])
    return axes


#: Variables whose labelled parameters are named by a pattern of their label instead of
#: ``name[label]``: group-level effects and their sds as brms and Bambi name them
#: (``intercept|carrier[AA]``, ``sd(intercept|carrier)``).
LABEL_PATTERNS = {"group_effects": "{}", "group_sd": "sd({})", "group_correlation": "cor({})"}


def _label(name, axes, index, pattern=None):
    """``name[a, b]`` at ``index`` (``pattern`` filled with ``a, b`` where given),
    ``name`` for a scalar."""
    if not index:
        return name
    labels = ", ".join(axes[a][i] for a, i in enumerate(index))
    return pattern.format(labels) if pattern is not None else f"{name}[{labels}]"


def _pattern(name, labels):
    """:data:`LABEL_PATTERNS`' pattern for ``name`` where its axes are labelled."""
    return LABEL_PATTERNS.get(name) if labels is not None else None


def _parameter_labels(name, shape, labels):
    """``name[a, b]`` for every index of a variable of parameter shape ``shape`` (C order),
    each axis labelled by ``labels[axis]`` (numbered from 0 where None or missing); a
    labelled variable of :data:`LABEL_PATTERNS` by its pattern."""
    axes = _axis_labels(name, shape, labels)
    pattern = _pattern(name, labels)
    return [_label(name, axes, index, pattern) for index in np.ndindex(*shape)]


def _parameter_label(name, shape, labels, flat_index):
    """The label :func:`_parameter_labels` gives the parameter at ``flat_index``."""
    return _label(name, _axis_labels(name, shape, labels),
                  np.unravel_index(flat_index, shape) if shape else (), _pattern(name, labels))


class PosteriorSummary:
    """A posterior summary: one row per scalar parameter, printed as a plain table (four
    significant digits, effective sample sizes as whole numbers, R-hat to three decimals).

    Parameters
    ----------
    index : list of str
        The parameters' labels, one per row.
    columns : list of str
        The statistics, one per column.
    values : array-like of shape (n_parameters, n_columns)
        The statistics of each parameter (any array of as many values is reshaped).

    Examples
    --------
    >>> import numpy as np
    >>> from skbayes_mh.posterior import PosteriorSummary
    >>> table = PosteriorSummary(["a", "b"], ["mean", "ess_bulk", "r_hat"],
    ...                          np.array([[0.5, 812.0, 1.0012], [-0.001234, 790.4, 1.003]]))
    >>> print(table)
            mean  ess_bulk  r_hat
    a        0.5       812  1.001
    b  -0.001234       790  1.003
    >>> table["ess_bulk"].tolist()
    [812.0, 790.4]
    """

    #: Columns printed as whole numbers.
    COUNT_COLUMNS = ("ess_bulk", "ess_tail")

    def __init__(self, index, columns, values):
        self.index, self.columns = list(index), list(columns)
        self.values = np.asarray(values, dtype=np.float64).reshape(len(self.index),
                                                                    len(self.columns))

    def __getitem__(self, column):
        """The column ``column``: ndarray of shape (n_parameters,)."""
        if column not in self.columns:
            raise KeyError(f"no column {column!r}; the columns are {self.columns}.")
        return self.values[:, self.columns.index(column)]

    def __len__(self):
        return len(self.index)

    def to_dataframe(self):
        """The table as a ``pandas.DataFrame`` (needs pandas), indexed by parameter."""
        try:
            import pandas
        except ImportError as error:
            raise ImportError("to_dataframe needs pandas.") from error
        return pandas.DataFrame(self.values, index=pandas.Index(self.index, name="parameter"),
                                columns=self.columns)

    def _cell(self, column, value):
        if np.isnan(value):
            return "nan"
        if column in self.COUNT_COLUMNS:
            return f"{value:.0f}"
        return f"{value:.3f}" if column == "r_hat" else f"{value:.4g}"

    def __str__(self):
        cells = [[self._cell(c, v) for c, v in zip(self.columns, row)] for row in self.values]
        label_width = max([len(label) for label in self.index], default=0)
        widths = [max([len(c), *(len(row[k]) for row in cells)])
                  for k, c in enumerate(self.columns)]
        lines = [" " * label_width + "".join(f"  {c:>{w}}" for c, w in
                                             zip(self.columns, widths))]
        lines += [f"{label:<{label_width}}" + "".join(f"  {v:>{w}}" for v, w in
                                                      zip(row, widths))
                  for label, row in zip(self.index, cells)]
        return "\n".join(lines)

    __repr__ = __str__
