"""The built-in priors an estimator's settings give: a scale on every weight, autoscaled by
the features' spreads (as rstanarm's autoscaled priors), one on each intercept, and the
family's extra parameters'."""
import numpy as np

from .._core.auto import is_auto
from ..models._prior import GAUSSIAN, BuiltinPrior

#: Autoscaling standardises no feature beyond this many spreads from its mean. A feature's
#: spread is its sd, or its largest distance from its mean over this when that is larger: a
#: rare feature (a pixel that a few rows light, a rare word, a far outlier) would otherwise
#: get a prior sd of order sqrt(N) on its standardised scale's few large values, and a
#: posterior that a few rows cut like a wall (digits: standardised values up to 37; MNIST:
#: prior sds up to 4,250 on the raw pixels). 5 leaves a Gaussian feature's sd alone up to
#: about 10^6 rows and caps a rare binary feature's prior sd at 5 on the log-odds scale.
AUTOSCALE_REACH = 5.0
#: ... and treats a feature of a smaller spread than this as constant (see
#: :func:`autoscale_spread`).
AUTOSCALE_MIN_SPREAD = 1e-100


def autoscale_spread(summary):
    """The features' spreads for the autoscaled priors, shape (n_features,): ``max(sd,
    max |x - mean| / AUTOSCALE_REACH)``, 1 for a constant feature (``summary`` as from
    :func:`~skbayes_mh._passes.scan_data`). A column of one value is constant although
    its computed sd is rounding (2.8e-14 for 35 rows of -236.1): dividing by that gave
    its weight a prior sd of 10^20 and draws whose predictions overflowed. So is a column
    whose spread is below :data:`AUTOSCALE_MIN_SPREAD` (subnormal values): a prior sd of
    10^160 and more overflowed the prior's and the Hessian's arithmetic; its weight keeps
    the raw-scale prior, and the column, a product of under 10^-100 with it, stays
    without effect, as at that size it is in double precision."""
    mean = np.asarray(summary["x_mean"], dtype=np.float64)
    low, high = np.asarray(summary["x_min"]), np.asarray(summary["x_max"])
    reach = np.maximum(high - mean, mean - low)
    spread = np.maximum(np.asarray(summary["x_std"], dtype=np.float64), reach / AUTOSCALE_REACH)
    constant = ((high == low) | ~(spread > 1e-12 * np.abs(mean))
                | ~(spread >= AUTOSCALE_MIN_SPREAD))
    return np.where(constant, 1.0, spread)


def estimator_prior(estimator, kind, data, summary, n_outputs, prior_scale, intercept_scale,
                    locations=None, extra_scales=(), outcome_scale=1.0):
    """A built-in prior (``kind``) with ``prior_scale`` on every weight, ``intercept_scale``
    on each output's intercept, then the extra parameters' ``extra_scales``, for
    ``estimator``'s ``autoscale`` and ``fit_intercept``.

    With ``autoscale`` (as rstanarm's autoscaled priors): weight ``j``'s scale is
    ``prior_scale * outcome_scale / spread_j`` (``prior_scale`` on the standardised
    feature; a constant feature keeps ``prior_scale``), and the intercept's prior is on
    the intercept at the features' means (that of centred features), from ``summary``'s
    ``x_mean``, ``x_std``, ``x_min`` and ``x_max`` (the whole data set's, see
    :func:`~skbayes_mh.linear_model._inputs.fit_data`). ``spread_j`` is the feature's sd,
    or its largest distance from its mean divided by :data:`AUTOSCALE_REACH` when that is
    larger (see there).
    """
    width = data.block
    learned = is_auto(prior_scale) and kind & 3 == GAUSSIAN
    if is_auto(prior_scale):
        # Gaussian: the data's choice multiplies it (_core.fit); Laplace: no evidence to
        # maximise here, the scale stays 1 (LEARNED_PRIOR_SCALE says so).
        prior_scale = 1.0
    scales = np.full((n_outputs, width), float(prior_scale))
    means = None
    if estimator.autoscale:
        spread = autoscale_spread(summary)
        scales[:, :data.n_features] = prior_scale * float(outcome_scale) / spread
        means = summary["x_mean"] if estimator.fit_intercept else None
    if estimator.fit_intercept:
        scales[:, -1] = float(intercept_scale)
    scales = np.append(scales.ravel(), extra_scales)
    return BuiltinPrior(kind, scales, locations, means, n_outputs=n_outputs, block=width,
                        intercept=estimator.fit_intercept, learn_scale=learned)
