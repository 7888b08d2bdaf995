"""The parts of the estimators' docstrings that every estimator shares, written once.

An estimator's docstring names a block by a line holding only ``{block name}``, indented as
the block's entries are; :func:`shared_docstring` puts the block there.
"""
import textwrap

#: ``Parameters`` entries of the sampler settings, the same for every estimator.
SAMPLING_PARAMETERS = """\
temperature : float or list of (int, float), default=1.0
    Every log-likelihood ratio is divided by it; at least 1e-100 (below, the scaled
    sums overflow). A schedule, e.g. ``[(0, 100.0), (400, 1.0)]``, gives temperature
    ``K`` from each iteration on (counting from each chain's first): a tempered start
    that crosses a flatter posterior between modes, then the last temperature's
    posterior, which the kept draws sample (its last change must come within
    ``n_warmup``). With ``step_size="auto"`` the step is rescaled by ``sqrt(K_new /
    K_old)`` at each change and tuned on from there; the shape and ``thin="auto"`` learn
    from the draws at the last temperature only, and the MAP, Laplace approximation and
    chain starts are that temperature's.
n_draws : int or "auto", default="auto"
    Draws kept per chain. ``"auto"``: as many as convergence needs: the chains run in
    rounds (150 draws each first, then as far as the effective sample size so far says
    is needed) until every parameter's R-hat is at most 1.01 and its bulk and tail ESS at
    least 100 a chain, up to 4,000 a chain or ``max_time``. The rounds depend on the
    draws alone: the same draws for a seed, whatever ``n_jobs``.
max_time : float or None, default=None
    With ``n_draws="auto"``: seconds from the start of ``fit`` after which no new round
    starts (a round is sized to end within it); the fit then keeps what it has and warns
    if the chains fall short. The only setting whose result depends on the machine's
    speed.
n_warmup : "auto" or int, default="auto"
    Iterations per chain before the first kept draw (adaptation happens here; kept in
    ``n_warmup_``). ``"auto"``: 1000; 300 where a test reading every row runs
    Hamiltonian paths in the Laplace shape of a model with at least 500 parameters (the
    warm-up's draws cannot refine so wide a shape: it tunes the step), and with
    ``n_draws="auto"`` under every test but Firefly's (the rounds add the draws a shorter
    warm-up costs), where under a test that reads every row each chain's warm-up ends
    earlier once it is tuned and past its start (its last two windows' acceptance rate
    near the target, no trend in its log posterior; from 30% of the 300 on, and 200
    where a thinning rule reads it); 1000 with a temperature schedule. An int: exactly
    that.
thin : "auto" or int, default="auto"
    Iterations per kept draw. ``"auto"``: from each chain's autocorrelation time over
    the warm-up's last half (its slowest parameter's, at most three times the median
    parameter's), at most 10 (kept in ``thin_``), where iterations are cheap: to nearly
    independent draws for the subsampling tests and Firefly (and, for a chain that mixes
    more slowly, up to 50 as far as a bulk ESS of 250 a chain needs); for the full-data
    tests on small data (at most 2,000,000 rows x parameters x thin per draw) as far as a
    bulk ESS of 250 a chain needs, and under ``n_draws="auto"`` to the median
    parameter's independence (thinning by the slowest threw away iterations that the
    rounds then ran again); otherwise 1.
n_chains : int, default=4
    Independent chains, each started at its own draw of the Laplace approximation;
    R-hat compares them.
n_jobs : int or None, default=None
    Threads for the chains (joblib); results do not depend on it. ``None``: this process's
    share of the cores (all of them, or a ``GridSearchCV(n_jobs=k)`` worker's share);
    ``1``: one chain after another; ``-1``: all cores.
random_state : int, RandomState instance or None, default=None
    One seed per chain is drawn from it up front.
verbose : int, default=0
    Progress when > 0: one tqdm bar per chain if tqdm is installed, otherwise about ten
    plain lines in all.
warm_start : bool, default=False
    Keep the chains' states (position, generator, tuned proposal, Firefly's bright set)
    so that the next ``fit`` on the same data continues them up to ``n_draws`` draws per
    chain, appending; the draws equal those of one longer fit, draw for draw. Only
    ``n_draws`` (and ``verbose``, ``n_jobs``) may change between the fits. The kept
    states reference the training data and are not pickled. This also continues a fit
    interrupted with Ctrl-C.
predict_tol : float or None, default=1e-4
    The error allowed on each posterior-predictive probability (``predict_proba``,
    ``predict``) or mean (a regressor's ``predict``; relative to the mean where it exceeds
    1) against the mean over every stored draw. A model of one linear predictor with at
    most a quarter as many weights as stored draws predicts a row from a second-order
    expansion about the draws' mean linear predictor where a proven bound on that
    expansion's error is within it (on tall data, every row: no draw is evaluated); every
    other row, and every row of a softmax, averages every draw.
    ``None``: every draw. Deterministic; changing it needs no new ``fit``.
"""

#: ``Parameters`` entries of the proposal and its step, the same for every estimator but
#: the proposal ``"auto"`` gives Firefly (``{firefly_clause}``, from the estimator's
#: ``_firefly_proposal``; empty where the family has no Firefly bounds).
PROPOSAL_PARAMETERS = """\
proposal : str or Proposal, default="auto"
    ``"random_walk"``, ``"mala"``, ``"hmc"``, ``"pcn"``, ``"slice"`` or an object from
    :mod:`skbayes_mh.proposals`. ``"auto"``: Hamiltonian paths (``"hmc"``) with the
    exact tests and with control variates{firefly_clause}, the random walk otherwise
    (kept in ``proposal_``).
step_size : "auto" or float, default="auto"
    ``"auto"``: the proposal is shaped by the Laplace covariance and, during warm-up,
    refined from the warm-up draws (a full covariance while ``N d^2`` and ``d`` allow,
    low-rank-plus-diagonal beyond: ``docs/choosing.md``) and scaled toward the proposal's
    optimal acceptance rate, then frozen. A float: an isotropic proposal scale, as in the papers.
"""

#: The ``autoscale`` entry.
AUTOSCALE_PARAMETER = """\
autoscale : bool, default=True
    Priors on the data's scale (rstanarm's autoscaling, ``docs/estimators.md``):
    ``prior_scale / spread(x_j)`` on weight ``j`` (times ``sd(y)`` for real outcomes), the
    intercept's prior at the features' means. ``spread(x_j)`` is the feature's sd, or its
    largest distance from its mean divided by 5 when that is larger (a rare feature: a
    pixel or word that few rows hold), so that no standardised value exceeds 5.
    ``False``: raw-scale priors, the intercept's at ``x = 0``.
"""
#: ``Parameters`` entries of the priors' scaling and the intercept (every estimator has
#: both but the ordinal one, whose cut-points carry the location).
AUTOSCALE_PARAMETERS = AUTOSCALE_PARAMETER + """\
fit_intercept : bool, default=True
    Sample an intercept; ``False``: the linear predictor is ``x . w`` alone.
"""

#: What ``prior_scale="auto"`` does, at the end of each estimator's ``prior_scale`` entry.
LEARNED_PRIOR_SCALE = """\
``"auto"``: the scale the data choose, the one that maximises the model's evidence
(type-II maximum likelihood, as scikit-learn's ``BayesianRidge`` chooses its precisions;
kept in ``prior_scale_``): no grid search over it is needed. With Gaussian priors; with
Laplace priors (whose evidence is not computed) it is 1.
"""

