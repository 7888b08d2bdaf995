"""What every linear-predictor model shares: its kernel spec, full-data passes
(value, gradient and Hessian in theta from the link's derivatives in ``u``, with BLAS), the
MAP and Laplace approximation and the control variates' sums; Firefly's collapsed bounds
come from ``_firefly.py`` and count mixtures' quantiles from ``_quantiles.py``. A model
file supplies only its link, its bound coefficients, and what is its own (a starting
point, its Lipschitz and third-derivative bounds)."""
import functools
from functools import partial

import numpy as np

from .._kernels._jit import STATUS_OK
from .._passes import chunk_rows, chunks, return_freed_memory
from .._validation import check_dense_matrix
from .._kernels.passes import linear_derivatives
from ._firefly import FireflyBounds
from ._optimize import find_map, laplace_covariance, low_rank_laplace, newton_map


#: The empirical-Bayes search of group-level sds (``LinearModel._group_laplace``): at most
#: this many MAP searches, stopping once no sd's log moves by more than the tolerance, and
#: no sd below this share of its hyperprior's scale (data that say nothing of a term's
#: effects would drive its sd to 0, where the joint density has no maximum).
GROUP_SD_MAX_ITERATIONS = 30
GROUP_SD_TOLERANCE = 0.01
GROUP_SD_MIN_RATIO = 1e-3
#: A term whose effects the data determine less than this share of (``gamma / m`` at the
#: empirical-Bayes point: few rows a group, or an sd near 0) has its sd marked
#: ``GROUP_SD_RESCALED``, so that the chains also take rescaling moves of it
#: (``_kernels/mh.py``): there the centred effects pin the sd (a funnel). A term whose
#: effects the data determine (many rows a group, gamma / m near 1) is sampled well
#: centred and needs none. ``benchmarks/groups.py``, docs/estimators.md.
GROUP_RESCALE_MAX_DETERMINED = 0.5
#: A term whose effects the data support over none (all at 0) by less than this many nats
#: (:func:`group_evidence`; 3 is "strong" evidence on Kass and Raftery's scale, 2 log B >
#: 6), and determine at least ``GROUP_INTERWEAVE_MIN_DETERMINED`` of (``gamma / m``), has
#: its sd marked ``GROUP_SD_INTERWOVEN``: its posterior then reaches toward sd 0, where
#: centred Hamiltonian paths stall, so its chains take the rescaling moves too, with
#: centred paths (non-centred ones, whose shape is fixed at one sd, mix effects the data
#: determine poorly when the sd's posterior spans orders of magnitude: few groups). On
#: diabetes' five age bands (``gamma / m`` 0.52, 0.88 nats; eight seeds of
#: ``benchmarks/studies/group_schemes.py``, table in docs/estimators.md) centred chains
#: converged 6 times (R-hat up to 1.099) and put the sd's 1st percentile at 3.5 where the
#: others found 1.4 to 1.6; non-centred 7 times in 5 times as long; interwoven 8 times.
GROUP_RESCALE_MIN_EVIDENCE = 3.0
#: Below this share the effects are barely determined at any sd the posterior reaches and
#: non-centred paths suit them: six groups that do not differ (``gamma / m`` 0 to 0.2)
#: converged 8 times of 8 non-centred, 3 interwoven (R-hat up to 1.045); 200 and 500 groups
#: of 3 or 4 rows (0.05 to 0.15; two seeds each) took up to 4.5 times as long interwoven,
#: one fit ending at R-hat 1.014. Above it, three to five groups of 60 to 100 rows
#: converged every time interwoven and 2 to 7 times of 8 non-centred (R-hat up to 1.39).
GROUP_INTERWEAVE_MIN_DETERMINED = 0.2
#: The variance of a group-level sd's log in the chains' start and shape is at most this:
#: that of the log of the half-normal hyperprior's draws (``log |Z|``, ``Z`` standard
#: normal), which a posterior does not exceed. Where the data determine none of a term's
#: effects (``gamma`` near 0: an sd at its floor, whose evidence is flat toward 0) the
#: evidence's curvature alone gave a variance of up to 500, so chains started with the sd
#: 10^-30 of its floor and the effects 10^27 of their sds apart, and Hamiltonian paths
#: took steps of 20 in the log sd: the chains stuck there, or ran off to weights of 10^7
#: (300 rows of 6 groups that do not differ, ``tests/estimators/test_group_effects.py``).
GROUP_LOG_SD_MAX_VARIANCE = np.pi**2 / 8

#: Rows of the random subsample whose MAP starts Newton's method on a tall data set.
MAP_SUBSAMPLE_ROWS = 50_000
#: Two searches of the MAP from different starts whose negative log posteriors differ by
#: more than this ended in different modes (one mode's searches agree to about 1e-6).
DISTINCT_MODE_NATS = 0.01


def group_evidence(determined, sizes):
    """The log evidence (nats) for each term's effects against none (its sd at 0), from the
    share of its ``m`` effects the data determine at the empirical-Bayes point (``s = gamma
    / m``), each effect taken as a normal estimate of equal precision: ``m / 2 (log(1 - s)
    + s / (1 - s))``, 0 at ``s = 0`` and growing without bound as ``s`` goes to 1.

    Parameters
    ----------
    determined : ndarray of shape (n_terms,)
        ``s`` in [0, 1].
    sizes : ndarray of shape (n_terms,)
        ``m``, the effects of each term.

    Returns
    -------
    ndarray of shape (n_terms,)
    """
    s = np.minimum(np.asarray(determined, dtype=np.float64), 1.0 - 1e-12)
    return 0.5 * np.asarray(sizes) * (np.log1p(-s) + s / (1.0 - s))


def _derivative_sums(model, theta, order, full, part, begin, end):
    """``(sum w_i l_i, gradient, Hessian)`` over rows ``begin..end-1`` of ``part`` (see
    :meth:`LinearModel.loglik_derivatives`)."""
    K, E, block = model.n_outputs, model.n_extra, part.block
    m = K + E
    d = theta.size
    size = chunk_rows(m, part.n_rows)
    spec = model.spec(part)
    value = 0.0
    gradient = np.zeros(d)
    hessian = np.zeros((d, d) if full else d)
    values = np.empty(size)
    slopes = np.empty((size, m))
    curvatures = np.empty((size, m, m))
    for start, stop in chunks(begin, end, size):
        rows = stop - start
        status = linear_derivatives(spec, theta, start, stop, order, values, slopes,
                                    curvatures)
        if status != STATUS_OK:
            first = part.row_offset + start
            raise ValueError(f"The log-likelihood is not finite in rows {first} to "
                             f"{first + rows - 1} at these parameters.")
        value += values[:rows].sum()
        if order < 1:
            continue
        slope = slopes[:rows]
        linear = part.design_sum(start, stop, slope[:, :K])  # (block, K)
        gradient[:K * block] += linear.T.ravel()
        gradient[K * block:] += slope[:, K:].sum(axis=0)
        if order >= 2:
            model._add_hessian(part, start, stop, curvatures[:rows], hessian, full)
    return value, gradient, hessian


def _prior_scales(prior, theta, fallback=None):
    """Each coordinate's prior sd from the diagonal of its precision at ``theta`` (where
    that is 0: ``fallback``, or 1)."""
    precision = prior.precision(theta, diagonal=True)
    fallback = np.ones(precision.size) if fallback is None else np.sqrt(fallback)
    with np.errstate(divide="ignore"):
        return np.where(precision > 0, 1.0 / np.sqrt(precision), fallback)


