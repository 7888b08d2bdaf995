"""The one way the estimators and the acceptance tests keep their ``__init__`` arguments."""


class StoredParameters:
    """``__init__`` keeps every argument as the attribute of its name, unchanged, as
    scikit-learn's ``get_params``, ``set_params`` and ``clone`` expect: each class lists its
    parameters with their defaults in its own signature and calls
    ``self._store_parameters(locals())``."""

    def _store_parameters(self, arguments):
        for name, value in arguments.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)
