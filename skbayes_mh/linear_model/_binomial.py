"""Bayesian binomial regression for successes out of trials (logit link), sampled with
pluggable acceptance tests."""
import numpy as np
from scipy.special import gammaln, xlogy
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_array, check_consistent_length

from ..models import BinomialModel
from ..models._prior import GAUSSIAN
from ._base import LinearMHEstimator
from ._docs import shared_docstring
from ._posterior import PredictiveRegressorMixin


def proportions_and_trials(y, sample_weight):
    """``y`` as the model reads it, proportions with weights: a 2-column ``y`` is
    ``(successes, trials)`` per row (proportion ``successes / trials``, weight ``trials``
    times the row's ``sample_weight``; a row of 0 trials weighs nothing), a 1-D ``y`` is
    the proportions themselves with ``sample_weight`` the trials.

    Returns
    -------
    y : ndarray of shape (n_samples,) or the 1-D ``y`` as given
    sample_weight : ndarray of shape (n_samples,), or the ``sample_weight`` as given
    """
    if getattr(y, "ndim", None) is None:  # a list, or another object NumPy converts
        y = np.asarray(y)
    if y.ndim != 2 or y.shape[1] == 1:  # a column is raveled by the validation
        return y, sample_weight
    counts = check_array(y, dtype=np.float64, ensure_2d=True, input_name="y")
    if counts.shape[1] != 2:
        raise ValueError(f"A 2-D y gives (successes, trials) per row: 2 columns, not "
                         f"{counts.shape[1]}.")
    successes, trials = counts[:, 0], counts[:, 1]
    bad = np.flatnonzero((successes < 0) | (trials < successes))
    if bad.size:
        row = int(bad[0])
        raise ValueError(f"Each row needs 0 <= successes <= trials; row {row} has "
                         f"{successes[row]:g} successes in {trials[row]:g} trials "
                         f"({bad.size} such rows).")
    if not np.any(trials > 0):
        raise ValueError(f"Every row of y has 0 trials ({trials.size} rows): there is "
                         f"nothing to fit. y gives (successes, trials) per row.")
    proportion = np.divide(successes, trials, out=np.zeros_like(successes),
                           where=trials > 0)
    if sample_weight is None:
        return proportion, trials
    check_consistent_length(trials, sample_weight)
    return proportion, trials * np.asarray(sample_weight, dtype=np.float64)


def binomial_d2(y, mean, weights=None):
    """:math:`D^2` of the binomial deviance: one minus the ratio of the deviance of the
    predicted probabilities ``mean`` to that of the (weighted) mean proportion, for
    proportions ``y`` weighted by their trials ``weights``."""
    y = np.asarray(y, dtype=np.float64)
    weights = np.ones_like(y) if weights is None else np.asarray(weights, dtype=np.float64)
    saturated = xlogy(y, y) + xlogy(1.0 - y, 1.0 - y)

    def deviance(p):
        p = np.clip(p, 1e-300, 1.0 - 1e-16)
        return 2.0 * np.sum(weights * (saturated - xlogy(y, p) - xlogy(1.0 - y, 1.0 - p)))

    null = deviance(np.full_like(y, np.average(y, weights=weights)))
    if null <= 0.0:
        return np.nan  # every row at the same proportion: no deviance to explain
    return 1.0 - deviance(np.asarray(mean, dtype=np.float64)) / null


