"""What the regressions with a sampled dispersion share (negative binomial, Gamma): their
parameters, which are the same, and a positive target."""
import numbers

from sklearn.utils._param_validation import Interval, StrOptions

from ..models._prior import GAUSSIAN, LAPLACE
from ._base import LinearMHEstimator

#: The weights' prior families by name.
PRIORS = {"gaussian": GAUSSIAN, "laplace": LAPLACE}


class _DispersionRegression(LinearMHEstimator):
    """The shell of a log-link regression whose dispersion is sampled as its log, under an
    Exponential prior of mean ``dispersion_prior_scale``; its family has no Firefly bounds.
    Subclasses give ``_fit_doc``, ``_problem`` and ``_family``."""

    _firefly_proposal = None  # the families have no Firefly bounds
    _parameter_constraints = {
        **LinearMHEstimator._parameter_constraints,
        "prior": [StrOptions(set(PRIORS))],
        "dispersion_prior_scale": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(self, *, acceptance="auto", proposal="auto", step_size="auto",
                 prior="gaussian", prior_scale="auto", autoscale=True, fit_intercept=True,
                 intercept_prior_scale=10.0, dispersion_prior_scale=1.0, temperature=1.0,
                 n_draws="auto", max_time=None, n_warmup="auto", thin="auto", n_chains=4,
                 n_jobs=None, random_state=None, verbose=0, warm_start=False,
                 predict_tol=1e-4, group_effects=None,
                 group_correlation=True):
        self._store_parameters(locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags
