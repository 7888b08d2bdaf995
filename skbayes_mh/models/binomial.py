"""Binomial proportions with the logit link: row ``i`` records ``s_i`` successes in ``n_i``
trials, ``s_i ~ Binomial(n_i, S(x_i . w + b))`` with ``S`` the logistic function.

The model reads ``y_i = s_i / n_i`` with the row's weight ``n_i``: ``n_i (y_i log S(eta) +
(1 - y_i) log S(-eta))`` is the binomial log-mass without its constant ``log C(n_i,
s_i)``, so the logistic link (which reads a fractional ``y`` as it is) and its
Jaakkola-Jordan bound (a bound on both ``log S(eta)`` and ``log S(-eta)`` with one ``xi``,
so on any convex combination of them) serve unchanged, in every acceptance test and in
Firefly. The NumPy side predicts the proportion's mean, ``S(eta)``, and treats a new row
as one trial (its noise, simulation and quantiles), since the trials of a new row are
not known."""
import numpy as np
from scipy.special import expit, log_expit, logit

from .logistic import LogisticModel


class BinomialModel(LogisticModel):
    """Binomial proportions (``y`` in [0, 1], weighted by their trials) with the logit
    link."""

    name = "binomial"
    outcome = "proportions"

    def initial_theta(self, data, prior):
        """Zero weights and the intercept at the logit of the (weighted) mean proportion."""
        theta = np.zeros(self.n_params(data))
        if data.intercept and data.n_rows:
            weights = data.weights if data.weights.size else None
            mean = float(np.average(data.y, weights=weights))
            theta[data.block - 1] = logit(min(max(mean, 1e-3), 1.0 - 1e-3))
        return theta

    def log_likelihood(self, eta, variables, y):
        """Each row's log-likelihood per trial, ``y log S(eta) + (1 - y) log S(-eta)``
        (the row's binomial log-mass is its trials times this, plus ``log C(n, s)``)."""
        eta = eta[..., 0]
        return y[None, :] * log_expit(eta) + (1.0 - y[None, :]) * log_expit(-eta)

    def mean(self, eta, variables):
        """The success probability ``S(eta)``."""
        return expit(eta[..., 0])

    def mean_curvature(self, eta):
        """The success probability and its second derivative."""
        return self.inverse_link_curvature(eta)

    def mean_third_derivative(self, eta):
        """The success probability's third derivative."""
        return self.inverse_link_third_derivative(eta)

    def noise_variance(self, eta, variables):
        """A new row of one trial: ``S(eta) (1 - S(eta))``."""
        p = expit(eta[..., 0])
        return p * (1.0 - p)

    def simulate(self, eta, variables, rng):
        """One trial per draw and row: 1.0 for a success, 0.0 for a failure."""
        return (rng.random(eta.shape[:2]) < expit(eta[..., 0])).astype(np.float64)

    def mixture_quantiles(self, eta, variables, quantiles):
        """Quantiles of one new trial under the mixture over draws: 1 where a quantile lies
        above the mixture's failure probability, else 0."""
        failure = 1.0 - expit(eta[..., 0]).mean(axis=0)
        return (np.asarray(quantiles)[None, :] > failure[:, None]).astype(np.float64)