#: ``Attributes`` entries that every fit sets, after each estimator's own.
FITTED_ATTRIBUTES = """\
n_features_in_ : int
feature_names_in_ : ndarray of shape (n_features,)
    Only when ``X`` has string feature names.
acceptance_ : AcceptanceTest
    The test used (``acceptance="auto"`` resolved).
proposal_ : Proposal
    The proposal used (``proposal="auto"`` resolved).
control_variates_ : bool
    Whether the subsampling test read Taylor-proxy residuals (control variates).
acceptance_rate_ : float
    Fraction of kept iterations that accepted.
step_size_ : ndarray of shape (n_chains, n_params)
    Each chain's final per-coordinate proposal standard deviation, in the coordinates the
    chains sampled (the rows' span's, where ``span_rank_`` is set; a group-level effect
    sampled non-centred in units of its sd).
span_rank_ : int or None
    With more weights than the rows inform (more features than rows, or rows of lower
    rank), the chains sample the model reduced to the rows' span, ``span_rank_``
    weights per output, and each kept draw's other weights come from their prior, exactly
    (``docs/choosing.md``); None where the fit sampled every weight.
prior_scale_ : float
    Only with ``prior_scale="auto"``: the scale the data chose.
thin_ : ndarray of shape (n_chains,)
    Each chain's iterations per kept draw.
n_warmup_ : ndarray of shape (n_chains,)
    Each chain's warm-up iterations (``n_warmup="auto"`` resolved).
n_iter_ : ndarray of shape (n_chains,)
    Iterations per chain, warm-up included.
interrupted_ : bool
    Ctrl-C stopped the chains; the draws every chain had reached are kept.
diagnostics_ : Bunch
    ``r_hat``, ``ess_bulk``, ``ess_tail``: for each posterior variable, its rank-normalised
    split R-hat and bulk and tail effective sample sizes (arviz-stats). ``fit`` warns
    with a ``ConvergenceWarning`` naming the worst parameter when an R-hat exceeds 1.01
    or a bulk ESS is below 100 per chain. Where the chains sampled the rows' span
    (``span_rank_`` set), the warning judges ``sampled`` instead (the same three statistics
    of the sampled coordinates, arrays): every other weight is an exact independent draw
    from the prior, whose R-hat is noise (over thousands of weights its largest passes 1.01
    by chance at a few hundred draws). ``log_posterior``: the exact log posterior at
    evenly spaced draws of each chain (``values`` of shape (n_chains, n_evaluated), each
    chain's ``mean`` and ``sd``, ``gap_se``); ``fit`` warns, naming the chains, when a
    chain's mean lies below the highest chain's by more than Monte Carlo noise (about 6
    ``gap_se``; different modes). ``test_error`` (approximate tests only): the estimated
    error per test in acceptance probability, ``per_test`` = ``design`` + ``normality``,
    with ``skewness`` and ``rows_per_test``; ``fit`` warns above 0.05.
data_passes_ : Bunch
    Full passes over the data the fit made: ``validation``, ``row_span`` (the rows' Gram
    matrix), ``prior_scale`` (the learned scale's MAP searches, on the reduced rows where
    ``span_rank_`` is set), ``map_laplace`` (a subsample's as a fraction),
    ``control_variates``, Firefly's ``firefly_bounds`` and ``firefly_start`` (one per
    chain), and their ``total``.
setup_time_ : float
    Seconds from the start of ``fit`` to the start of the chains (validation, MAP and
    Laplace, control variates or Firefly's bounds).
"""

#: ``fit``'s docstring, the same for every estimator but what is sampled and what ``y`` is
#: (an estimator's ``_fit_doc``: ``what``, ``y`` and ``y_description``).
FIT_DOCSTRING = """Sample the posterior of {what} given ``X`` and {y}.

Parameters
----------
X : {{array-like, sparse matrix}} of shape (n_samples, n_features)
    float64 or float32 (a C-contiguous ``np.memmap`` is read where it is), a
    ``dask.array``, or a ``scipy.sparse`` matrix (CSR and CSC as they are, other formats
    converted to CSR), whose rows the kernels read by their stored values.
y : array-like of shape (n_samples,)
    {y_description}
sample_weight : array-like of shape (n_samples,), default=None
    Each row's log-likelihood is multiplied by its weight (non-negative; an integer
    weight counts the row that many times), in every acceptance test, in Firefly's
    bounds (where the family has them) and in the autoscaled priors' means and sds.
{exposure}
Returns
-------
self
"""

#: ``fit``'s ``exposure`` entry, for the count regressions (``_takes_exposure``).
EXPOSURE_PARAMETER = """\
exposure : array-like of shape (n_samples,), default=None
    Each row's exposure (time at risk, area, population; positive): its count's mean is
    ``exposure * exp(x . w + b)``, an offset ``log(exposure)`` in the linear predictor.
    ``predict`` then gives the mean per unit of exposure. None: 1 for every row.
"""

#: The start of every estimator's ``acceptance`` entry: what ``"auto"`` chooses.
ACCEPTANCE_AUTO = """\
``"auto"``: the exact ``"metropolis"`` test on all rows when the data have at most
5,000 rows or fewer than 100 rows per parameter, the minibatch Barker test with
control variates (``"minibatch"``) otherwise (the choice is kept in ``acceptance_``;
docs/choosing.md has the measurements).
"""

