"""Multiclass softmax regression: ``p(y = k | x) = exp(w_k . x + b_k) / sum_j exp(w_j . x + b_j)``.

Two parameterisations of the same likelihood:

* :class:`SoftmaxModel`, theta the ``K`` blocks of weights and intercepts. Adding one
  vector to every class's block leaves the likelihood unchanged, so along that direction
  only the prior pins theta down. Its Firefly bound is a quadratic upper bound on
  ``logsumexp`` with a per-row curvature: Jebara and Choromanska's (default) or Bohning's.
* :class:`CentredSoftmaxModel`, theta the ``K - 1`` blocks ``Z`` of the coefficients in an
  orthonormal basis ``Q`` (``K x (K - 1)``) of the vectors that sum to zero over the classes:
  the class blocks are ``Q Z``, which sum to zero (scikit-learn's layout for a penalised
  multinomial model). Every direction it samples is one the data inform.

Under a prior whose class blocks are independent and identically distributed zero-mean
Gaussians (the estimators' priors), the class blocks ``Q Z + 1 s' / sqrt(K)`` have ``Z``
and ``s`` independent with the same prior per block, and ``s`` does not enter the
likelihood: ``s``'s posterior is its prior, and ``Z``'s posterior is the centred
coefficients' posterior under the over-parameterised model. Sampling ``Z`` alone, with the
same prior on each of its blocks, is therefore exact for every prediction, and for the
centred coefficients that both families report."""
import math

import numpy as np
from scipy.special import logsumexp

from .._kernels._common import log_sigmoid
from .._kernels._jit import jit
from .._kernels.linear import link_rows_views
from ._base import LinearModel
from .logistic import jaakkola_jordan_lambda

#: ``bound_params[0]`` values: which curvature.
JEBARA = 0.0
BOHNING = 1.0
SOFTMAX_BOUNDS = {"jebara": JEBARA, "bohning": BOHNING}


@jit
def _log_sum_exp(eta):
    top = -math.inf
    for k in range(eta.shape[0]):
        top = max(top, eta[k])
    total = 0.0
    for k in range(eta.shape[0]):
        total += math.exp(eta[k] - top)
    return top + math.log(total)


@jit
def softmax_link(u, y, params, order, d1, d2):
    """``eta_y - logsumexp(eta)`` (:func:`_softmax_link`)."""
    return _softmax_link(u, y, params, order, d1, d2)


@jit(inline="always")
def _softmax_link(u, y, params, order, d1, d2):
    """``eta_y - logsumexp(eta)`` with ``eta = u``; derivatives ``e_y - p`` and
    ``-(diag(p) - p p')``, ``p = softmax(eta)``."""
    n_classes = u.shape[0]
    label = int(y)
    if order < 1:
        return u[label] - _log_sum_exp(u)
    # One exp a class: p_k = exp(u_k - top) / total, the exponentials kept in d1 meanwhile.
    top = -math.inf
    for k in range(n_classes):
        top = max(top, u[k])
    total = 0.0
    for k in range(n_classes):
        d1[k] = math.exp(u[k] - top)
        total += d1[k]
    if order >= 2:
        for k in range(n_classes):
            for m in range(n_classes):
                d2[k, m] = d1[k] * d1[m] / (total * total) - (d1[k] / total if k == m else 0.0)
    for k in range(n_classes):
        d1[k] = (1.0 if k == label else 0.0) - d1[k] / total
    return u[label] - (top + math.log(total))  # as _log_sum_exp rounds it


