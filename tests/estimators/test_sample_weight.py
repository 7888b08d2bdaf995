"""``sample_weight``: each row's log-likelihood is multiplied by its weight, in every
acceptance test, in Firefly's bounds and in the autoscaled priors. For every registered
estimator (``skbayes_mh.linear_model.ESTIMATORS``: a new one is covered without editing this
file), integer weights must give the posterior of the data with each row repeated that many
times, and fractional weights summing to one over copies of a row the posterior of the row
once, within Monte Carlo error (``tests/_stats.py``: each test is sized to see a 0.1 sd
shift of a mean or a 10% error in an sd); weights of one give the unweighted fit draw for
draw."""
import numpy as np
import pytest
from sklearn.utils import get_tags

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.linear_model import ESTIMATORS

from _models import target_kind
from _stats import assert_same_distribution

#: The weighted fit's seed; the reference fit takes the next one, so that the two sides are
#: independent chains (equal draws would prove nothing statistically). Sweep it to check
#: the tests' false-alarm rate.
SEED = 0
#: Rows of the data (before repeating or copying them): small, so that 24,000 draws a side
#: take about a second; the tests compare the posteriors in their own sds, whatever their
#: width.
N_ROWS = 100
#: The exact test with MALA: 0.3 to 0.5 effective draws per draw on these posteriors of 3 to
#: 6 parameters, so 2 x 12,000 draws on each side see a mean shift of 0.07 to 0.09 sd. Not
#: HMC, though it mixes twice as fast for the means: its draws' squares are about half as
#: efficient as the draws (about 4,500 against 8,500 effective draws of 12,000), so it sees
#: an sd error no better; MALA's squares mix as its draws do.
EXACT = dict(acceptance="metropolis", proposal="mala", n_draws=12000, n_warmup=1000,
             n_chains=2, thin=1)
#: Firefly with its own proposal (MALA, or slice for the Student-t regression: HMC's path
#: would need the brightness variables held fixed). Its draws are cheap but correlated (the
#: brightness variables move a few at a time): thinned by 10 (``thin="auto"`` picks 5 to
#: 10 here).
FIREFLY = dict(acceptance="firefly", n_draws=7000, n_warmup=1000, n_chains=2, thin=10)
#: The minibatch Barker test with HMC on tall data (its minibatches of 100 rows grow until
#: the log ratio's estimate is precise enough): it accepts about a third of the proposals,
#: which leaves the draws' squares as efficient as the draws.
MINIBATCH = dict(acceptance="minibatch", proposal="hmc", n_draws=15000, n_warmup=1000,
                 n_chains=2, thin=1)
#: The estimators whose family has Firefly bounds (the others refuse ``"firefly"``).
FIREFLY_ESTIMATORS = {name: cls for name, cls in ESTIMATORS.items()
                      if cls._firefly_proposal is not None}


def make_data(estimator_class, n_rows, seed=0):
    """``n_rows`` rows of two features on different scales away from 0 (so that centring
    and autoscaling matter) and the ``y`` the estimator fits (``target_kind``): two classes
    (three for a multiclass classifier), over-dispersed counts (a negative binomial's
    dispersion well inside its prior), proportions of five trials, or a real outcome with
    Student-t noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 2)) * [1.0, 2.0] + [0.5, -1.0]
    eta = X @ [0.8, -0.3] + 0.2
    kind = target_kind(estimator_class)
    if kind == "classification":
        multiclass = get_tags(estimator_class()).classifier_tags.multi_class
        y = np.digitize(eta + rng.logistic(size=n_rows), [-0.5, 0.5] if multiclass else [0.0])
    elif kind == "counts":
        y = rng.poisson(np.exp(0.5 + 0.5 * eta) * rng.gamma(2.0, 0.5, size=n_rows))
    elif kind == "positive":
        y = rng.gamma(4.0, np.exp(0.5 + 0.5 * eta) / 4.0)
    elif kind == "proportions":
        y = rng.binomial(5, 1.0 / (1.0 + np.exp(-eta))) / 5.0
    else:
        y = eta + 0.5 * rng.standard_t(4, size=n_rows)
    return X, y


def theta_draws(estimator_class, settings, seed, X, y, sample_weight=None):
    """The sampled parameters' draws ``(chains, draws, k)`` of a fit."""
    estimator = estimator_class(random_state=seed, **settings)
    return estimator.fit(X, y, sample_weight=sample_weight)._theta_draws()


