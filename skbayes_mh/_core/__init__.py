"""The functional core under the estimators (as scikit-learn's path functions under its
linear models): an estimator validates its input, builds its likelihood family, data and
prior, and calls :func:`fit_posterior`; nothing here reads or sets an estimator.

* ``fit.py``: :func:`fit_posterior`, :func:`continue_posterior`, their settings and result.
* ``auto.py``: the ``"auto"`` rules (acceptance test, proposal, thinning).
* ``continuation.py``: which chains a ``warm_start`` fit continues.
* ``convergence.py``: R-hat and ESS after a fit, with their warnings.

Input validation shared with :func:`skbayes_mh.sample` is in ``skbayes_mh/_validation.py``.
"""
from .fit import FitResult, SamplerSettings, continue_posterior, fit_posterior

__all__ = ["FitResult", "SamplerSettings", "continue_posterior", "fit_posterior"]