@jit
def softmax_curvature(psi, kind, curvature):
    """Per-row curvature ``C`` (K x K) of a quadratic upper bound on ``logsumexp``, valid for
    every ``eta`` and tight at ``psi``:
    ``f(eta) <= f(psi) + (eta - psi) . softmax(psi) + (eta - psi)' C (eta - psi) / 2``.

    ``BOHNING``: ``(I - 11' / K) / 2``, an upper bound on the Hessian of ``f`` everywhere.
    ``JEBARA`` (Jebara and Choromanska, NIPS 2012, Algorithm 1): built class by class
    (largest ``psi`` first) from Jaakkola-Jordan steps, ``C += 2 lambda(t) l l'`` with ``t``
    the log ratio of the new class's mass to the mass so far and ``l`` the new class's
    offset from the running mean. It shrinks where the classes are well separated, and
    reduces to Jaakkola-Jordan's when ``K = 2``.
    """
    n_classes = psi.shape[0]
    curvature[:, :] = 0.0
    if kind == BOHNING:
        for k in range(n_classes):
            for m in range(n_classes):
                curvature[k, m] = 0.5 * ((1.0 if k == m else 0.0) - 1.0 / n_classes)
        return
    ranked = np.argsort(-psi)
    log_mass = psi[ranked[0]]
    mean = np.zeros(n_classes)
    mean[ranked[0]] = 1.0
    offset = np.empty(n_classes)
    for step in range(1, n_classes):
        k = ranked[step]
        t = psi[k] - log_mass
        for a in range(n_classes):
            offset[a] = -mean[a]
        offset[k] += 1.0
        weight = 2.0 * jaakkola_jordan_lambda(t)
        for a in range(n_classes):
            for b in range(n_classes):
                curvature[a, b] += weight * offset[a] * offset[b]
        share = math.exp(log_sigmoid(t))
        for a in range(n_classes):
            mean[a] += share * offset[a]
        top = max(log_mass, psi[k])
        log_mass = top + math.log(math.exp(log_mass - top) + math.exp(psi[k] - top))


@jit
def softmax_bound(u_tangent, y, params, bound_params, linear, curvature):
    """``log p(y | eta) >= eta_y - f(psi) - (eta - psi) . g - (eta - psi)' C (eta - psi) / 2``
    with ``f = logsumexp``, ``g = softmax(psi)``, ``C`` from :func:`softmax_curvature` and
    ``psi = u_t`` (the tangent's linear predictors; zero for the untuned bound). As a
    quadratic in ``eta``: ``c = -f(psi) + psi . g - psi' C psi / 2``,
    ``l = e_y - g + C psi``, ``A = C``."""
    n_classes = u_tangent.shape[0]
    softmax_curvature(u_tangent, bound_params[0], curvature)
    lse = _log_sum_exp(u_tangent)
    label = int(y)
    constant = -lse
    for k in range(n_classes):
        g = math.exp(u_tangent[k] - lse)
        curved = 0.0
        for m in range(n_classes):
            curved += curvature[k, m] * u_tangent[m]
        linear[k] = (1.0 if k == label else 0.0) - g + curved
        constant += u_tangent[k] * (g - 0.5 * curved)
    return constant, 0.0, 0.0


def sum_to_zero_basis(n_classes):
    """An orthonormal basis ``Q`` (``K x (K - 1)``) of the vectors that sum to zero over
    ``K`` classes: Helmert's contrasts, column ``j`` proportional to ``(1, ..., 1, -(j + 1),
    0, ...)`` with ``j + 1`` ones."""
    basis = np.zeros((n_classes, n_classes - 1))
    for j in range(n_classes - 1):
        basis[:j + 1, j] = 1.0
        basis[j + 1, j] = -(j + 1.0)
        basis[:, j] /= math.sqrt((j + 1.0) * (j + 2.0))
    return basis


def helmert_scales(n_classes):
    """``c_j = 1 / sqrt((j + 1)(j + 2))``, ``j < K - 1``: :func:`sum_to_zero_basis` is
    ``Q[k, j] = c_j`` for ``k <= j``, ``-(j + 1) c_j`` for ``k = j + 1``, 0 below."""
    j = np.arange(n_classes - 1, dtype=np.float64)
    return 1.0 / np.sqrt((j + 1.0) * (j + 2.0))


@jit(inline="always")
def _helmert(k, j, scales):
    """``Q[k, j]`` of :func:`sum_to_zero_basis` from its :func:`helmert_scales`."""
    if k <= j:
        return scales[j]
    if k == j + 1:
        return -(j + 1.0) * scales[j]
    return 0.0


@jit(inline="always")
def _helmert_eta(k, v, scales, tail):
    """``eta_k = (Q v)_k`` given ``tail = sum_{j >= k} c_j v_j``."""
    if k == 0:
        return tail
    return tail - k * scales[k - 1] * v[k - 1]


