"""The built-in priors on the Python side: the kernels' ``Prior`` tuple, its log density and
gradient (through the same kernel the samplers use), and its precision for the Laplace
approximation."""
import numpy as np

from .._kernels.priors import GAUSSIAN, LAPLACE, LOG_SCALE, NO_PRIOR, log_prior_and_gradient
from .._kernels.specs import Prior
from .._passes import column_slices

__all__ = ["BuiltinPrior", "GAUSSIAN", "LAPLACE", "LOG_SCALE", "NO_PRIOR"]


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
    """

    def __init__(self, kind, scales, locations=None, means=None, n_outputs=1, block=None,
                 intercept=False, power=1.0, learn_scale=False):
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
        return mask

    def with_weight_scale(self, scale):
        """This prior with every weight's scale multiplied by ``scale`` (the intercepts'
        and the extra parameters' as they are), and nothing left to learn."""
        scales = self.scales.copy()
        scales[self.weight_mask()] *= scale
        return BuiltinPrior(self.kind, scales, self.locations, self.means if self.means.size
                            else None, self.n_outputs, self.block, self.intercept, self.power)

    def as_named(self):
        return Prior(self.kind, self.scales, self.locations, self.means, self.n_outputs,
                     self.block, int(self.intercept), self.power)

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
        n_base = d - 1 if self.kind & LOG_SCALE else d
        if self.kind & 3:
            inverse_square = 1.0 / self.scales[:n_base] ** 2
            centred = self.means.size > 0 and self.intercept
            for k in range(n_base):
                in_block = k < self.n_outputs * self.block
                if centred and in_block and k % self.block == self.block - 1:
                    rank_ones.append((inverse_square[k], k - (self.block - 1), k + 1))
                else:
                    diagonal[k] += inverse_square[k]
        if self.kind & LOG_SCALE:
            diagonal[d - 1] += np.exp(theta[d - 1]) / self.scales[d - 1]
        return diagonal, rank_ones

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