#: The ``acceptance`` entry of a count regression (a family without Firefly's bounds or a
#: global Lipschitz constant).
COUNT_ACCEPTANCE = """\
acceptance : str or AcceptanceTest, default="auto"
""" + textwrap.indent(ACCEPTANCE_AUTO, "    ") + """\
    Or ``"barker"``, ``"austerity"``, ``"confidence"`` (with control variates only: the
    log-likelihood has no global Lipschitz constant) or an object from
    :mod:`skbayes_mh.acceptance`; not ``"firefly"``.
"""

#: The prior entries of a count regression (Gaussian or Laplace priors).
COUNT_PRIOR_PARAMETERS = """\
prior : {"gaussian", "laplace"}, default="gaussian"
    The family of the weights' and the intercept's priors.
prior_scale : float or "auto", default="auto"
    Scale of each weight's prior (Gaussian standard deviation, Laplace scale), per
    spread of the feature with ``autoscale``.
""" + textwrap.indent(LEARNED_PRIOR_SCALE, "    ") + """\
    It is the default of the log-link regressions, whose predictive mean ``exp(x . w +
    b)`` a prior too wide for the data makes explode where the weights outnumber the
    rows (the weights the rows do not inform keep their prior's spread: 100 rows x 2,000
    features predicted means of 10^86 with a scale of 1; the learned scale, about 0.02,
    converged in about a second and predicted means near the counts' level); on tall and
    wide data it changes the fit within noise (``docs/choosing.md``).
""" + AUTOSCALE_PARAMETERS + """\
intercept_prior_scale : float, default=10.0
    Scale of the intercept's prior (wide by default).
"""

#: The ``Parameters`` entries of a regression with a sampled dispersion (negative binomial,
#: Gamma), after the weights' priors.
DISPERSION_PARAMETERS = """\
dispersion_prior_scale : float, default=1.0
    Mean of the exponential prior on the dispersion.
"""

#: ... and its ``Attributes`` entries, after :data:`REGRESSION_ATTRIBUTES`.
DISPERSION_ATTRIBUTES = """\
dispersion_ : float
    Posterior mean of the dispersion.
posterior_ : Posterior
    ``coef`` (n_chains, n_draws, n_features), ``intercept`` and ``dispersion``
    (n_chains, n_draws), and the per-draw ``lp``, ``acceptance_rate``,
    ``n_data_read``, ``rows_per_iteration``, ``seconds``
    (:class:`~skbayes_mh.posterior.Posterior`).
"""

#: A classifier's ``prior_scale`` entry (Gaussian priors).
CLASSIFIER_PRIOR_SCALE = """\
prior_scale : float or "auto", default=1.0
    Standard deviation of the Gaussian prior on each weight: ``prior_scale /
    spread(x_j)`` on weight ``j`` with ``autoscale`` (the feature's sd, or a rare
    feature's wider reach; see ``autoscale``), ``prior_scale`` itself without.
""" + textwrap.indent(LEARNED_PRIOR_SCALE, "    ")

#: The prior entries of a classifier (Gaussian priors).
CLASSIFIER_PRIOR_PARAMETERS = CLASSIFIER_PRIOR_SCALE + AUTOSCALE_PARAMETERS + """\
intercept_prior_scale : float, default=10.0
    Standard deviation of the Gaussian prior on the intercept (each class's with several
    classes; wide by default).
"""

#: The prior entries of the ordinal classifier: the classifier's, its intercept's prior on
#: the first cut-point, and no ``fit_intercept``.
ORDINAL_PRIOR_PARAMETERS = CLASSIFIER_PRIOR_SCALE + AUTOSCALE_PARAMETER + """\
intercept_prior_scale : float, default=10.0
    Standard deviation of the Gaussian prior on the first cut-point (at the features'
    means with ``autoscale``; wide by default).
"""

#: The first ``Attributes`` entries of a single-output regression.
REGRESSION_ATTRIBUTES = """\
coef_ : ndarray of shape (n_features,)
    Posterior mean of the weights.
intercept_ : float
    Posterior mean of the intercept (0 without one).
"""

