"""Group-level ("random") effects: intercepts and slopes that vary by the levels of grouping
columns of ``X``, each term's effects drawn from a normal of a learned sd.

An estimator's ``group_effects`` names the grouping columns of ``X`` (labels, passed
through a ``ColumnTransformer`` as they are: strings, integers, categories) and, per
grouping column, the numeric columns whose slopes vary by group::

    group_effects=["carrier"]                        # an intercept per carrier
    group_effects={"carrier": ["distance"]}          # ... and a slope of distance per carrier
    group_effects={"carrier": [], "airport": []}     # crossed (or nested) groupings

Columns are named as in a ``DataFrame`` ``X`` or given by position. Each term (an
intercept or one slope, per grouping) has effects ``u_g ~ N(0, sd^2)``, one per level
seen in ``fit``, and its ``sd`` a half-normal prior whose scale is that of a weight of the
term's variable (``prior_scale``, autoscaled; for an intercept term the scale of a
standardised feature's weight).

The model sees the effects as weights of extra columns (a level's indicator, or the
indicator times the slope's variable), in a CSR block beside the numeric columns, plus one
column of zeros per term whose weight is the log of the term's sd (the likelihood does not
read it; the prior ties the term's effects to it: ``_kernels/priors.py``). The sampler's
start and shape come from the empirical-Bayes point
(``models/_base.LinearModel._group_laplace``), since the joint density of effects and sd
has no maximum. The effects are sampled centred (as themselves) where the data inform
each of them; a term whose effects they barely inform (``gamma / m`` below
``models._base.GROUP_RESCALE_MAX_DETERMINED`` at that point: few rows a group, or an sd
near zero) has its sd marked ``GROUP_SD_RESCALED``, and the sampler then runs Hamiltonian
paths with its effects non-centred and adds moves that rescale its sd and effects
together (``_kernels/mh.py``: ``_hmc_move``, ``_rescale_proposal``), both exact. A term
whose effects the data inform but whose evidence over no effects at all is weak
(``models._base.group_evidence`` below ``GROUP_RESCALE_MIN_EVIDENCE``: few groups, whose
sd's posterior reaches toward 0) keeps centred paths and takes the rescaling moves too
(``GROUP_SD_INTERWOVEN``).

With ``group_correlation`` (the default), the terms of a grouping with a slope are
correlated, as lme4's and brms' ``(1 + x | g)``: each level's effects are one
multivariate normal of the terms' sds and a learned correlation matrix under an LKJ prior
(``_kernels/priors.py``), sampled as ``k (k - 1) / 2`` more coordinates (the weights of
more columns of zeros, after the sds') and reported as ``group_correlation``, the
correlations ``cor(intercept,distance|carrier)``. Without it the terms are independent
(brms' ``(1 + x || g)``).

``predict`` for a level never seen in ``fit`` uses the population level plus one new
group's effect per stored draw, ``u ~ N(0, diag(sd) R diag(sd))`` at that draw's sds and
correlations (drawn from a fixed seed: ``predict`` stays deterministic): the posterior
predictive of a new group.
"""
import numbers

import numpy as np
import scipy.sparse as sp

from .._data import kernel_csr
from .._kernels.priors import MAX_CORRELATED_TERMS
from ..models._prior import BASE, GROUP_CORRELATION, GROUP_SD, BuiltinPrior
from ._inputs import AUTO_SPARSE_DENSITY

#: The seed of the new-group effects that ``predict`` draws for unseen levels.
NEW_GROUP_SEED = 20261203


def check_group_effects(group_effects):
    """``group_effects`` as ``{grouping column: [slope columns]}`` (an ordered dict), or
    None; a ``TypeError``/``ValueError`` names what is wrong."""
    if group_effects is None:
        return None
    if isinstance(group_effects, (str, numbers.Integral)):
        group_effects = [group_effects]
    if isinstance(group_effects, dict):
        terms = dict(group_effects)
    else:
        try:
            terms = {column: [] for column in group_effects}
        except TypeError:
            raise TypeError(f"group_effects must be a list of grouping columns or a dict of "
                            f"grouping column to slope columns; got {group_effects!r}.") from None
    if not terms:
        raise ValueError("group_effects names no grouping column; pass None for none.")
    checked = {}
    for column, slopes in terms.items():
        _check_key(column, "grouping column")
        if slopes is None:
            slopes = []
        if isinstance(slopes, (str, numbers.Integral)):
            slopes = [slopes]
        slopes = list(slopes)
        for slope in slopes:
            _check_key(slope, f"slope column of {column!r}")
        if len(set(slopes)) < len(slopes):
            raise ValueError(f"group_effects[{column!r}] lists a slope column twice: {slopes}.")
        checked[column] = slopes
    return checked