@jit
def centred_softmax_link(v, y, params, order, d1, d2):
    """The softmax log-likelihood of ``eta = Q v`` (:func:`_centred_softmax_link`)."""
    return _centred_softmax_link(v, y, params, order, d1, d2)


@jit(inline="always")
def _centred_softmax_link(v, y, params, order, d1, d2):
    """The softmax log-likelihood of ``eta = Q v`` (``Q`` the Helmert basis of
    :func:`sum_to_zero_basis`, ``params`` its :func:`helmert_scales`): ``eta_y -
    logsumexp(eta)``, with derivatives in ``v`` ``Q' (e_y - p)`` and ``-(Q' diag(p) Q - Q' p
    p' Q)``, ``p = softmax(eta)``.

    Helmert's basis gives every ``eta_k`` from a running sum and ``(Q' p)_j = c_j (P_j -
    (j + 1) p_{j+1})`` from the running sum ``P_j = p_0 + ... + p_j``, so a value and
    gradient cost ``O(K)`` (as the over-parameterised link's), one ``exp`` a class (``d1``
    holds each class's until the gradient overwrites it); the Hessian (MAP and
    control-variate passes only) costs ``O(K^2)``."""
    m = v.shape[0]
    n_classes = m + 1
    label = int(y)
    head = 0.0
    for j in range(m):
        head += params[j] * v[j]
    top = -math.inf
    tail = head
    for k in range(n_classes):
        top = max(top, _helmert_eta(k, v, params, tail))
        if k < m:
            tail -= params[k] * v[k]
    total = 0.0
    chosen = 0.0
    first = 0.0  # exp(eta_0 - top)
    tail = head
    for k in range(n_classes):
        eta = _helmert_eta(k, v, params, tail)
        share = math.exp(eta - top)
        total += share
        if k == 0:
            first = share
        elif order >= 1:
            d1[k - 1] = share  # kept for the gradient, which overwrites it after reading it
        if k == label:
            chosen = eta
        if k < m:
            tail -= params[k] * v[k]
    lse = top + math.log(total)
    if order >= 1:
        # p_k from the exponentials above: with an exp a class again, the link of 300 rows
        # of ten classes took 65 us against 41
        below = 0.0  # P_{k-1}
        for k in range(n_classes):
            p = (first if k == 0 else d1[k - 1]) / total
            if k >= 1:
                j = k - 1
                d1[j] = _helmert(label, j, params) - params[j] * (below - k * p)
            below += p
    if order >= 2:
        for j in range(m):
            for i in range(j, m):
                d2[j, i] = 0.0
        tail = head
        for k in range(n_classes):
            p = math.exp(_helmert_eta(k, v, params, tail) - lse)
            for j in range(max(k - 1, 0), m):
                qj = _helmert(k, j, params)
                for i in range(j, m):
                    d2[j, i] -= p * qj * _helmert(k, i, params)
            if k < m:
                tail -= params[k] * v[k]
        # Q' p = Q' e_y - d1 (the rows of Q are the classes); d2 exactly symmetric.
        for j in range(m):
            qj = _helmert(label, j, params) - d1[j]
            for i in range(j, m):
                d2[j, i] += qj * (_helmert(label, i, params) - d1[i])
                d2[i, j] = d2[j, i]
    return chosen - lse


@jit
def softmax_link_rows(U, y, start, count, params, order, values, slopes, curvatures):
    """:func:`softmax_link` over a block of rows (``specs.LINK_ROWS``), its body inlined in
    the rows' loop."""
    U, params, slopes, curvatures = link_rows_views(U, params, slopes, curvatures)
    last = curvatures.shape[0] - 1
    for r in range(count):
        hessian = curvatures[min(r, last)]
        values[r] = _softmax_link(U[r], y[start + r], params, order, slopes[r], hessian)


