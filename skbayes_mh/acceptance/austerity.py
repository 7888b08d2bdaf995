"""The sequential t-test of Korattikara, Chen and Welling."""
import numbers

import numpy as np
from scipy import stats
from sklearn.utils._param_validation import Interval, StrOptions

from .._kernels.austerity import random_walk_error
from .._kernels.austerity import AusterityParams, austerity_op
from ._base import AcceptanceTest


class Austerity(AcceptanceTest):
    """The approximate Metropolis-Hastings test of "Austerity in MCMC Land" (Algorithm 1).

    Per test: draw ``u ~ U(0, 1)`` and set ``mu0 = (log u - log_psi) / N`` (``log_psi`` the
    log prior and proposal ratios); the exact test accepts iff the mean over all N rows of
    ``lambda_i = (l_i(theta') - l_i(theta)) / K`` exceeds ``mu0``. Grow a random minibatch
    (without replacement) by ``batch_size`` rows until a t-test of ``mean - mu0`` (standard
    error with the finite-population correction) has a Student-t tail probability below
    ``epsilon``; decide exactly when all N rows are used. With ``epsilon -> 0`` it is the
    exact Metropolis-Hastings test.

    ``epsilon`` is the level of each stage, not a bound on the error: over all stages the
    decision can be wrong with a larger probability. Their Section 5 error analysis is
    implemented: :meth:`decision_error` (the probability of a wrong decision for a given
    standardised effect, under the Gaussian random-walk model), :meth:`acceptance_error`
    (the predicted error in acceptance probability for a pair of states),
    :meth:`worst_case_error` (its supremum, the test's stated tolerance), and the
    conservative design :meth:`conservative` that picks ``batch_size`` and ``epsilon``
    from a grid for a target worst-case error.

    Parameters
    ----------
    epsilon : float, default=0.05
        Tail probability at which a sequential stage decides, in (0, 1).
    batch_size : int, default=500
        Rows in the first minibatch and added at each stage (>= 2).
    control_variates : "auto" or bool, default="auto"
        Read each row's log-likelihood ratio as a residual against its second-order Taylor
        proxy around the MAP (the proxies' full-data sum is exact and costs O(d^2)): the
        residuals are small near the MAP, so far fewer rows decide. ``"auto"``: whenever
        the model gives each row's gradient and Hessian (every estimator's model does;
        :func:`skbayes_mh.sample` when given ``gradient`` and ``hessian``).

    References
    ----------
    A. Korattikara, Y. Chen, M. Welling. "Austerity in MCMC Land: Cutting the
    Metropolis-Hastings Budget". ICML 2014.

    Examples
    --------
    >>> from skbayes_mh.acceptance import Austerity
    >>> Austerity(epsilon=0.01).validate()
    Austerity(epsilon=0.01)
    """

    name = "austerity"
    subsampling = True
    _decision = austerity_op
    _parameter_constraints = {
        "epsilon": [Interval(numbers.Real, 0, 1, closed="neither")],
        "batch_size": [Interval(numbers.Integral, 2, None, closed="left")],
        "control_variates": [StrOptions({"auto"}), "boolean"],
    }

    def __init__(self, epsilon=0.05, batch_size=500, control_variates="auto"):
        self._store_parameters(locals())

    def _kernel_params(self, lipschitz=None, max_weight=1.0, cv_bounds_range=False):
        return AusterityParams(batch_size=self.batch_size, epsilon=self.epsilon)

    def _stages(self, n_data):
        """Rows read at each sequential stage before all N, and the stages' t thresholds."""
        self.validate()
        rows = np.arange(self.batch_size, n_data, self.batch_size, dtype=float)
        return rows, stats.t.isf(self.epsilon, rows - 1.0)

    def decision_error(self, effect, n_data, n_grid=160):
        """Probability of a wrong decision and expected rows read, under the Gaussian
        random-walk model of the sequential test (their Section 5).

        The model: per-datum ratios with mean ``mu`` and population standard deviation
        ``sigma``, sampled without replacement, with the sample standard deviation taken
        equal to ``sigma``. The error then depends only on the standardised effect
        ``z = (mu - mu0) sqrt(N) / sigma``, on N, ``batch_size`` and ``epsilon``.

        Parameters
        ----------
        effect : float or array-like of shape (n_effects,)
            Standardised effects ``z``; the exact decision is "accept" iff ``z > 0``.
        n_data : int
            Rows in the data set, N.
        n_grid : int, default=160
            Points carrying the density of the walk (the computation is deterministic).

        Returns
        -------
        error : ndarray of shape (n_effects,)
            Probability that the decision differs from the exact test's.
        expected_rows : ndarray of shape (n_effects,)
            Expected rows read per test.
        """
        rows, thresholds = self._stages(int(n_data))
        effects = np.atleast_1d(np.asarray(effect, dtype=float))
        out = np.array([random_walk_error(z, int(n_data), rows, thresholds, int(n_grid))
                        for z in effects])
        return out[:, 0], out[:, 1]

    def acceptance_error(self, delta, spread, n_data, n_nodes=48):
        """Predicted error in acceptance probability for one pair of states.

        Parameters
        ----------
        delta : float
            The full-data log acceptance ratio (log prior and proposal ratios included).
        spread : float
            Population standard deviation of the per-datum log-likelihood ratios
            ``(l_i(theta') - l_i(theta)) / K``.
        n_data : int
            Rows in the data set, N.
        n_nodes : int, default=48
            Gauss-Legendre nodes on each side of ``u = exp(delta)``, where the exact decision
            flips, in the integral over the uniform ``u``.

        Returns
        -------
        error : float
            Predicted acceptance probability minus the exact ``min(1, exp(delta))``.
        expected_rows : float
            Expected rows read per test.
        """
        nodes, weights = np.polynomial.legendre.leggauss(int(n_nodes))
        edges = [0.0, min(1.0, float(np.exp(delta))), 1.0]
        u, w = [], []
        for a, b in zip(edges[:-1], edges[1:]):
            if b > a:
                u.append(a + (b - a) * (nodes + 1.0) / 2.0)
                w.append(weights * (b - a) / 2.0)
        u, w = np.concatenate(u), np.concatenate(w)
        effects = (delta - np.log(u)) / (spread * np.sqrt(n_data))
        error, rows = self.decision_error(effects, n_data)
        accept = np.sum(w * np.where(effects > 0.0, 1.0 - error, error))
        return float(accept - min(1.0, np.exp(delta))), float(np.sum(w * rows))

    def worst_case_error(self, n_data):
        """Supremum over effects of :meth:`decision_error`: the largest probability of a
        wrong decision for any pair of states, and so a bound on the error in acceptance
        probability for any ``delta`` and spread. It is reached as the effect tends to 0,
        where it is half the probability of stopping before all N rows are read.

        Parameters
        ----------
        n_data : int
            Rows in the data set, N.

        Returns
        -------
        float
        """
        error, _ = self.decision_error(1e-9, n_data)
        return float(error[0])

    normal_mean = True

    #: :meth:`design_error` integrates over ``u`` with this many nodes a side (about 20 ms
    #: a move) ...
    DESIGN_ERROR_NODES = 16
    #: ... at this many of the moves.
    DESIGN_ERROR_MOVES = 5

    def design_error(self, moves):
        """The mean absolute :meth:`acceptance_error` at up to
        :data:`DESIGN_ERROR_MOVES` of ``moves`` (their log ratios and spreads; 0 for
        none).

        Parameters
        ----------
        moves : Moves or empty sequence
            Pairs of states with ``deltas``, ``spreads`` and ``n_data``.

        Returns
        -------
        float
        """
        if not len(moves):
            return 0.0
        deltas, spreads = moves.deltas, moves.spreads
        picked = np.linspace(0, deltas.size - 1, min(deltas.size, self.DESIGN_ERROR_MOVES))
        with np.errstate(over="ignore"):  # exp(delta) of a far move: its u-interval is empty
            return float(np.mean([abs(self.acceptance_error(
                deltas[k], spreads[k], moves.n_data, self.DESIGN_ERROR_NODES)[0])
                for k in picked.round().astype(int)]))

    def stated_error(self, n_data=None):
        """The worst-case error for ``n_data`` rows (:meth:`worst_case_error`); without
        ``n_data``, ``epsilon``, the level of each stage.

        Parameters
        ----------
        n_data : int or None, default=None
            Rows in the data set, N.

        Returns
        -------
        float
        """
        if n_data is None:
            return float(self.epsilon)
        return self.worst_case_error(n_data)

    @classmethod
    def conservative(cls, n_data, max_error=0.01, batch_sizes=None, epsilons=None,
                     effects=None):
        """The conservative design (their Section 5): the ``batch_size`` and ``epsilon``
        from a grid whose worst-case error is at most ``max_error`` and which read the
        fewest rows, averaged over a grid of standardised effects.

        Parameters
        ----------
        n_data : int
            Rows in the data set, N.
        max_error : float, default=0.01
            Largest allowed :meth:`worst_case_error`.
        batch_sizes : array-like of int or None, default=None
            Candidates; None: ``N / 200 .. N / 5`` on a geometric grid (at least 2).
        epsilons : array-like of float or None, default=None
            Candidates; None: ``1e-4 .. 0.2`` on a geometric grid.
        effects : array-like of float or None, default=None
            Standardised effects ``z`` over which the expected rows are averaged; None: 41
            points evenly in [0, 10] (the cost is symmetric in ``z``).

        Returns
        -------
        Austerity

        Raises
        ------
        ValueError
            If no candidate meets ``max_error``.
        """
        if not 0.0 < max_error < 0.5:
            raise ValueError(f"max_error must be in (0, 0.5), got {max_error!r}.")
        if batch_sizes is None:
            batch_sizes = np.unique(np.maximum(2, np.geomspace(n_data / 200, n_data / 5, 8)
                                               .astype(int)))
        if epsilons is None:
            epsilons = np.geomspace(1e-4, 0.2, 10)
        effects = np.linspace(0.0, 10.0, 41) if effects is None else np.asarray(effects)
        best, best_rows = None, np.inf
        for batch_size in batch_sizes:
            for epsilon in epsilons:
                candidate = cls(epsilon=float(epsilon), batch_size=int(batch_size))
                if candidate.worst_case_error(n_data) > max_error:
                    continue
                rows = candidate.decision_error(effects, n_data)[1].mean()
                if rows < best_rows:
                    best, best_rows = candidate, rows
        if best is None:
            raise ValueError(f"No batch size and epsilon in the grid reach a worst-case error "
                             f"of {max_error} on {n_data} rows; widen the grid.")
        return best
