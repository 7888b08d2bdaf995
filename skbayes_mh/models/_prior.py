"""The built-in priors on the Python side: the kernels' ``Prior`` tuple, its log density and
gradient (through the same kernel the samplers use), and its precision for the Laplace
approximation."""
import numpy as np

from .._kernels.priors import (BASE, GAUSSIAN, GROUP_CORRELATION, GROUP_SD, GROUP_SD_INTERWOVEN,
                               GROUP_SD_RESCALED, LAPLACE, LKJ_SHAPE, LOG_SCALE, NO_PRIOR,
                               log_prior_and_gradient)
from .._kernels.specs import Prior
from .._passes import column_slices

__all__ = ["BASE", "BuiltinPrior", "GAUSSIAN", "GROUP_CORRELATION", "GROUP_SD",
           "GROUP_SD_INTERWOVEN", "GROUP_SD_RESCALED", "LAPLACE", "LOG_SCALE", "NO_PRIOR"]


class BuiltinPrior:
    """Independent Gaussian or Laplace priors per coordinate (see ``_kernels/priors.py``).

    Parameters
    ----------
    kind : int
        ``NO_PRIOR``, ``GAUSSIAN`` or ``LAPLACE``, optionally ``| LOG_SCALE``.
    scales : array-like of shape (d,)
        Per-coordinate scale (with ``LOG_SCALE``, the last is the exponential prior's mean).
    locations : array-like of shape (d,) or None
        Per-coordinate centre (zeros when None).
    means : array-like of shape (n_features,) or None
        Feature means that centre each block's intercept; None: no centring.
    n_outputs, block : int
        ``n_outputs`` blocks of ``block`` coordinates each, the intercept last in a block
        when ``intercept``.
    intercept : bool
    power : float
        The density raised to this power: 1, or ``1 / S`` for the prior of one of ``S``
        shards whose sub-posteriors are combined (:class:`~skbayes_mh.ConsensusMonteCarlo`).
    learn_scale : bool
        Whether the weights' scales are to be multiplied by a scale the data choose before
        sampling (``prior_scale="auto"``, :func:`~skbayes_mh.models._evidence.
        evidence_scale`); the kernels never see this.
    scale_of : array-like of shape (d,) or None
        Group-level effects and their sds (see ``_kernels/priors.py``): ``scale_of[k] = a``
        makes coordinate ``k`` an effect ``N(locations_k, exp(theta_a)^2)``,
        ``GROUP_SD`` makes it the log of a half-normal sd of scale ``scales_k`` (the last
        coordinates; ``GROUP_SD_RESCALED`` and ``GROUP_SD_INTERWOVEN`` likewise, its chains
        then also taking rescaling moves), ``GROUP_CORRELATION`` makes it an unconstrained
        coordinate of a grouping's correlation matrix, ``BASE`` leaves it to the base prior;
        None: no group-level effects.
    correlations : array-like of int or None
        The groupings whose terms are correlated, as ``_kernels/priors.py`` reads them;
        None: none.
    """

    def __init__(self, kind, scales, locations=None, means=None, n_outputs=1, block=None,
                 intercept=False, power=1.0, learn_scale=False, scale_of=None,
                 correlations=None):
        self.kind = int(kind)
        self.scales = np.ascontiguousarray(scales, dtype=np.float64)
        d = self.scales.size
        self.locations = (np.zeros(d) if locations is None
                          else np.ascontiguousarray(locations, dtype=np.float64))
        self.means = (np.zeros(0) if means is None
                      else np.ascontiguousarray(means, dtype=np.float64))
        self.n_outputs = int(n_outputs)
        self.block = int(d if block is None else block)
        self.intercept = bool(intercept)
        self.power = float(power)
        self.learn_scale = bool(learn_scale)
        self.scale_of = (np.zeros(0, dtype=np.int64) if scale_of is None
                         else np.ascontiguousarray(scale_of, dtype=np.int64))
        if self.scale_of.size not in (0, d):
            raise ValueError(f"scale_of needs one entry per coordinate ({d}); got "
                             f"{self.scale_of.size}.")
        self.correlations = (np.zeros(0, dtype=np.int64) if correlations is None
                             else np.ascontiguousarray(correlations, dtype=np.int64))

    @classmethod
    def flat(cls, n_params):
        """No built-in prior (a user's ``log_prior``, or flat)."""
        return cls(NO_PRIOR, np.ones(n_params))

    @property
    def n_params(self):
        return self.scales.size

    def weight_mask(self):
        """Which coordinates are weights (not an intercept nor an extra parameter), shape
        (d,)."""
        mask = np.zeros(self.n_params, dtype=bool)
        n_linear = self.n_outputs * self.block
        mask[:n_linear] = True
        if self.intercept:
            mask[self.block - 1:n_linear:self.block] = False
        if self.scale_of.size:
            mask &= self.scale_of == BASE
        return mask

    @property
    def group_sds(self):
        """The coordinates of the group-level sds' logs, shape (n_terms,)."""
        return np.flatnonzero(np.isin(self.scale_of,
                                      (GROUP_SD, GROUP_SD_RESCALED, GROUP_SD_INTERWOVEN)))

    @property
    def group_correlations(self):
        """The coordinates of the correlated groupings' unconstrained correlations."""
        return np.flatnonzero(self.scale_of == GROUP_CORRELATION)

    def correlated_groupings(self):
        """Each correlated grouping of :attr:`correlations` as ``(n_levels, correlation
        coordinates, sd coordinates, effects (n_terms, n_levels))``."""
        table, start, out = self.correlations, 0, []
        while start < table.size:
            k, n_levels, first = (int(v) for v in table[start:start + 3])
            sds = table[start + 3:start + 3 + k]
            firsts = table[start + 3 + k:start + 3 + 2 * k]
            effects = firsts[:, None] + np.arange(n_levels)[None, :]
            out.append((n_levels, np.arange(first, first + k * (k - 1) // 2), sds, effects))
            start += 3 + 2 * k
        return out

    def with_group_sds(self, log_sds):
        """This prior with the group-level sds fixed at ``exp(log_sds)`` (one per
        :attr:`group_sds`, in order): each effect Gaussian of its sd, and each sd's log
        coordinate Gaussian of scale 1 about ``log_sds`` (its maximum there; the
        likelihood does not read it). The prior of an empirical-Bayes search."""
        scales, locations = self.scales.copy(), self.locations.copy()
        for a, log_sd in zip(self.group_sds, log_sds):
            scales[self.scale_of == a] = np.exp(log_sd)
            scales[a], locations[a] = 1.0, log_sd
        correlations = self.group_correlations
        scales[correlations], locations[correlations] = 1.0, 0.0  # independent effects
        return BuiltinPrior(self.kind, scales, locations, self.means if self.means.size
                            else None, self.n_outputs, self.block, self.intercept, self.power)

    def with_rescaled_sds(self, rescaled, interwoven=False):
        """This prior with the group-level sds where ``rescaled`` (a boolean per
        :attr:`group_sds`, in order) marked ``GROUP_SD_RESCALED``, where ``interwoven``
        (and not ``rescaled``) ``GROUP_SD_INTERWOVEN``, and the others ``GROUP_SD``: the
        same density, and the chains' rescaling moves of the marked sds (with their effects
        non-centred in Hamiltonian paths where ``rescaled``)."""
        scale_of = self.scale_of.copy()
        scale_of[self.group_sds] = np.where(
            rescaled, GROUP_SD_RESCALED, np.where(interwoven, GROUP_SD_INTERWOVEN, GROUP_SD))
        return BuiltinPrior(self.kind, self.scales, self.locations, self.means if self.means.size
                            else None, self.n_outputs, self.block, self.intercept, self.power,
                            self.learn_scale, scale_of=scale_of,
                            correlations=self.correlations)

    def with_weight_scale(self, scale):
        """This prior with every weight's scale multiplied by ``scale`` (the intercepts'
        and the extra parameters' as they are), and nothing left to learn."""
        scales = self.scales.copy()
        scales[self.weight_mask()] *= scale
        return BuiltinPrior(self.kind, scales, self.locations, self.means if self.means.size
                            else None, self.n_outputs, self.block, self.intercept, self.power,
                            scale_of=self.scale_of if self.scale_of.size else None,
                            correlations=self.correlations)

    def as_named(self):
        return Prior(self.kind, self.scales, self.locations, self.means, self.n_outputs,
                     self.block, int(self.intercept), self.power, self.scale_of,
                     self.correlations)

    def as_tuple(self):
        """The plain tuple the entry kernels take."""
        return tuple(self.as_named())

    def log_density(self, theta, want_grad=False):
        """``log p(theta)`` up to a constant, and its gradient (zeros unless ``want_grad``)."""
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        gradient = np.zeros(theta.size)
        value = log_prior_and_gradient(self.as_named(), theta, want_grad, gradient)
        return value, gradient

    def _precision_terms(self, theta):
        """The precision as a diagonal ``(d,)`` plus rank-one terms ``w u u'``: a list of
        ``(w, start, stop)`` with ``u = [means, 1]`` on coordinates ``start..stop-1`` (a
        centred intercept's prior, on ``b + means . w``), zero elsewhere."""
        d = self.n_params
        diagonal = np.zeros(d)
        rank_ones = []
        n_base = d - self.group_sds.size
        grouped = self.scale_of.size > 0
        if self.kind & LOG_SCALE:
            n_base -= 1
            diagonal[n_base] += np.exp(theta[n_base]) / self.scales[n_base]
        if self.kind & 3:
            inverse_square = 1.0 / self.scales[:n_base] ** 2
            centred = self.means.size > 0 and self.intercept
            for k in range(n_base):
                in_block = k < self.n_outputs * self.block
                if grouped and self.scale_of[k] != BASE:
                    continue
                if centred and in_block and k % self.block == self.block - 1:
                    rank_ones.append((inverse_square[k], k - (self.block - 1), k + 1))
                else:
                    diagonal[k] += inverse_square[k]
        if grouped:
            self._add_group_precision(theta, diagonal)
        return diagonal, rank_ones

    def _add_group_precision(self, theta, diagonal):
        """The group-level terms' part of the precision's diagonal at ``theta``: ``1 /
        sd^2`` on each effect, and on each sd's log its half-normal's ``2 sd^2 / scale^2``
        plus ``2 z_k^2`` over its effects (``z_k`` the effect over its sd). The terms
        between an effect and its sd are left out: what is kept is positive definite
        everywhere (the full Hessian is not, away from the mode), which is what a
        proposal's shape and a Newton step need."""
        for a in self.group_sds:
            effects = np.flatnonzero(self.scale_of == a)
            sd = np.exp(theta[a])
            z = (theta[effects] - self.locations[effects]) / sd
            diagonal[effects] += 1.0 / sd**2
            diagonal[a] += 2.0 * sd**2 / self.scales[a] ** 2 + 2.0 * float(z @ z)
        for n_levels, correlations, _, _ in self.correlated_groupings():
            # A correlation's unconstrained coordinate near 0: about one unit of
            # information a level, and the LKJ prior's and the Jacobian's curvature.
            diagonal[correlations] += n_levels + 2.0 * LKJ_SHAPE

    def precision(self, theta, diagonal=False):
        """``-d^2 log p / d theta^2`` at ``theta`` (``(d, d)``, or its diagonal ``(d,)`` with
        ``diagonal``): exact for Gaussian priors; a Laplace prior (no curvature away from 0)
        counts as the Gaussian of the same scale, which keeps the Laplace approximation well
        conditioned."""
        diag, rank_ones = self._precision_terms(theta)
        precision = diag if diagonal else np.diag(diag)
        for weight, start, stop in rank_ones:
            direction = np.append(self.means, 1.0)
            if diagonal:
                precision[start:stop] += weight * direction**2
            else:
                precision[start:stop, start:stop] += weight * np.outer(direction, direction)
        return self.power * precision

    def precision_times(self, theta, vectors, out=None):
        """The precision at ``theta`` times ``vectors`` of shape (d, m), in ``O(d m)``; with
        ``out`` (d, m) added into it, a few columns at a time (no temporary of its size)."""
        diag, rank_ones = self._precision_terms(theta)
        diag = self.power * diag
        if out is None:
            out = np.zeros(vectors.shape)
        for cut in column_slices(*vectors.shape):
            out[:, cut] += diag[:, None] * vectors[:, cut]
        for weight, start, stop in rank_ones:
            direction = np.append(self.means, 1.0)
            coefficients = (self.power * weight) * (direction @ vectors[start:stop])
            for cut in column_slices(stop - start, vectors.shape[1]):
                out[start:stop, cut] += np.multiply.outer(direction, coefficients[cut])
        return out


def gaussian_or_laplace(name):
    """The kind of a prior family given by name."""
    return {"gaussian": GAUSSIAN, "laplace": LAPLACE}[name]