def _check_key(key, what):
    if isinstance(key, bool) or not isinstance(key, (str, numbers.Integral)):
        raise TypeError(f"A {what} in group_effects must be a column name (str) or position "
                        f"(int); got {key!r}.")


class GroupTerms:
    """The grouping of one fit: where the grouping and slope columns are in ``X``, the
    levels seen, and the design of the effects' columns.

    Parameters
    ----------
    group_effects : dict
        From :func:`check_group_effects`.
    X : array-like or DataFrame of shape (n_samples, n_columns)
        ``fit``'s ``X``, grouping columns included.
    correlated : bool
        Whether the terms of a grouping with slopes are correlated.
    """

    def __init__(self, group_effects, X, correlated=True):
        names = _column_names(X)
        n_columns = _n_columns(X)
        self.n_columns = n_columns
        self.column_names = names
        position = {}
        for column in group_effects:
            position[column] = self._position(column, names, n_columns, "grouping column")
        self.groupings = [position[column] for column in group_effects]
        if len(set(self.groupings)) < len(self.groupings):
            raise ValueError("group_effects names one grouping column twice.")
        self.numeric = [j for j in range(n_columns) if j not in set(self.groupings)]
        self.slopes = []
        for column, slopes in group_effects.items():
            positions = [self._position(s, names, n_columns, f"slope column of {column!r}")
                         for s in slopes]
            for s, p in zip(slopes, positions):
                if p in self.groupings:
                    raise ValueError(f"The slope column {s!r} of {column!r} is a grouping "
                                     f"column; slopes vary along numeric columns.")
            self.slopes.append([self.numeric.index(p) for p in positions])
        self.labels = [self._label(j) for j in self.groupings]
        self.levels = None
        self.correlated = bool(correlated)
        for column, slopes in zip(group_effects, self.slopes):
            if self.correlated and len(slopes) + 1 > MAX_CORRELATED_TERMS:
                raise ValueError(f"group_effects[{column!r}] has {len(slopes) + 1} terms; "
                                 f"their correlation is learned for at most "
                                 f"{MAX_CORRELATED_TERMS} (pass group_correlation=False for "
                                 f"independent terms).")

    @staticmethod
    def _position(column, names, n_columns, what):
        if isinstance(column, str):
            if names is None or column not in list(names):
                raise ValueError(f"The {what} {column!r} in group_effects is not a column of "
                                 f"X" + ("" if names is not None else
                                         " (X has no column names: give positions)") + ".")
            return list(names).index(column)
        p = int(column)
        if not -n_columns <= p < n_columns:
            raise ValueError(f"The {what} {column} in group_effects is out of range for X "
                             f"with {n_columns} columns.")
        return p % n_columns

    def _label(self, j):
        return str(self.column_names[j]) if self.column_names is not None else f"x{j}"

    # --- X split into numeric columns and labels -----------------------------------------

    def split(self, X):
        """``X``'s numeric columns (as ``X``'s kind: a DataFrame stays one) and each
        grouping column's labels, shape (n_samples,) each."""
        if sp.issparse(X):
            raise TypeError("group_effects needs X as a dense array or a DataFrame (its "
                            "grouping columns hold labels); got a sparse matrix.")
        if _n_columns(X) != self.n_columns:
            raise ValueError(f"X has {_n_columns(X)} columns, but this estimator was fitted "
                             f"with {self.n_columns} (grouping columns included).")
        if hasattr(X, "iloc"):
            labels = [X.iloc[:, j].to_numpy() for j in self.groupings]
            return X.iloc[:, self.numeric], labels
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"Expected a 2-dimensional X; got shape {X.shape}.")
        labels = [X[:, j] for j in self.groupings]
        numeric = X[:, self.numeric]
        if numeric.dtype == object:
            try:
                numeric = numeric.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError("X's columns other than the grouping columns "
                                 f"({', '.join(self.labels)}) must be numeric.") from None
        return numeric, labels

    def fit_levels(self, labels):
        """The levels of each grouping column from ``fit``'s labels (an error for a missing
        label or a single level)."""
        self.levels = []
        for name, values in zip(self.labels, labels):
            missing = np.flatnonzero(_missing(values))
            if missing.size:
                raise ValueError(f"The grouping column {name!r} has a missing label (NaN or "
                                 f"None) in row {missing[0]} ({missing.size} such rows); "
                                 f"give every row a group.")
            try:
                levels = np.unique(values)
            except TypeError:
                kinds = sorted({type(v).__name__ for v in values})
                raise TypeError(f"The grouping column {name!r} mixes labels of types {kinds}, "
                                f"which cannot be sorted; give its labels as one type.") \
                    from None
            if levels.size < 2:
                raise ValueError(f"The grouping column {name!r} has a single group "
                                 f"({levels[0]!r}); a group-level sd needs at least 2.")
            self.levels.append(levels)
        return self

    # --- the effects' columns ------------------------------------------------------------

    @property
    def terms(self):
        """``(grouping index, slope index or None)`` of each term, in column order: per
        grouping its intercept, then its slopes."""
        return [(g, s) for g, slopes in enumerate(self.slopes) for s in [None, *slopes]]

    @property
    def n_effects(self):
        """The effects' columns, shape: sum over terms of the grouping's levels."""
        return sum(self.levels[g].size for g, _ in self.terms)

    @property
    def n_terms(self):
        return len(self.terms)

    @property
    def correlated_groupings(self):
        """The groupings whose terms are correlated: those with a slope, under
        ``correlated``."""
        return [g for g, slopes in enumerate(self.slopes) if self.correlated and slopes]

    @property
    def n_correlations(self):
        """The correlations' coordinates: ``k (k - 1) / 2`` per correlated grouping of ``k``
        terms."""
        return sum(_pairs(len(self.slopes[g]) + 1) for g in self.correlated_groupings)

    def _term_indices(self, g):
        """The indices (in :attr:`terms`) of grouping ``g``'s terms."""
        return [t for t, (h, _) in enumerate(self.terms) if h == g]

    def _indices(self, labels):
        """Each row's level index per grouping, -1 where the level was not seen in fit."""
        out = []
        for levels, values in zip(self.levels, labels):
            values = np.asarray(values)
            try:
                index = np.searchsorted(levels, values)
            except TypeError:
                index = np.array([np.searchsorted(levels, v) if isinstance(
                    v, type(levels[0])) else levels.size for v in values])
            index = np.minimum(index, levels.size - 1)
            seen = levels[index] == values
            out.append(np.where(seen, index, -1))
        return out

    def design(self, numeric, labels, new_columns=False):
        """The effects' columns as CSR ``(n_samples, n_effects + n_terms +
        n_correlations)``: each term's level indicators (times the slope's variable), then
        one column of zeros per term (its sd's log) and per correlation coordinate. With
        ``new_columns``, one more column per term: the indicator of a level unseen in
        ``fit`` (times the slope's variable), for ``predict``."""
        n = numeric.shape[0]
        indices = self._indices(labels)
        blocks, values_of = [], {}
        for g, s in self.terms:
            index = indices[g]
            seen = index >= 0
            if s is None:
                values = np.ones(n)
            else:
                if s not in values_of:
                    column = numeric[:, s]
                    values_of[s] = np.asarray(column.toarray().ravel() if sp.issparse(column)
                                              else column, dtype=np.float64)
                values = values_of[s]
            rows = np.flatnonzero(seen)
            blocks.append(sp.csr_array((values[rows], (rows, index[rows])),
                                       shape=(n, self.levels[g].size)))
        blocks.append(sp.csr_array((n, self.n_terms + self.n_correlations)))
        if new_columns:
            for g, s in self.terms:
                unseen = (indices[g] < 0).astype(np.float64)
                values = unseen if s is None else unseen * values_of[s]
                blocks.append(sp.csr_array(values[:, None]))
        return sp.hstack(blocks, format="csr")

    def augmented(self, numeric, labels, new_columns=False):
        """The model's ``X``: the numeric columns then :meth:`design`'s, as CSR where at
        most ``AUTO_SPARSE_DENSITY`` of its values are non-zero (the rule of
        ``_inputs.sparse_layout``, here without building the dense array first), else a
        dense float64 array."""
        block = self.design(numeric, labels, new_columns)
        n = numeric.shape[0]
        width = numeric.shape[1] + block.shape[1]
        nonzero = (numeric.nnz if sp.issparse(numeric) else np.count_nonzero(numeric)) + block.nnz
        if nonzero <= AUTO_SPARSE_DENSITY * n * width:
            return kernel_csr(sp.hstack([sp.csr_array(numeric), block], format="csr"))
        return np.ascontiguousarray(np.hstack([np.asarray(numeric, dtype=np.float64),
                                               block.toarray()]))

    def extended_summary(self, summary):
        """``fit``'s data summary with the effects' columns: mean 0 and no spread (their
        priors are the group sds'; a centred intercept ignores them)."""
        extra = self.n_effects + self.n_terms + self.n_correlations
        summary = dict(summary)
        for key, value in (("x_mean", 0.0), ("x_std", 1.0), ("x_min", 0.0), ("x_max", 0.0)):
            summary[key] = np.append(np.asarray(summary[key], dtype=np.float64),
                                     np.full(extra, value))
        return summary

    # --- the prior and the posterior's layout --------------------------------------------

    def effect_slices(self, n_numeric):
        """Each term's effects' columns in the model's ``X`` (a slice), and its sd's log
        column."""
        start, out = n_numeric, []
        sd_column = n_numeric + self.n_effects
        for t, (g, _) in enumerate(self.terms):
            size = self.levels[g].size
            out.append((slice(start, start + size), sd_column + t))
            start += size
        return out

    def grouped_prior(self, prior, n_numeric):
        """``prior`` (the estimator's over the model's ``X``) with each term's effects
        under its sd (``scale_of``) and each sd's log under a half-normal of the scale of
        the term's variable's weight (an intercept term: that of a standardised feature's,
        ``prior_scale`` times the outcome's scale)."""
        if prior.n_outputs != 1:
            raise ValueError("group_effects supports models of one linear predictor.")
        scale_of = np.full(prior.n_params, BASE, dtype=np.int64)
        scales = prior.scales.copy()
        slices = self.effect_slices(n_numeric)
        for (effects, sd), (_, s) in zip(slices, self.terms):
            scale_of[effects] = sd
            scale_of[sd] = GROUP_SD
            # The sd column's own weight scale is a constant column's: prior_scale times
            # the outcome's scale; a slope's is its variable's weight's.
            scales[sd] = prior.scales[sd] if s is None else prior.scales[s]
            scales[effects] = scales[sd]
        table = []
        first = n_numeric + self.n_effects + self.n_terms
        for g in self.correlated_groupings:
            members = self._term_indices(g)
            k = len(members)
            scale_of[first:first + _pairs(k)] = GROUP_CORRELATION
            scales[first:first + _pairs(k)] = 1.0
            table += [k, self.levels[g].size, first, *[slices[t][1] for t in members],
                      *[slices[t][0].start for t in members]]
            first += _pairs(k)
        means = prior.means.copy() if prior.means.size else None
        if means is not None:
            means[n_numeric:] = 0.0
        return BuiltinPrior(prior.kind, scales, prior.locations, means, prior.n_outputs,
                            prior.block, prior.intercept, prior.power, prior.learn_scale,
                            scale_of=scale_of, correlations=table or None)

    def term_names(self, feature_names):
        """Each term's name, ``intercept|carrier`` or ``distance|carrier``."""
        return [("intercept" if s is None else str(feature_names[s])) + "|" + self.labels[g]
                for g, s in self.terms]

    def effect_names(self, feature_names):
        """Each effect's name, ``intercept|carrier[AA]``."""
        return [f"{name}[{level}]" for name, (g, _) in zip(self.term_names(feature_names),
                                                          self.terms)
                for level in self.levels[g]]

    def correlation_names(self, feature_names):
        """Each correlation's name, ``intercept,distance|carrier``, in the order of the
        correlation coordinates (per grouping, row by row of its correlation matrix)."""
        names = []
        for g in self.correlated_groupings:
            terms = ["intercept"] + [str(feature_names[s]) for s in self.slopes[g]]
            names += [f"{terms[j]},{terms[i]}|{self.labels[g]}"
                      for i in range(1, len(terms)) for j in range(i)]
        return names

    def correlations_from(self, unconstrained):
        """The correlations ``(..., n_correlations)`` from the sampled coordinates."""
        return self._per_grouping(unconstrained, lambda block, k: _lower(
            _correlation(cholesky_factor(block, k)), k))

    def unconstrained_from(self, correlations):
        """The inverse of :meth:`correlations_from`."""
        return self._per_grouping(correlations, _partial_correlations)

    def _per_grouping(self, values, transform):
        """``values`` ``(..., n_correlations)`` with each correlated grouping's part replaced
        by ``transform(part, k)`` (``k`` its terms)."""
        out, start = np.empty_like(values), 0
        for g in self.correlated_groupings:
            k = len(self.slopes[g]) + 1
            part = slice(start, start + _pairs(k))
            out[..., part] = transform(values[..., part], k)
            start += _pairs(k)
        return out

    def new_group_effects(self, sd_draws, correlation_draws=None):
        """One new group's effect per draw and term, ``(n_draws, n_terms)``: ``sd`` times
        a standard normal from :data:`NEW_GROUP_SEED`, those of a correlated grouping's
        terms first multiplied by the Cholesky factor of its correlations at that draw
        (``correlation_draws``, ``(n_draws, n_correlations)``)."""
        rng = np.random.default_rng(NEW_GROUP_SEED)
        normals = rng.standard_normal(sd_draws.shape)
        start = 0
        for g in self.correlated_groupings:
            members = self._term_indices(g)
            k = len(members)
            block = correlation_draws[:, start:start + _pairs(k)]
            factor = np.linalg.cholesky(_matrix(block, k))
            normals[:, members] = np.einsum("nij,nj->ni", factor, normals[:, members])
            start += _pairs(k)
        return sd_draws * normals


