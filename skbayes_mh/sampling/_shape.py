"""A proposal's shape: the linear map that turns standard normal noise into a step."""
from dataclasses import dataclass, field

import numpy as np

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
