"""The package's public names: every estimator file of ``skbayes_mh.linear_model`` and
every family file of ``skbayes_mh.models`` is imported by name (so that editors and type
checkers see ``from skbayes_mh import MinibatchMHLogisticRegression``), and the registries,
the exports and the files agree."""
import importlib
import pkgutil

import skbayes_mh
import skbayes_mh.linear_model as linear_model
import skbayes_mh.models as models
from skbayes_mh.linear_model import ESTIMATORS


def test_every_estimator_file_is_registered_and_exported_by_name():
    registered = dict(ESTIMATORS)
    for module in pkgutil.iter_modules(linear_model.__path__):
        importlib.import_module(f"{linear_model.__name__}.{module.name}")
    # Importing every file registered nothing new: each was imported by name already.
    assert ESTIMATORS == registered
    assert len(ESTIMATORS) >= 5
    for name, estimator in ESTIMATORS.items():
        assert getattr(skbayes_mh, name) is estimator and name in skbayes_mh.__all__
        assert getattr(linear_model, name) is estimator and name in linear_model.__all__
    assert all(hasattr(skbayes_mh, name) for name in skbayes_mh.__all__)


def test_every_family_file_is_registered_and_exported_by_name():
    registered = dict(models.FAMILIES)
    for module in pkgutil.iter_modules(models.__path__):
        importlib.import_module(f"{models.__name__}.{module.name}")
    assert models.FAMILIES == registered
    assert len(models.FAMILIES) >= 7
    for name, family in models.FAMILIES.items():
        assert getattr(models, name) is family and name in models.__all__
    assert all(hasattr(models, name) for name in models.__all__)