def _pairs(k):
    return k * (k - 1) // 2


def cholesky_factor(unconstrained, k):
    """The Cholesky factors ``(..., k, k)`` of correlation matrices from their
    unconstrained coordinates ``(..., k (k - 1) / 2)`` (tanh of each: the canonical partial
    correlations, row by row), as ``_kernels/priors.py`` builds them."""
    partial = np.tanh(unconstrained)
    factor = np.zeros(unconstrained.shape[:-1] + (k, k))
    factor[..., 0, 0] = 1.0
    c = 0
    for i in range(1, k):
        squares = np.zeros(unconstrained.shape[:-1])
        for j in range(i):
            factor[..., i, j] = partial[..., c] * np.sqrt(np.maximum(1.0 - squares, 0.0))
            squares = squares + factor[..., i, j] ** 2
            c += 1
        factor[..., i, i] = np.sqrt(np.maximum(1.0 - squares, 0.0))
    return factor


def _correlation(factor):
    return factor @ np.swapaxes(factor, -1, -2)


def _lower(matrix, k):
    """The strict lower triangle ``(..., k (k - 1) / 2)``, row by row."""
    return np.stack([matrix[..., i, j] for i in range(1, k) for j in range(i)], axis=-1)


def _matrix(lower, k):
    """The correlation matrices ``(..., k, k)`` of strict lower triangles (:func:`_lower`)."""
    matrix = np.zeros(lower.shape[:-1] + (k, k))
    c = 0
    for i in range(k):
        matrix[..., i, i] = 1.0
        for j in range(i):
            matrix[..., i, j] = matrix[..., j, i] = lower[..., c]
            c += 1
    return matrix