def assert_integer_weights_are_repeated_rows(estimator_class, settings, n_rows):
    X, y = make_data(estimator_class, n_rows)
    weights = np.random.default_rng(1).integers(1, 4, size=n_rows)
    weighted = theta_draws(estimator_class, settings, SEED, X, y, weights)
    repeated = theta_draws(estimator_class, settings, SEED + 1, np.repeat(X, weights, axis=0),
                           np.repeat(y, weights))
    assert_same_distribution(weighted, repeated, label=estimator_class.__name__)


@pytest.mark.parametrize("estimator_class", ESTIMATORS.values(), ids=list(ESTIMATORS))
def test_integer_weights_are_repeated_rows(estimator_class):
    assert_integer_weights_are_repeated_rows(estimator_class, EXACT, N_ROWS)


@pytest.mark.parametrize("estimator_class", FIREFLY_ESTIMATORS.values(),
                         ids=list(FIREFLY_ESTIMATORS))
def test_integer_weights_are_repeated_rows_firefly(estimator_class):
    """In Firefly's collapsed bounds too (each row's bound weighted as its log-likelihood)."""
    assert_integer_weights_are_repeated_rows(estimator_class, FIREFLY, 300)


def test_integer_weights_are_repeated_rows_minibatch():
    """In the minibatch test's estimate of the log ratio, its variance and its control
    variates, on 3,000 rows. One estimator: the weights enter these sums in code the
    families share (each family's weighted log-likelihood is tested above), and each
    family's pair of fits takes 2 to 5 s."""
    assert_integer_weights_are_repeated_rows(MinibatchMHLogisticRegression, MINIBATCH, 3000)


@pytest.mark.parametrize("estimator_class", ESTIMATORS.values(), ids=list(ESTIMATORS))
def test_fractional_weights_summing_to_one_are_one_row(estimator_class):
    """Two copies of each row, weighted ``u`` and ``1 - u`` (``u`` uniform, not 1/2 only),
    give the posterior of the rows once, unweighted: weights that are not counts, against a
    reference that reads no weights."""
    X, y = make_data(estimator_class, N_ROWS)
    share = np.random.default_rng(1).uniform(0.1, 0.9, size=N_ROWS)
    split = theta_draws(estimator_class, EXACT, SEED, np.vstack([X, X]), np.concatenate([y, y]),
                        np.concatenate([share, 1.0 - share]))
    once = theta_draws(estimator_class, EXACT, SEED + 1, X, y)
    assert_same_distribution(split, once, label=estimator_class.__name__)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # short chains
def test_unit_weights_give_the_unweighted_chains():
    """The same chains up to rounding (the weighted sums differ in their last bits)."""
    X, y = make_data(MinibatchMHLogisticRegression, 200)
    settings = dict(n_draws=100, n_warmup=100, n_chains=2, random_state=0)
    plain = MinibatchMHLogisticRegression(**settings).fit(X, y)
    ones = MinibatchMHLogisticRegression(**settings).fit(X, y, sample_weight=np.ones(200))
    np.testing.assert_allclose(plain.posterior_["coef"], ones.posterior_["coef"], rtol=1e-9,
                               atol=1e-12)


def test_bad_weights_are_refused_by_name():
    X, y = make_data(MinibatchMHLogisticRegression, 50)
    clf = MinibatchMHLogisticRegression(n_draws=20, n_warmup=20)
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        clf.fit(X, y, sample_weight=np.r_[-1.0, np.ones(49)])
    with pytest.raises(ValueError, match="at least one non-zero"):
        clf.fit(X, y, sample_weight=np.zeros(50))
    with pytest.raises(ValueError, match="sample_weight"):
        clf.fit(X, y, sample_weight=np.ones(49))
    with pytest.raises(ValueError, match="sample_weight"):
        clf.fit(X, y, sample_weight=np.r_[np.nan, np.ones(49)])