class SoftmaxModel(LinearModel):
    """Softmax regression over ``n_outputs`` classes (labels ``0..K-1``), theta the ``K``
    class blocks; the reported coefficients are centred (they sum to zero over the
    classes)."""

    name = "softmax"
    outcome = "classes"
    link = softmax_link
    link_rows = softmax_link_rows
    bound_coefficients = softmax_bound

    def __init__(self, n_outputs, softmax_bound="jebara"):
        super().__init__(n_outputs)
        self.n_classes = self.n_outputs
        self.softmax_bound = softmax_bound

    @property
    def n_blocks(self):
        return self.n_classes

    def class_blocks(self, linear):
        """The class blocks ``(..., K, B)`` of the linear coordinates ``(..., n_outputs,
        B)``, centred over the classes (the part the likelihood sees)."""
        return linear - linear.mean(axis=-2, keepdims=True)

    def output_blocks(self, blocks):
        """The inverse of :meth:`class_blocks` on centred class blocks."""
        return blocks

    def lipschitz(self, max_row_norm):
        """``|grad_eta l| = |e_y - p| <= sqrt 2``, so ``|l_i(a) - l_i(b)| <= sqrt 2 |[x_i, 1]|
        |a - b|``."""
        return math.sqrt(2.0) * float(max_row_norm)

    def firefly_bound_params(self, bound):
        return np.array([SOFTMAX_BOUNDS[self.softmax_bound]])

    def firefly_tangent(self, theta_map, bound):
        """The MAP, or zero weights (``psi = 0``) for the untuned bound."""
        return theta_map if bound == "map" else np.zeros_like(theta_map)

    def log_likelihood(self, eta, variables, y):
        """``log softmax(eta)[y]`` for class indices ``y``."""
        chosen = np.take_along_axis(eta, y[None, :, None], axis=2)[..., 0]
        return chosen - logsumexp(eta, axis=2)

    def class_probabilities(self, eta, variables):
        return class_softmax(eta)

    def simulate(self, eta, variables, rng):
        cumulative = np.cumsum(class_softmax(eta), axis=2)
        u = rng.random(eta.shape[:2])[..., None]
        return np.minimum((u > cumulative).sum(axis=2), self.n_classes - 1)


def class_softmax(eta):
    """The softmax over the last axis of ``eta`` (..., n_classes), one class's slice at a
    time in ``eta``'s memory layout. Over linear predictors with the draws contiguous
    (``linear_model._predictive.linear_predictors``) this is several times faster than scipy's
    softmax along the strided last axis (``predict_proba`` of 20,000 rows x 4,000 draws x
    3 classes: 2.2 s against 12.4 s, ``benchmarks/perf/predict_time.py``).

    Returns
    -------
    ndarray of eta's shape and layout
    """
    probabilities = np.empty_like(eta)
    largest = eta[..., 0].copy(order="K")
    for k in range(1, eta.shape[-1]):
        np.maximum(largest, eta[..., k], out=largest)
    total = np.zeros_like(largest)
    for k in range(eta.shape[-1]):
        np.subtract(eta[..., k], largest, out=probabilities[..., k])
        np.exp(probabilities[..., k], out=probabilities[..., k])
        total += probabilities[..., k]
    probabilities /= total[..., None]
    return probabilities


@jit
def centred_softmax_link_rows(U, y, start, count, params, order, values, slopes, curvatures):
    """:func:`centred_softmax_link` over a block of rows (``specs.LINK_ROWS``), its body
    inlined in the rows' loop."""
    U, params, slopes, curvatures = link_rows_views(U, params, slopes, curvatures)
    last = curvatures.shape[0] - 1
    for r in range(count):
        hessian = curvatures[min(r, last)]
        values[r] = _centred_softmax_link(U[r], y[start + r], params, order, slopes[r],
                                          hessian)


class CentredSoftmaxModel(SoftmaxModel):
    """Softmax regression over ``n_classes`` classes, theta the ``K - 1`` blocks of the
    coefficients in the sum-to-zero basis :func:`sum_to_zero_basis` (see the module's
    docstring). It has no Firefly bound: Firefly samples :class:`SoftmaxModel`."""

    link = centred_softmax_link
    link_rows = centred_softmax_link_rows
    bound_coefficients = None

    def __init__(self, n_classes):
        super().__init__(n_classes - 1)
        self.n_classes = int(n_classes)
        self.basis = sum_to_zero_basis(self.n_classes)

    def params(self):
        return helmert_scales(self.n_classes)

    def class_blocks(self, linear):
        return np.einsum("kj,...jb->...kb", self.basis, linear)

    def output_blocks(self, blocks):
        return np.einsum("kj,...kb->...jb", self.basis, blocks)

    def predictors(self, outputs):
        return outputs @ self.basis.T