#: ``Parameters`` entry of the group-level effects, for the estimators of one linear
#: predictor (``_groups.py``).
GROUP_EFFECTS_PARAMETER = """\
group_effects : list, dict or None, default=None
    Group-level ("random") effects: the grouping columns of ``X`` (labels: strings,
    integers or categories, by name for a DataFrame or by position), each giving an
    intercept per group, ``["carrier"]``; or a dict from grouping column to the numeric
    columns whose slopes also vary by group, ``{"carrier": ["distance"]}``. Several
    groupings may be crossed or nested. Each term's effects are ``N(0, sd^2)`` with ``sd``
    sampled (half-normal prior of the scale of a weight of the term's variable); the
    effects are sampled as themselves (centred) where the rows inform each of them, and
    where they barely do (few rows a group, an sd near zero) by Hamiltonian paths that
    run with them non-centred plus moves that rescale the sd and its effects together.
    ``posterior_`` then holds ``group_effects`` and ``group_sd``, which ``summary()``
    names ``intercept|carrier[AA]`` and ``sd(intercept|carrier)`` (``to_arviz()``: along
    dimensions ``group_effect`` and ``group_term``), and the fitted ``group_effects_``,
    ``group_sd_`` and ``group_levels_`` (each grouping's levels) are set; ``coef_``
    covers the other columns. A level unseen in ``fit`` is predicted at the
    population level with a new group's effect drawn at each stored draw's sd (and
    correlations). Not with a sparse or Dask ``X``, nor in a consensus fit.
group_correlation : bool, default=True
    Whether the terms of a grouping with slopes are correlated (lme4's and brms' ``(1 + x
    | g)``): each level's intercept and slopes one multivariate normal of the terms' sds
    and a correlation matrix sampled under an LKJ(2) prior. ``posterior_`` then holds
    ``group_correlation``, which ``summary()`` names ``cor(intercept,distance|carrier)``
    (``to_arviz()``: dimension ``group_term_pair``). False: independent terms (brms'
    ``(1 + x || g)``). A grouping of an intercept only has nothing to correlate.
"""

BLOCKS = {"sampling_parameters": SAMPLING_PARAMETERS,
          "group_effects_parameter": GROUP_EFFECTS_PARAMETER, "fitted_attributes": FITTED_ATTRIBUTES,
          "acceptance_auto": ACCEPTANCE_AUTO, "count_acceptance": COUNT_ACCEPTANCE,
          "count_prior_parameters": COUNT_PRIOR_PARAMETERS,
          "regression_attributes": REGRESSION_ATTRIBUTES,
          "classifier_prior_parameters": CLASSIFIER_PRIOR_PARAMETERS,
          "ordinal_prior_parameters": ORDINAL_PRIOR_PARAMETERS,
          # A regression with a sampled dispersion: its whole Parameters and Attributes.
          "dispersion_regression_sections": (
              "Parameters\n----------\n" + COUNT_ACCEPTANCE + PROPOSAL_PARAMETERS
              + COUNT_PRIOR_PARAMETERS + DISPERSION_PARAMETERS + SAMPLING_PARAMETERS
              + GROUP_EFFECTS_PARAMETER + "\nAttributes\n----------\n" + REGRESSION_ATTRIBUTES + DISPERSION_ATTRIBUTES
              + FITTED_ATTRIBUTES),
          "proposal_parameters": PROPOSAL_PARAMETERS,
          "autoscale_parameters": AUTOSCALE_PARAMETERS,
          "learned_prior_scale": LEARNED_PRIOR_SCALE}


def shared_docstring(cls):
    """Class decorator: each line ``{name}`` of ``cls.__doc__`` becomes the block ``name``,
    indented as the line is."""
    proposal = cls._firefly_proposal
    firefly_clause = f', ``"{proposal}"`` with Firefly' if proposal else ""
    lines = []
    for line in cls.__doc__.splitlines():
        name = line.strip()[1:-1] if line.strip().startswith("{") else None
        if name in BLOCKS:
            indent = line[:len(line) - len(line.lstrip())]
            block = BLOCKS[name].replace("{firefly_clause}", firefly_clause)
            lines.extend(textwrap.indent(block, indent).rstrip("\n").splitlines())
        else:
            lines.append(line)
    cls.__doc__ = "\n".join(lines)
    return cls
