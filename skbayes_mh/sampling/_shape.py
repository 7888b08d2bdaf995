"""A proposal's shape: the linear map that turns standard normal noise into a step."""
from dataclasses import dataclass, field

import numpy as np

from .._kernels.priors import GROUP_SD_RESCALED
from ..models._optimize import LowRankCovariance


@dataclass
class Shape:
    """A proposal shape ``L``: a lower-triangular ``factor`` (``(d, d)``), or per-coordinate
    scales ``diag`` (``(d,)``) with an empty factor, corrected along the ``k`` orthonormal rows
    of ``basis`` (``(k, d)``; 0 rows: diagonal) by ``gain`` (``(k,)``):
    ``L = diag(diag) (I + basis' diag(gain - 1) basis)`` (``_kernels/proposals.py``)."""

    factor: np.ndarray
    diag: np.ndarray
    basis: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    gain: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @classmethod
    def from_covariance(cls, covariance, full=True):
        """``L`` with ``L L' = covariance`` (its Cholesky factor), or the square roots of its
        diagonal when not ``full`` or when it is given as variances. A covariance that is not
        positive definite falls back to its diagonal. A
        :class:`~skbayes_mh.models._optimize.LowRankCovariance` gives its own factor."""
        if isinstance(covariance, LowRankCovariance):
            return cls(np.zeros((0, 0)), covariance.sd, covariance.basis, covariance.gain)
        covariance = np.asarray(covariance, dtype=np.float64)
        if covariance.ndim == 2 and full:
            try:
                return cls(np.linalg.cholesky(covariance), np.zeros(0))
            except np.linalg.LinAlgError:
                pass
        variances = np.diag(covariance) if covariance.ndim == 2 else covariance
        return cls(np.zeros((0, 0)), np.sqrt(np.maximum(variances, 1e-300)))

    @classmethod
    def identity(cls, n_params):
        return cls(np.zeros((0, 0)), np.ones(n_params))

    def times(self, z):
        """``L z`` for ``z`` of shape (d,)."""
        if self.factor.shape[0]:
            return self.factor @ z
        if self.basis.shape[0]:
            z = z + self.basis.T @ ((self.gain - 1) * (self.basis @ z))
        return self.diag * z

    def scales(self):
        """Each coordinate's standard deviation under ``L L'``."""
        if self.factor.shape[0]:
            return np.sqrt(np.sum(self.factor**2, axis=1))
        if self.basis.shape[0]:
            return self.diag * np.sqrt(1.0 + (self.gain**2 - 1) @ self.basis**2)
        return self.diag.copy()


@dataclass
class NonCentredPaths:
    """The coordinates in which Hamiltonian paths run where a target's prior marks
    group-level sds ``GROUP_SD_RESCALED`` (``_kernels/mh.py``, ``_to_path``): each of their
    effects non-centred, ``z_k = (e_k - loc_k) / sd``. A shape from the Laplace covariance
    is carried there at the Laplace mean's (empirical-Bayes) sds, its effects' rows divided
    by their sd (a preconditioner only: the paths are exact whatever it is); warm-up draws
    are carried draw by draw, each at its own sd.

    Attributes
    ----------
    effects : ndarray of shape (n_effects,)
        The rescaled terms' effects' coordinates.
    sds : ndarray of shape (n_effects,)
        Each effect's log sd's coordinate.
    locations : ndarray of shape (n_effects,)
        Each effect's prior mean.
    factors : ndarray of shape (d,)
        The factor each coordinate's scale is multiplied by: ``1 / sd`` at the Laplace
        mean on the effects, 1 elsewhere.
    """

    effects: np.ndarray
    sds: np.ndarray
    locations: np.ndarray
    factors: np.ndarray

    @classmethod
    def of(cls, target):
        """The paths' coordinates of ``target`` (a :class:`~skbayes_mh.sampling.Target`),
        or None where its prior rescales no sd."""
        scale_of = getattr(target.prior, "scale_of", np.zeros(0, dtype=np.int64))
        rescaled = np.flatnonzero(scale_of == GROUP_SD_RESCALED)
        if not rescaled.size or target.mean is None:
            return None
        effects = np.flatnonzero(np.isin(scale_of, rescaled))
        sds = scale_of[effects]
        factors = np.ones(target.n_params)
        factors[effects] = np.exp(-np.asarray(target.mean)[sds])
        return cls(effects, sds, target.prior.locations[effects], factors)

    def draws(self, draws):
        """``draws`` ``(n, d)`` in the paths' coordinates (a copy)."""
        out = np.array(draws, dtype=np.float64)
        out[:, self.effects] = ((out[:, self.effects] - self.locations)
                                * np.exp(-out[:, self.sds]))
        return out

    def covariance(self, covariance):
        """A covariance (``(d, d)``, variances ``(d,)`` or a
        :class:`~skbayes_mh.models._optimize.LowRankCovariance`) carried to the paths'
        coordinates by :attr:`factors`."""
        f = self.factors
        if isinstance(covariance, LowRankCovariance):
            return LowRankCovariance(covariance.sd * f, covariance.basis, covariance.gain)
        covariance = np.asarray(covariance, dtype=np.float64)
        if covariance.ndim == 2:
            return covariance * f[:, None] * f[None, :]
        return covariance * f**2

    def shape(self, shape):
        """``shape`` carried to the paths' coordinates: ``diag(factors) L``."""
        f = self.factors
        if shape.factor.shape[0]:
            return Shape(shape.factor * f[:, None], shape.diag, shape.basis, shape.gain)
        return Shape(shape.factor, shape.diag * f, shape.basis, shape.gain)
