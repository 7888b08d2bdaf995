"""numpydoc validation of the public API's docstrings: every public class, function and
method documents each of its parameters (with a description) and no parameter it lacks,
and every documented ``default=`` is the signature's default.

The checks are numpydoc's PR01 (parameter not documented), PR02 (unknown parameter
documented), PR07 (parameter without a description) and GL08 (no docstring). numpydoc is in
the ``docs`` extra; without it the test is skipped.
"""
import ast
import importlib
import inspect
import math
import re

import pytest

validate = pytest.importorskip("numpydoc.validate").validate

#: The modules whose public names make the public API.
PUBLIC_MODULES = ("skbayes_mh", "skbayes_mh.acceptance", "skbayes_mh.proposals",
                  "skbayes_mh.posterior", "skbayes_mh.diagnostics", "skbayes_mh.plotting",
                  "skbayes_mh.datasets")

#: The numpydoc checks enforced.
CHECKS = {"PR01", "PR02", "PR07", "GL08"}


def _ours(obj):
    return getattr(obj, "__module__", "").startswith("skbayes_mh")


def _public_names(module):
    return getattr(module, "__all__", [name for name in dir(module) if not name.startswith("_")])


def public_api():
    """Dotted names of the public classes and functions, and of the classes' public
    methods (inherited ones included) that skbayes_mh defines, sorted."""
    names = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in _public_names(module):
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)) or not _ours(obj):
                continue
            path = f"{obj.__module__}.{obj.__qualname__}"
            names.add(path)
            if not inspect.isclass(obj):
                continue
            for method_name, method in inspect.getmembers(obj):
                # Functions, static methods and class methods; not properties.
                if (not method_name.startswith("_") and _ours(method)
                        and (inspect.isfunction(method) or inspect.ismethod(method))):
                    names.add(f"{path}.{method_name}")
    return sorted(names)


PUBLIC_API = public_api()


def test_public_api_is_found():
    assert len(PUBLIC_API) > 100
    assert "skbayes_mh.sampling._api.sample" in PUBLIC_API
    assert "skbayes_mh.acceptance.austerity.Austerity.conservative" in PUBLIC_API


@pytest.mark.parametrize("name", PUBLIC_API)
def test_docstring_documents_parameters(name):
    errors = [f"{code}: {message}" for code, message in validate(name)["errors"]
              if code in CHECKS]
    assert not errors, f"{name}:\n" + "\n".join(errors)


def _resolve(dotted):
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
            break
        except ImportError:
            continue
    for part in parts[split:]:
        obj = getattr(obj, part)
    return obj


def _same(documented, actual):
    if isinstance(actual, float) and isinstance(documented, (int, float)):
        return documented == actual or (math.isnan(documented) and math.isnan(actual))
    return type(documented) is type(actual) and documented == actual


@pytest.mark.parametrize("name", PUBLIC_API)
def test_documented_defaults_are_the_signatures(name):
    docscrape = pytest.importorskip("numpydoc.docscrape")
    obj = _resolve(name)
    try:
        parameters = inspect.signature(obj).parameters
    except (TypeError, ValueError):  # no signature to compare with
        return
    wrong = []
    for entry in docscrape.NumpyDocString(inspect.getdoc(obj) or "")["Parameters"]:
        found = re.search(r"default\s*=\s*(.+)$", entry.type)
        for parameter in (part.strip() for part in entry.name.split(",")):
            if parameter not in parameters or parameter.startswith("*"):
                continue
            actual = parameters[parameter].default
            if found is None:
                if actual is not inspect.Parameter.empty:
                    wrong.append(f"{parameter}: no default= documented; the signature's is "
                                 f"{actual!r}")
                continue
            text = found.group(1).strip()
            try:
                documented = float(text) if text == "nan" else ast.literal_eval(text)
            except (ValueError, SyntaxError):
                wrong.append(f"{parameter}: default={text} is not a Python literal")
                continue
            if not _same(documented, actual):
                wrong.append(f"{parameter}: documented default={text}, signature {actual!r}")
    assert not wrong, f"{name}:\n" + "\n".join(wrong)