@shared_docstring
class BinomialRegression(RegressorMixin, PredictiveRegressorMixin, LinearMHEstimator):
    """Bayesian binomial regression with a logit link, for successes out of a number of
    trials per row (conversions out of visits, germinated out of sown, deaths out of
    cases): ``successes ~ Binomial(trials, 1 / (1 + exp(-(x @ w + b))))``, with posterior
    samples from Metropolis-Hastings chains whose acceptance test may read only
    minibatches, or from Firefly Monte Carlo.

    Pass ``y`` as two columns, ``(successes, trials)`` per row, or as the proportions
    ``successes / trials`` with ``sample_weight=trials`` (the convention scikit-learn's
    ``PoissonRegressor`` has for rates with an exposure). Both fit the same posterior: the
    binomial likelihood is the trials times the per-trial Bernoulli log-likelihood of the
    proportion, up to a constant. ``predict`` gives the posterior-predictive success
    probability; ``return_std``, ``predict_quantiles`` and ``sample_posterior_predictive``
    treat a new row as one trial (its trials are not known); ``score`` is :math:`D^2` of
    the binomial deviance.

    Priors as ``MinibatchMHLogisticRegression``'s: ``w_k ~ N(0, (prior_scale /
    spread(x_k))^2)`` (``spread``: see ``autoscale``) and ``b + mean(x) . w ~ N(0,
    intercept_prior_scale^2)`` (with ``autoscale=False``: ``w_k ~ N(0, prior_scale^2)``,
    ``b ~ N(0, intercept_prior_scale^2)``). statsmodels' ``GLM`` with the ``Binomial``
    family (successes and failures as ``endog``) is the maximum-likelihood fit of the
    same model.

    Parameters
    ----------
    acceptance : str or AcceptanceTest, default="auto"
        {acceptance_auto}
        Or ``"barker"``, ``"minibatch"``, ``"austerity"``, ``"confidence"``, ``"firefly"``
        (exact, with Jaakkola-Jordan bounds, which hold for every proportion) or an object
        from :mod:`skbayes_mh.acceptance` (cloned in ``fit``).
    {proposal_parameters}
    {classifier_prior_parameters}
    {sampling_parameters}
    {group_effects_parameter}

    Attributes
    ----------
    {regression_attributes}
    posterior_ : Posterior
        ``coef`` (n_chains, n_draws, n_features), ``intercept`` (n_chains, n_draws)
        and the per-draw ``lp``, ``acceptance_rate``, ``n_data_read``,
        ``rows_per_iteration``, ``seconds`` (:class:`~skbayes_mh.posterior.Posterior`).
    {fitted_attributes}

    See Also
    --------
    MinibatchMHLogisticRegression : the same likelihood for one trial per row, as a
        classifier.

    Examples
    --------
    >>> import numpy as np
    >>> from skbayes_mh import BinomialRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> trials = rng.integers(1, 20, size=2000)
    >>> successes = rng.binomial(trials, 1 / (1 + np.exp(-(X @ [0.5, -0.3] + 0.2))))
    >>> reg = BinomialRegression(n_draws=300, n_warmup=300, n_chains=2, random_state=0)
    >>> reg = reg.fit(X, np.column_stack([successes, trials]))
    >>> np.round(reg.coef_, 1), reg.predict(X[:2]).shape
    (array([ 0.5, -0.3]), (2,))
    """

    _fit_doc = dict(
        what="the weights", y="successes out of trials ``y``",
        y_description="``(successes, trials)`` per row (shape (n_samples, 2), ``0 <= "
                      "successes <= trials``), or proportions in [0, 1] (shape "
                      "(n_samples,)) with their trials as ``sample_weight``.")

    def __init__(self, *, acceptance="auto", proposal="auto", step_size="auto",
                 prior_scale=1.0, autoscale=True, fit_intercept=True,
                 intercept_prior_scale=10.0, temperature=1.0, n_draws="auto", max_time=None,
                 n_warmup="auto", thin="auto", n_chains=4, n_jobs=None, random_state=None,
                 verbose=0, warm_start=False,
                 predict_tol=1e-4, group_effects=None,
                 group_correlation=True):
        self._store_parameters(locals())

    def _fit_data(self, X, y, sample_weight=None, classes=False):
        y, sample_weight = proportions_and_trials(y, sample_weight)
        return super()._fit_data(X, y, sample_weight, classes)

    def _problem(self, X, y, weights, summary, acceptance):
        low, high = summary["min"], float(np.max(y)) if y.size else 0.0
        if not (low >= 0.0 and high <= 1.0):
            raise ValueError(f"BinomialRegression needs proportions y in [0, 1] (successes "
                             f"/ trials, with the trials as sample_weight), or y as "
                             f"(successes, trials) columns; y spans [{low!r}, {high!r}].")
        data = self._linear_data(X, np.asarray(y, dtype=np.float64), weights)
        prior = self._prior(GAUSSIAN, data, summary, 1, self.prior_scale,
                            self.intercept_prior_scale)
        return self._family(), data, prior

    def _family(self, acceptance=None):
        return BinomialModel()

    def pointwise_log_likelihood(self, X, y):
        """Each row's log-likelihood under every stored draw: with ``y`` as ``(successes,
        trials)``, the row's binomial log-mass (``log C(trials, successes)`` included, for
        PSIS-LOO and WAIC); with proportions, whose trials are not given, the per-trial
        ``y log p + (1 - y) log(1 - p)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_rows, n_features)
            The rows.
        y : array-like of shape (n_rows, 2) or (n_rows,)
            ``(successes, trials)`` per row, or proportions.

        Returns
        -------
        ndarray of shape (n_chains, n_draws, n_rows)
        """
        if np.ndim(y) != 2:
            return super().pointwise_log_likelihood(X, y)
        counts = np.asarray(y, dtype=np.float64)
        proportions, trials = proportions_and_trials(counts, None)
        per_trial = super().pointwise_log_likelihood(X, proportions)
        successes = counts[:, 0]
        log_choose = (gammaln(trials + 1.0) - gammaln(successes + 1.0)
                      - gammaln(trials - successes + 1.0))
        return trials * per_trial + log_choose

    def score(self, X, y, sample_weight=None):
        """:math:`D^2`: one minus the ratio of the binomial deviance of ``predict(X)`` to
        that of the (weighted) mean proportion, 1 at best and 0 for the mean.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows.
        y : array-like of shape (n_samples, 2) or (n_samples,)
            ``(successes, trials)`` per row, or proportions.
        sample_weight : array-like of shape (n_samples,), default=None
            The trials of proportions ``y`` (times the rows' weights with a 2-column ``y``).

        Returns
        -------
        score : float
        """
        y, weights = proportions_and_trials(y, sample_weight)
        return binomial_d2(y, self.predict(X), weights)