def _hessian_products(model, theta, vectors, part, begin, end):
    """The log-likelihood's Hessian at ``theta`` times ``vectors`` (``(d, m)``), summed over
    rows ``begin..end-1`` of ``part`` (see :meth:`LinearModel.hessian_times`)."""
    K, E, block = model.n_outputs, model.n_extra, part.block
    n_u = K + E
    # Four per-row arrays of products (moved, curved and the design's two), about 1 MB each
    # a thread.
    size = max(1, min(chunk_rows(n_u, part.n_rows), 131_072 // (n_u * vectors.shape[1])))
    spec = model.spec(part)
    product = np.zeros_like(vectors)
    values = np.empty(size)
    slopes = np.empty((size, n_u))
    curvatures = np.empty((size, n_u, n_u))
    for start, stop in chunks(begin, end, size):
        rows = stop - start
        status = linear_derivatives(spec, theta, start, stop, 2, values, slopes, curvatures)
        if status != STATUS_OK:
            first = part.row_offset + start
            raise ValueError(f"The log-likelihood is not finite in rows {first} to "
                             f"{first + rows - 1} at these parameters.")
        # Each row's predictors moved along every vector: (rows, K + E, m).
        moved = np.empty((rows, n_u, vectors.shape[1]))
        for k in range(K):
            moved[:, k] = part.design_times(start, stop, vectors[k * block:(k + 1) * block])
        moved[:, K:] = vectors[K * block:]
        curved = np.einsum("rab,rbm->ram", curvatures[:rows], moved)
        for k in range(K):
            part.design_sum(start, stop, curved[:, k], out=product[k * block:(k + 1) * block])
        product[K * block:] += curved[:, K:].sum(axis=0)
    return (product,)


#: Every likelihood family, by class name: a class defined in a file of ``models/``
#: registers itself (``models/__init__.py`` imports every such file).
FAMILIES = {}


def mean_offset(data):
    """The mean of the rows' offsets (0 without): what a log-link family's starting
    intercept leaves to them."""
    return float(np.mean(data.offset)) if data.offset.size else 0.0


class LogLinkMean:
    """The mean of a family with the log link, for the predictions: ``exp(eta)``, which is
    its own third derivative (the second-order predictive mean's bound)."""

    def mean(self, eta, variables):
        return np.exp(eta[..., 0])

    @staticmethod
    def mean_curvature(eta):
        """The mean ``exp(eta)`` and its second derivative, the same."""
        mean = np.exp(eta)
        return mean, mean.copy()

    def third_derivative_bound(self, low, high):
        """The mean ``exp(eta)`` is its own third derivative, largest at ``high``."""
        return np.exp(high)

    @staticmethod
    def mean_third_derivative(eta):
        """The mean's third derivative at ``eta``: ``exp(eta)``."""
        return np.exp(eta)

    def fourth_derivative_bound(self, low, high):
        """The mean's fourth derivative, ``exp(eta)`` too, largest at ``high``."""
        return np.exp(high)


class LinearModel(FireflyBounds):
    """A likelihood family whose row log-likelihood depends on theta only through
    ``u = [W x_i + b, extra]`` (see ``_kernels/specs.py``).

    Subclasses set ``link``, ``link_rows`` (a jitted loop calling the link over a block of
    rows, ``specs.LINK_ROWS``), ``bound_coefficients`` for Firefly, ``n_extra`` and their
    hyper-parameters.

    Attributes
    ----------
    n_outputs : int
        ``K``, the linear predictors per row.
    n_extra : int
        ``E``, parameters beyond the linear coefficients (a log-scale).
    third_derivative : tuple or None
        ``(a, b)`` with ``|d^3 l / d eta^3| <= a exp(b eta)`` (single-output models), for the
        confidence sampler's range bound with control variates; None when there is none.
    proxy_exp_extra : tuple of bool
        For each extra coordinate (a positive parameter sampled as its log), whether the
        control variates' Taylor proxies may read it as the parameter itself, ``exp(v)``,
        where a quadratic in ``v`` fails (``sampling._target.PROXY_LOG_ERROR_LIMIT``): a
        parameter in which the rows' log-likelihood is close to quadratic down to 0, where
        the posterior may reach (a negative binomial's dispersion near the Poisson limit,
        whose log then has a long tail). Empty: none.
    """

    name = None
    link = None
    link_rows = None
    bound_coefficients = None
    n_extra = 0
    third_derivative = None
    proxy_exp_extra = ()
    #: The log-scale ``v`` of the bound's ``exp(-2 v)`` when it is not a parameter.
    bound_log_scale = 0.0
    #: What ``y`` is: ``"classes"`` (indices into the estimator's ``classes_``), ``"counts"``
    #: (non-negative integers, as floats) or ``"real"``.
    outcome = "real"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.link is not None:  # a family, not a shared base of families
            base = cls.__base__
            stale = (cls.link is not getattr(base, "link", None)
                     and cls.link_rows is getattr(base, "link_rows", None))
            if cls.link_rows is None or stale:
                raise TypeError(f"{cls.__name__} sets link but not link_rows (its link over a "
                                f"block of rows, see LinearModel)")
            FAMILIES[cls.__name__] = cls

    def __init__(self, n_outputs=1):
        self.n_outputs = int(n_outputs)

    # --- the parameter layout -------------------------------------------------------------

    def extra_parameters(self):
        """The extra coordinates after the linear blocks, in order: ``(name, forward,
        inverse)`` with the posterior variable ``name = forward(coordinate)`` (e.g. a scale
        sampled as its log: ``("scale", np.exp, np.log)``)."""
        return ()

    def fixed_parameters(self):
        """Parameters of the likelihood that are not sampled but are stored beside the draws
        (as constant draws), by name."""
        return {}

    def posterior_variables(self, draws, n_features, intercept):
        """Named posterior variables from draws of theta ``(..., d)``: ``coef`` ``(..., K,
        D)`` and ``intercept`` ``(..., K)`` (``(..., D)`` and ``(...)`` for one output; zeros
        without an intercept), then each extra and fixed parameter."""
        K = self.n_outputs
        width = n_features + int(intercept)
        linear = self.class_blocks(draws[..., :K * width].reshape(*draws.shape[:-1], K, width))
        coef = linear[..., :n_features]
        offset = linear[..., n_features] if intercept else np.zeros(linear.shape[:-1])
        if self.n_blocks == 1:
            coef, offset = coef[..., 0, :], offset[..., 0]
        variables = {"coef": coef, "intercept": offset}
        extra = draws[..., K * width:]
        for e, (name, forward, _) in enumerate(self.extra_parameters()):
            variables[name] = forward(extra[..., e])
        for name, value in self.fixed_parameters().items():
            variables[name] = np.full(draws.shape[:-1], float(value))
        return variables

    def theta_draws(self, variables, intercept):
        """Draws of theta ``(..., d)`` from named variables: the inverse of
        :meth:`posterior_variables`."""
        coef, offset = variables["coef"], variables["intercept"]
        if self.n_blocks == 1:
            coef, offset = coef[..., None, :], offset[..., None]
        linear = np.concatenate([coef, offset[..., None]] if intercept else [coef], axis=-1)
        linear = self.output_blocks(linear)
        linear = linear.reshape(*linear.shape[:-2], -1)
        extras = [inverse(variables[name])[..., None]
                  for name, _, inverse in self.extra_parameters()]
        return np.concatenate([linear, *extras], axis=-1) if extras else linear

    @property
    def n_blocks(self):
        """The reported blocks of weights (and intercept): one per output, unless the model
        samples them in another basis."""
        return self.n_outputs

    def class_blocks(self, linear):
        """The reported blocks ``(..., n_blocks, B)`` (weights and intercept of each output)
        of theta's linear coordinates ``(..., n_outputs, B)``: the same, unless the model
        samples them in another basis."""
        return linear

    def output_blocks(self, blocks):
        """Theta's linear coordinates from reported blocks: the inverse of
        :meth:`class_blocks`."""
        return blocks

    def u_variables(self, u):
        """The NumPy side's linear predictors ``(n, 1, n_blocks)`` and posterior variables
        (each ``(n, ...)``) at the kernels' ``u`` rows ``(n, K + E)``: the bridge between
        the link and the NumPy side (``tests/models/test_families.py``)."""
        K = self.n_outputs
        variables = {name: forward(u[:, K + j])
                     for j, (name, forward, _) in enumerate(self.extra_parameters())}
        variables.update({name: np.full(len(u), float(value))
                          for name, value in self.fixed_parameters().items()})
        return self.predictors(u[:, None, :K]), variables

    def predictors(self, outputs):
        """The linear predictors the NumPy side reads (``(..., n_blocks)``, as the reported
        blocks give them) from the first ``n_outputs`` entries of the kernels' ``u``."""
        return outputs

    # --- the NumPy side, on draws of the linear predictors ---------------------------------
    # ``eta`` is ``(n_draws, n_rows, K)``; ``variables`` the extra and fixed parameters'
    # draws by name, each ``(n_draws,)``; ``y`` the outcome as the model reads it (class
    # indices, or real values).

    def log_likelihood(self, eta, variables, y):
        """Each row's log-likelihood under each draw: ``(n_draws, n_rows)``."""
        raise NotImplementedError

    def simulate(self, eta, variables, rng):
        """One simulated outcome per draw and row (class indices for classes):
        ``(n_draws, n_rows)``."""
        raise NotImplementedError

    def class_probabilities(self, eta, variables):
        """For classes: each class's probability under each draw ``(n_draws, n_rows,
        n_classes)``."""
        raise NotImplementedError

    def mixture_quantiles(self, eta, variables, quantiles):
        """For real outcomes: quantiles of the posterior-predictive mixture (each draw's
        noise distribution, weighted equally): ``(n_rows, n_quantiles)``."""
        raise NotImplementedError

    def mean(self, eta, variables):
        """For real outcomes and counts: each draw's mean outcome ``(n_draws, n_rows)``."""
        raise NotImplementedError

    def noise_variance(self, eta, variables):
        """For real outcomes and counts: the variance of a new outcome about each draw's
        mean ``(n_draws, n_rows)`` (infinite where the noise has none)."""
        raise NotImplementedError

    #: For one linear predictor: ``third_derivative_bound(low, high)``, a bound on the
    #: absolute third derivative in ``eta`` of the predictions (each class probability, or
    #: the mean) over each row's ``[low, high]`` (arrays of shape (n_rows,)); it lets a
    #: prediction skip the draws where the posterior is narrow
    #: (``linear_model._predictive.SecondOrder``). None: predictions from draws alone.
    third_derivative_bound = None
    #: With ``third_derivative_bound``, a regressor's family: ``mean_curvature(eta)``, the
    #: means at ``eta`` (shape (n_rows,)) and their second derivatives in it; None: the
    #: second-order path takes second differences of the means instead. (A binary
    #: family's probabilities expand through ``BinaryModel.inverse_link_curvature``.)
    mean_curvature = None
    #: With a curvature: ``fourth_derivative_bound(low, high)``, the same bound for the
    #: fourth derivative, and ``mean_third_derivative(eta)`` (a binary family's
    #: ``inverse_link_third_derivative``), the third derivatives at ``eta``: the expansion
    #: then adds its third-order term where the second-order bound is too loose
    #: (``linear_model._predictive.SecondOrder``). None: second order only.
    fourth_derivative_bound = None
    mean_third_derivative = None

    # --- what a model may override -------------------------------------------------------

    def params(self):
        """Hyper-parameters handed to the link (and bound) kernels."""
        return np.zeros(0)

    def initial_theta(self, data, prior):
        """Where the MAP search starts."""
        return np.zeros(self.n_params(data))

    def initial_thetas(self, data, prior):
        """Every start of the MAP search (the search keeps the best log posterior found from
        them): by default :meth:`initial_theta` alone; families whose likelihood can have
        several modes give more (``docs/estimators.md``)."""
        return [self.initial_theta(data, prior)]

    def _best_start(self, data, prior, inv_temperature, full, smooth, starts, random_state):
        """The point of highest log posterior among the MAP searches from each of
        ``starts``, run on a random subsample of ``MAP_SUBSAMPLE_ROWS`` rows (reweighted to
        N) when N is larger than twice that, else on every row.

        Returns
        -------
        start : ndarray of shape (d,)
        n_passes : float
            Full-data passes spent (a subsample's as a fraction).
        modes : list of (float, ndarray of shape (d,))
            The negative log posterior (on the searched rows) and the point of each distinct
            mode found (values more than :data:`DISTINCT_MODE_NATS` apart), lowest first.
        """
        part = (data if data.n_rows <= 2 * MAP_SUBSAMPLE_ROWS
                else data.subsample(MAP_SUBSAMPLE_ROWS, random_state))
        objective = self.negative_log_posterior(part, prior, inv_temperature, full)
        best, best_value, n_passes, found = None, np.inf, 0.0, []
        for start in starts:
            try:
                theta, _, passes = find_map(objective, start, full, smooth,
                                            scale=None if full else _prior_scales(prior, start))
                value = objective(theta, 1)[0]
            except (ValueError, np.linalg.LinAlgError):
                continue  # a start whose search fails (a non-finite likelihood) is dropped
            n_passes += (passes + 1) * part.n_rows / data.n_rows
            found.append((float(value), theta))
            if value < best_value or best is None:
                best, best_value = theta, value
        modes = []
        for value, theta in sorted(found, key=lambda mode: mode[0]):
            if not modes or value - modes[-1][0] > DISTINCT_MODE_NATS:
                modes.append((value, theta))
        if best is None:  # every search failed: the first start, for the usual error
            return starts[0], n_passes, modes
        return best, n_passes, modes

    def lipschitz(self, max_row_norm):
        """A per-row Lipschitz constant of ``l_i`` in theta (Euclidean), from the largest
        ``|[x_i, 1]|``; None when the likelihood has none."""
        return None

    # --- shared -----------------------------------------------------------------------------

    def n_params(self, data):
        return self.n_outputs * data.block + self.n_extra

    def spec(self, data):
        """The plain tuple the kernels take (``specs.LinearSpec``)."""
        return (data.kernel_X, data.kernel_y, data.weights,
                np.ascontiguousarray(self.params(), dtype=np.float64),
                type(self).link, type(self).link_rows, self.n_outputs, self.n_extra,
                int(data.intercept), data.offset)

    def loglik_derivatives(self, data, theta, order=2, full=True):
        """``sum_i w_i l_i`` at ``theta`` and, for ``order`` >= 1, its gradient and, for
        ``order`` 2, its Hessian (``(d, d)``, or the diagonal when not ``full``), in one pass.

        Raises ``ValueError`` naming the first chunk where the log-likelihood is not finite.
        """
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if order >= 2 and full:
            check_dense_matrix(theta.size, "the log-likelihood's Hessian")
        return data.sum_parts(partial(_derivative_sums, self, theta, order, full))

    def hessian_times(self, data, theta, vectors):
        """The Hessian of ``sum_i w_i l_i`` at ``theta`` times ``vectors`` (``(d, m)``), in
        one pass of ``O(N d m)`` without forming the ``(d, d)`` Hessian."""
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        vectors = np.ascontiguousarray(vectors, dtype=np.float64)
        return data.sum_parts(partial(_hessian_products, self, theta, vectors))[0]

    def low_rank_laplace(self, data, prior, inv_temperature, theta, variances, rank,
                         random_state=0):
        """The low-rank-plus-diagonal Laplace covariance at ``theta`` (the MAP): ``rank``
        directions exact, on the prior's diagonal (where a coordinate has no prior
        curvature: its diagonal Laplace ``variances``) or on the diagonal Laplace's, whichever
        leaves the smaller spread (:func:`~skbayes_mh.models._optimize.low_rank_laplace`).

        Returns
        -------
        covariance : LowRankCovariance
        n_passes : int
        """
        def precision_times(vectors):
            # In place, the prior's product made after the pass: the (d, m) blocks are tens
            # of MB on wide data, and a pass holds a few of them already.
            product = self.hessian_times(data, theta, vectors)
            product *= -inv_temperature
            if vectors.shape[1] > 1:  # the pass's blocks, freed in its threads' arenas
                return_freed_memory()
            return prior.precision_times(theta, vectors, out=product)
        return_freed_memory()  # the MAP search's passes' (large chunks of rows, in threads)
        return low_rank_laplace(precision_times, _prior_scales(prior, theta, variances), rank,
                                random_state=random_state, diagonal_sd=np.sqrt(variances))

    def _add_hessian(self, data, start, stop, curvature, hessian, full):
        K, E, block = self.n_outputs, self.n_extra, data.block
        for k in range(K):
            rows_k = slice(k * block, (k + 1) * block)
            for m in range(k, K if full else k + 1):
                gram = data.design_gram(start, stop, curvature[:, k, m], diagonal=not full)
                if not full:
                    hessian[rows_k] += gram
                    continue
                rows_m = slice(m * block, (m + 1) * block)
                hessian[rows_k, rows_m] += gram
                if m != k:
                    hessian[rows_m, rows_k] += gram.T
            for e in range(E):
                extra = K * block + e
                if full:
                    side = data.design_sum(start, stop, curvature[:, k, K + e])
                    hessian[rows_k, extra] += side
                    hessian[extra, rows_k] += side
        for e in range(E):
            for f in range(E):
                if full:
                    hessian[K * block + e, K * block + f] += curvature[:, K + e, K + f].sum()
                elif e == f:
                    hessian[K * block + e] += curvature[:, K + e, K + e].sum()

    def negative_log_posterior(self, data, prior, inv_temperature, full=True):
        """``objective(theta, order) -> (value, gradient, Hessian)`` of the tempered negative
        log posterior, for :func:`find_map`. ``objective.last`` keeps the untempered
        log-likelihood terms ``(theta, sum, gradient, Hessian)`` of its last order-2 call (the
        control variates' sums, when that point becomes their centre)."""
        def objective(theta, order):
            loglik, gradient, hessian = self.loglik_derivatives(data, theta, order, full)
            if order >= 2:
                objective.last = (np.array(theta), loglik, gradient, hessian)
            log_prior, prior_gradient = prior.log_density(theta, want_grad=order >= 1)
            value = -(inv_temperature * loglik + log_prior)
            gradient = -(inv_temperature * gradient + prior_gradient)
            if order >= 2:
                hessian = -inv_temperature * hessian + prior.precision(theta, diagonal=not full)
            return value, gradient, hessian
        objective.last = None
        return objective

    def laplace(self, data, prior, inv_temperature, full=True, theta0=None, random_state=0):
        """The MAP of the tempered posterior and the Laplace approximation there.

        With a smooth prior and a full covariance: Newton's method on full-data passes, from
        the MAP of a random subsample of ``MAP_SUBSAMPLE_ROWS`` rows (its likelihood
        reweighted to N rows) when N is larger, so that a tall data set costs about three
        passes; the trust-region method where Newton's does not converge. Otherwise
        L-BFGS (a Laplace prior is not differentiable at 0) or the diagonal.

        With several starts (:meth:`initial_thetas`) it searches from each and goes on from
        the best; ``self.searched_modes`` lists ``(negative log posterior, point)`` of each
        distinct mode found, lowest first (empty with one start).

        Returns
        -------
        theta_map : ndarray of shape (d,)
        covariance : ndarray of shape (d, d), or (d,) variances when not ``full``
        n_passes : int
            Full-data passes (the subsample's count as a fraction).
        reference : tuple or None
            ``(point, sum_i w_i l_i, gradient, Hessian)`` of the untempered log-likelihood
            at the last point the search evaluated with a full Hessian (within about 0.01
            posterior sd of ``theta_map``): the control variates' centre, at no extra pass.
        """
        if prior.group_sds.size:
            return self._group_laplace(data, prior, inv_temperature, full, theta0,
                                       random_state)
        smooth = not (prior.kind & 3 == 2)  # a Laplace prior is not differentiable at 0
        starts = self.initial_thetas(data, prior) if theta0 is None else [theta0]
        start, n_passes, self.searched_modes = starts[0], 0.0, []
        if len(starts) > 1:
            start, n_passes, self.searched_modes = self._best_start(
                data, prior, inv_temperature, full, smooth, starts, random_state)
        if smooth and full:
            if data.n_rows > 2 * MAP_SUBSAMPLE_ROWS and len(starts) == 1:
                subset = data.subsample(MAP_SUBSAMPLE_ROWS, random_state)
                start, _, sub_passes = find_map(
                    self.negative_log_posterior(subset, prior, inv_temperature, full), start,
                    full, smooth)
                n_passes += sub_passes * subset.n_rows / data.n_rows
            objective = self.negative_log_posterior(data, prior, inv_temperature, full)
            theta, evaluated, _, _, hessian, passes, converged = newton_map(objective, start)
            n_passes += passes
            if converged:
                covariance, _ = laplace_covariance(hessian)
                return theta, covariance, n_passes, objective.last
            start = evaluated
        objective = self.negative_log_posterior(data, prior, inv_temperature, full)
        # Prior-scaled coordinates where the posterior is wide (the diagonal Laplace: many
        # parameters, most informed by few rows); as given where it is tall.
        theta, hessian, passes = find_map(objective, start, full, smooth,
                                          scale=None if full else _prior_scales(prior, start))
        covariance, _ = laplace_covariance(hessian)
        reference = objective.last if full and objective.last is not None and np.array_equal(
            objective.last[0], theta) else None
        return theta, covariance, n_passes + passes, reference

    def _group_laplace(self, data, prior, inv_temperature, full, theta0, random_state):
        """:meth:`laplace` with group-level effects (``prior.group_sds``): the joint
        density of centred effects and their sds has no maximum (it grows without bound
        as an sd and its effects go to 0 together), so the centre is the empirical-Bayes
        point instead: each sd at the value that maximises the evidence of the model with
        the sds fixed (MacKay's fixed point, as ``_evidence.py`` for one global scale: ``sd^2
        = q / gamma``, ``q`` the sum of the term's squared MAP effects, ``gamma`` the
        number of them the data determine), the effects and the other coordinates at their
        MAP given the sds. Each sd's log gets the variance ``1 / (2 gamma + 2 sd^2 /
        scale^2)`` (the curvature of the profile evidence in it, with the hyperprior's) and
        no covariance with the rest. The chains then sample the joint posterior exactly;
        this only places and shapes them. ``self.group_determined`` keeps each term's
        ``gamma / m`` (:data:`GROUP_RESCALE_MAX_DETERMINED`), ``self.group_evidence`` its
        :func:`group_evidence`."""
        sds = prior.group_sds
        effects = [np.flatnonzero(prior.scale_of == a) for a in sds]
        log_sds = np.log(prior.scales[sds])  # start at the hyperprior's scale
        theta, n_passes, gammas = theta0, 0.0, np.ones(sds.size)
        for _ in range(GROUP_SD_MAX_ITERATIONS):
            fixed = prior.with_group_sds(log_sds)
            theta, covariance, passes, reference = self.laplace(
                data, fixed, inv_temperature, full, theta0=theta, random_state=random_state)
            n_passes += passes
            variances = np.diag(covariance) if np.ndim(covariance) == 2 else covariance
            updated = log_sds.copy()
            for t, members in enumerate(effects):
                sd2 = np.exp(2.0 * log_sds[t])
                m = members.size
                q = float(np.sum((theta[members] - prior.locations[members]) ** 2))
                gamma = m - float(np.sum(variances[members])) / sd2
                gammas[t] = min(max(gamma, 1e-3), float(m))
                step = 0.5 * np.log(max(q, 1e-300) / gammas[t]) - log_sds[t]
                updated[t] = log_sds[t] + np.clip(step, -1.0, 1.0)
            updated = np.maximum(updated, np.log(prior.scales[sds] * GROUP_SD_MIN_RATIO))
            moved, log_sds = float(np.max(np.abs(updated - log_sds))), updated
            if moved < GROUP_SD_TOLERANCE:
                break
        theta = np.array(theta, dtype=np.float64)
        theta[sds] = log_sds
        sd_variances = np.minimum(1.0 / (2.0 * gammas + 2.0 * np.exp(2.0 * log_sds)
                                         / prior.scales[sds] ** 2),
                                  GROUP_LOG_SD_MAX_VARIANCE)
        sizes = np.array([members.size for members in effects])
        self.group_determined = gammas / sizes
        self.group_evidence = group_evidence(self.group_determined, sizes)
        covariance = np.array(covariance, dtype=np.float64)
        # A correlated grouping's correlations start at 0 (their unconstrained coordinates'
        # LKJ mode), each with the variance of a correlation estimated from its levels.
        correlations = prior.group_correlations
        theta[correlations] = 0.0
        correlation_variances = np.zeros(correlations.size)
        for n_levels, members, _, _ in prior.correlated_groupings():
            correlation_variances[np.searchsorted(correlations, members)] = 1.0 / (n_levels + 1)
        fixed_coordinates = np.concatenate([sds, correlations])
        fixed_variances = np.concatenate([sd_variances, correlation_variances])
        if covariance.ndim == 2:
            covariance[fixed_coordinates, :] = 0.0
            covariance[:, fixed_coordinates] = 0.0
            covariance[fixed_coordinates, fixed_coordinates] = fixed_variances
        else:
            covariance[fixed_coordinates] = fixed_variances
        return theta, covariance, n_passes, reference



#: Grid step and reach (in ``|eta|``) of a binary family's third-derivative envelope; beyond
#: the reach the envelope's last value (the derivative's size there, a few 1e-17 for the
#: logistic and far less for the probit) stands.
ENVELOPE_STEP = 1.0 / 64
ENVELOPE_REACH = 40.0


@functools.lru_cache(maxsize=None)
def _derivative_envelope(family, order):
    """``max_{|t| >= a} |F^(order)(t)|`` (``order`` 3 or 4) on the grid ``a = 0,
    ENVELOPE_STEP, ...`` (each value the largest over a finer grid of its cell and
    beyond)."""
    fine = np.arange(0.0, ENVELOPE_REACH + ENVELOPE_STEP, ENVELOPE_STEP / 16)
    derivative = (family.inverse_link_third_derivative if order == 3
                  else family.inverse_link_fourth_derivative)
    # At -|t|, where F is small and its derivatives (|F^(k)| is even) accurate to the last
    # digits.
    size = np.abs(derivative(-fine))
    envelope = np.maximum.accumulate(size[::-1])[::-1][::16]
    return envelope * (1.0 + 1e-3)  # the finer grid's spacing: a margin of a thousandth


def _envelope_bound(family, order, low, high):
    """The largest ``|F^(order)|`` over ``[low, high]`` (arrays), at most: the envelope
    ``max_{|t| >= a} |F^(order)(t)|`` at the interval's smallest ``|eta|``, ``a``, read at
    the grid point at or below ``a`` (the envelope does not increase)."""
    envelope = _derivative_envelope(family, order)
    nearest = np.where((low <= 0.0) & (high >= 0.0), 0.0,
                       np.minimum(np.abs(low), np.abs(high)))
    index = np.minimum((nearest / ENVELOPE_STEP).astype(np.intp), envelope.size - 1)
    return envelope[index]


class BinaryModel(LinearModel):
    """The NumPy half every binary family shares (labels 0 and 1, one linear predictor):
    ``p(y = 1 | eta) = F(eta)`` for a symmetric inverse link (``F(-eta) = 1 - F(eta)``). A
    family gives ``inverse_link`` (``F``, taking ``out=`` as a ufunc does) and
    ``log_inverse_link`` (``log F``, accurate in the tails)."""

    outcome = "classes"
    inverse_link = None
    log_inverse_link = None
    #: ``inverse_link_curvature(eta)``: ``F(eta)`` and ``F''(eta)`` (an odd function for a
    #: symmetric ``F``), from one evaluation of ``F``; ``F'''(eta)``, an even one.
    inverse_link_curvature = None
    inverse_link_third_derivative = None
    #: ``inverse_link_fourth_derivative(eta)``: ``F''''(eta)``, an odd one.
    inverse_link_fourth_derivative = None
    #: Whether ``class_probabilities`` of float32 linear predictors are float32 values
    #: within 2.5e-7 of the float64 ones (the logistic's): predictions within a tolerance
    #: of ``linear_model._predictive.SINGLE_PRECISION_MIN_TOL`` or more then average
    #: every draw in float32 (about three times faster).
    single_precision_probabilities = False

    def third_derivative_bound(self, low, high):
        """The largest ``|F'''|`` over ``[low, high]`` (``1 - F`` has the same), at most."""
        return _envelope_bound(type(self), 3, low, high)

    def fourth_derivative_bound(self, low, high):
        """The largest ``|F''''|`` over ``[low, high]`` (``1 - F`` has the same), at most."""
        return _envelope_bound(type(self), 4, low, high)

    def log_likelihood(self, eta, variables, y):
        """``log F((2 y - 1) eta)`` for labels ``y`` in {0, 1}."""
        return self.log_inverse_link((2.0 * y - 1.0) * eta[..., 0])

    def class_probabilities(self, eta, variables):
        """``[1 - F(eta), F(eta)]`` in ``eta``'s memory layout (with the draws contiguous,
        the mean over them then reads contiguous values)."""
        probabilities = np.empty_like(eta, shape=eta.shape[:-1] + (2,))
        self.inverse_link(eta[..., 0], out=probabilities[..., 1])
        np.subtract(1.0, probabilities[..., 1], out=probabilities[..., 0])
        return probabilities

    def simulate(self, eta, variables, rng):
        return (rng.random(eta.shape[:2]) < self.inverse_link(eta[..., 0])).astype(int)