def _partial_correlations(lower, k):
    """The unconstrained coordinates of correlation matrices given by their strict lower
    triangles: the inverse of ``_lower(_correlation(cholesky_factor(x, k)), k)``."""
    factor = np.linalg.cholesky(_matrix(lower, k))
    out = np.empty(lower.shape)
    c = 0
    for i in range(1, k):
        squares = np.zeros(lower.shape[:-1])
        for j in range(i):
            scale = np.sqrt(np.maximum(1.0 - squares, 1e-300))
            out[..., c] = np.arctanh(np.clip(factor[..., i, j] / scale, -1.0, 1.0))
            squares = squares + factor[..., i, j] ** 2
            c += 1
    return out


def _missing(values):
    """Whether each label is missing: NaN (NumPy, pandas) or None (pandas' NA and NaT
    included, which compare unequal to themselves or are None)."""
    values = np.asarray(values)
    if values.dtype.kind in "fc":
        return np.isnan(values)
    if values.dtype.kind == "M":
        return np.isnat(values)
    if values.dtype != object:
        return np.zeros(values.shape, dtype=bool)
    out = np.zeros(values.shape, dtype=bool)
    for i, v in enumerate(values):
        try:
            out[i] = v is None or bool(v != v)
        except (TypeError, ValueError):  # pandas.NA: its comparison is ambiguous
            out[i] = True
    return out


def _column_names(X):
    if hasattr(X, "columns"):
        return np.asarray([str(c) for c in X.columns], dtype=object)
    return None


def _n_columns(X):
    shape = getattr(X, "shape", None)
    if shape is None:
        shape = np.shape(X)
    if len(shape) != 2:
        raise ValueError(f"Expected a 2-dimensional X; got shape {tuple(shape)}.")
    return int(shape[1])
