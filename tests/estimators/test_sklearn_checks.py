"""scikit-learn's estimator checks over every registered estimator
(``skbayes_mh.linear_model.ESTIMATORS``): each at its defaults with short chains, and the
variants below (another acceptance test, link or prior). A new estimator is checked at its
defaults without editing this file."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from skbayes_mh.acceptance import MinibatchBarker
from skbayes_mh.linear_model import ESTIMATORS

from _models import ROBUST_CHECKS, STOCHASTIC_CHECKS

FAST = dict(n_draws=60, n_warmup=60, n_chains=2)
#: Settings beyond the defaults, by estimator.
VARIANTS = {
    "MinibatchMHLogisticRegression": [dict(acceptance="metropolis"),
                                      dict(acceptance=MinibatchBarker(batch_size=20)),
                                      dict(link="probit")],
    "FireflySoftmaxClassifier": [dict(acceptance="minibatch")],
    "RobustTRegression": [dict(acceptance="minibatch", prior="gaussian")],
    "MinibatchMHPoissonRegression": [dict(acceptance="metropolis", prior="laplace")],
    "NegativeBinomialRegression": [dict(acceptance="minibatch", prior="laplace")],
}
#: Checks expected to fail, by estimator (the reasons are in ``_models.py``).
EXPECTED_FAILURES = {"RobustTRegression": ROBUST_CHECKS}


def _estimators():
    return [cls(**settings, **FAST) for name, cls in sorted(ESTIMATORS.items())
            for settings in [{}] + VARIANTS.get(name, [])]


def test_every_variant_names_a_registered_estimator():
    assert set(VARIANTS) <= set(ESTIMATORS)


@parametrize_with_checks(_estimators(), expected_failed_checks=lambda estimator:
                         EXPECTED_FAILURES.get(type(estimator).__name__, STOCHASTIC_CHECKS))
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)
