"""Firefly Monte Carlo as an acceptance scheme: exact, touching only the bright points."""
import numbers

from sklearn.utils._param_validation import Interval, StrOptions

from .._kernels.firefly import EXPLICIT, IMPLICIT, MALA, MH, SLICE
from ._base import AcceptanceTest

UPDATES = {"mh": MH, "mala": MALA, "slice": SLICE}
RESAMPLES = {"implicit": IMPLICIT, "explicit": EXPLICIT}
BOUNDS = ("map", "untuned")


class Firefly(AcceptanceTest):
    """Firefly Monte Carlo (Maclaurin and Adams): exact MCMC on the joint of the parameters
    and per-datum brightness variables, with collapsible lower bounds on the likelihoods.

    Each iteration updates theta on the pseudo-posterior
    ``p(theta) prod_n B_n(theta) prod_{bright} (L_n / B_n - 1)``, whose bound product is
    precomputed as sufficient statistics, so the update queries only the bright points.
    Then it updates the brightness variables given theta. The theta-marginal of the chain
    is the exact posterior. It needs a model with a collapsible bound: logistic regression
    (Jaakkola-Jordan) and softmax regression (Bohning). Other models raise a ``ValueError``.

    Parameters
    ----------
    bound : {"map", "untuned"}, default="map"
        ``"map"``: make each point's bound tight at the MAP (found with L-BFGS), so that
        few points are bright near the posterior mode. ``"untuned"``: the paper's untuned
        bound, ``xi = 1.5`` for logistic regression and ``psi = 0`` for softmax.
    resample : {"implicit", "explicit"}, default="implicit"
        ``"implicit"`` (the paper's Algorithm 2): every bright point is proposed dark (no
        query: its likelihood is cached), and each dark point is proposed bright with
        probability ``q_db``, visited by geometric jumps. The cost scales with the points
        proposed, not with N. ``"explicit"`` (Algorithm 1): ``resample_fraction`` of the
        points, chosen at random, are drawn from ``p(z_n | theta)``.
    q_db : float or None, default=None
        Probability in (0, 1] of proposing a dark point bright. ``None``: adapted in
        burn-in so that the expected number of dark proposals equals the mean bright
        count (at least one point per iteration), then frozen.
    update : {"mala", "mh", "slice"}, default="mala"
        Parameter update on the pseudo-posterior. ``"mh"``: random walk. ``"mala"``:
        Langevin with the gradient of the collapsed bound and the bright points. Both are
        preconditioned by the Laplace covariance at the MAP, and their step is tuned in
        burn-in toward 0.234 and 0.574 acceptance. ``"slice"``: slice sampling along a
        random direction of that covariance (stepping out, then shrinkage).
    resample_fraction : float, default=0.1
        Fraction of the points redrawn per iteration when ``resample="explicit"``.

    References
    ----------
    D. Maclaurin, R. P. Adams. "Firefly Monte Carlo: Exact MCMC with Subsets of Data".
    UAI 2014.

    Examples
    --------
    >>> from skbayes_mh.acceptance import Firefly
    >>> Firefly(update="mh").target_acceptance_rate
    0.234
    """

    name = "firefly"
    exact = True
    _parameter_constraints = {
        "bound": [StrOptions(set(BOUNDS))],
        "resample": [StrOptions(set(RESAMPLES))],
        "q_db": [Interval(numbers.Real, 0, 1, closed="right"), None],
        "update": [StrOptions(set(UPDATES))],
        "resample_fraction": [Interval(numbers.Real, 0, 1, closed="right")],
    }

    def __init__(self, bound="map", resample="implicit", q_db=None, update="mala",
                 resample_fraction=0.1):
        self.bound = bound
        self.resample = resample
        self.q_db = q_db
        self.update = update
        self.resample_fraction = resample_fraction

    @property
    def target_acceptance_rate(self):
        """0.234 for random-walk MH, 0.574 for MALA (optimal scaling), NaN for slice."""
        return {"mh": 0.234, "mala": 0.574}.get(self.update, float("nan"))
