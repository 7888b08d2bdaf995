"""scikit-learn's estimator checks over every registered estimator
(``skbayes_mh.linear_model.ESTIMATORS``): each at its defaults with short chains, and the
variants below (another acceptance test, link or prior). A new estimator is checked at its
defaults without editing this file. A check is expected to fail only where its written
reason holds for the estimator's settings, and strictly (``xfail_strict``): one that
passes fails the run."""
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skbayes_mh import GammaRegression, OrdinalRegression
from skbayes_mh._core.auto import choose_acceptance
from skbayes_mh.acceptance import MinibatchBarker
from skbayes_mh.linear_model import ESTIMATORS

from _models import (DRAWS_DIFFER_BECAUSE, EXACT_FIT, EXACT_FIT_CHECKS, FAST, TOO_FEW_ROWS,
                     UNORDERED_BLOBS, WEIGHT_EQUIVALENCE_CHECKS, WEIGHTS_AS_REPEATS,
                     target_kind)

#: Settings beyond the defaults, by estimator.
VARIANTS = {
    "MinibatchMHLogisticRegression": [dict(acceptance="metropolis"),
                                      dict(acceptance=MinibatchBarker(batch_size=20)),
                                      dict(link="probit")],
    "FireflySoftmaxClassifier": [dict(acceptance="minibatch")],
    # A fixed noise scale makes the posterior proper on data a line fits exactly.
    "RobustTRegression": [dict(acceptance="minibatch", prior="gaussian"), dict(scale=1.0)],
    "MinibatchMHPoissonRegression": [dict(acceptance="metropolis", prior="laplace")],
    "NegativeBinomialRegression": [dict(acceptance="minibatch", prior="laplace")],
}
#: The weight-equivalence checks' data: 27 rows at most (the repeated ones), 30 features.
CHECK_ROWS, CHECK_FEATURES = 27, 30


def _estimators():
    return [cls(**settings, **FAST) for name, cls in sorted(ESTIMATORS.items())
            for settings in [{}] + VARIANTS.get(name, [])]


def expected_failures(estimator):
    """The checks ``estimator`` fails by design, each with its reason (``_models.py``), from
    its settings.

    A sampled Student-t noise scale (``scale=None``) is refused on data a linear function
    fits exactly, and a Gamma regression on no more rows than coefficients. An ordinal model does not separate classes that have no order. Otherwise only the weight-equivalence checks fail, for each cause of
    different draws that the estimator's acceptance test (``"auto"`` resolved for the
    checks' rows), prior and family bring; with none of them they must pass.

    Parameters
    ----------
    estimator : estimator instance
        One of :func:`_estimators`.

    Returns
    -------
    dict
        Check name -> reason.
    """
    params = estimator.get_params()
    if isinstance(estimator, OrdinalRegression):
        unordered = {"check_classifiers_train": UNORDERED_BLOBS}
    else:
        unordered = {}
    if "scale" in params and params["scale"] is None:
        return {**dict.fromkeys(EXACT_FIT_CHECKS, EXACT_FIT),
                **dict.fromkeys(WEIGHT_EQUIVALENCE_CHECKS, TOO_FEW_ROWS)}
    if isinstance(estimator, GammaRegression):
        return dict.fromkeys(WEIGHT_EQUIVALENCE_CHECKS, TOO_FEW_ROWS)
    acceptance = choose_acceptance(params["acceptance"], CHECK_ROWS, CHECK_FEATURES + 1)
    prior = params.get("prior", "gaussian")  # the estimators without the choice: Gaussian
    causes = []
    if not acceptance.reads_all_rows:
        causes.append("random_rows")
    if prior == "gaussian":  # and more features than rows
        causes.append("rows_span")
    if prior == "laplace":
        causes.append("laplace_map")
    if target_kind(type(estimator)) in ("counts", "positive"):
        causes.append("count_start")
    if not causes:
        return unordered
    reason = WEIGHTS_AS_REPEATS + "; ".join(DRAWS_DIFFER_BECAUSE[cause] for cause in causes)
    return {**dict.fromkeys(WEIGHT_EQUIVALENCE_CHECKS, reason), **unordered}


def test_every_variant_names_a_registered_estimator():
    assert set(VARIANTS) <= set(ESTIMATORS)


#: What a regressor of proportions (``target_kind`` ``"proportions"``) says to targets
#: outside [0, 1]. scikit-learn's checks make real-valued targets, and no tag of theirs
#: bounds them: a check that fails with this refusal (raised, or the cause of the check's
#: own error) is skipped (tests/estimators/test_binomial.py fits such estimators on
#: proportions), any other failure fails.
NOT_PROPORTIONS = "needs proportions y in [0, 1]"


def refused_targets(error):
    """Whether ``error`` or an error it was raised from is the refusal of targets that are
    not proportions."""
    while error is not None:
        if isinstance(error, ValueError) and NOT_PROPORTIONS in str(error):
            return True
        error = error.__cause__ or error.__context__
    return False


@parametrize_with_checks(_estimators(), expected_failed_checks=expected_failures)
def test_scikit_learn_estimator_checks(estimator, check):
    if target_kind(type(estimator)) != "proportions":
        check(estimator)
        return
    try:
        check(estimator)
    except (ValueError, AssertionError) as error:
        if not refused_targets(error):
            raise
        pytest.skip("the check's targets are not proportions")
