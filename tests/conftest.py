import sys
from pathlib import Path

import pytest

#: The shared real data sets live beside the checkout; a user's machine does not have them.
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
#: The papers' user models (``sample`` log-likelihoods) live with the benchmarks that run them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
#: The tests sit in one folder per layer (kernels, models, sampling, estimators,
#: integration); their shared models and helpers (``_models.py``) sit here.
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session")
def shared_data():
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data sets not found at {SHARED_DATA} (they sit beside the checkout "
                    "in the project's workspace only)")
    return SHARED_DATA


#: The core dependencies whose versions every test run reports (CI installs the newest).
REPORTED_DEPENDENCIES = ("numpy", "scipy", "scikit-learn", "numba", "llvmlite", "joblib",
                         "arviz-stats", "threadpoolctl")


def pytest_report_header(config):
    from importlib import metadata

    versions = []
    for name in REPORTED_DEPENDENCIES:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    return "skbayes_mh dependencies: " + ", ".join(versions)


def pytest_sessionstart(session):
    """With test workers (pytest-xdist), compile every kernel first, one process per core:
    otherwise each worker compiles the kernels its first tests need, the same ones at the
    same time. A warm numba cache makes this a few seconds of loading."""
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    from skbayes_mh._compile import compile_kernels

    seconds = compile_kernels()
    _load_cached_third_party_kernels()
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"skbayes_mh: kernels compiled or loaded in {seconds:.1f} s")


def _load_cached_third_party_kernels():
    """Import the test dependencies that compile numba code with ``cache=True`` at import
    (arviz-stats' xarray-einstats gufuncs) once here, before the workers start: workers that
    import them together on a cold cache write the same cache files at once, and numba
    0.61's cached gufuncs can then fail to load in every later process (an LLVM "Symbol not
    found" abort during collection)."""
    try:
        import arviz_stats.base  # noqa: F401
    except ImportError:
        pass


#: The test files holding the suite's longest tests, longest first (seconds of one test
#: worker each, from ``--durations=0`` on two cores: 125, 70, 66, 63, about 60, 59, 48, 44,
#: 40, 36, 30). The test workers (pytest-xdist, ``--dist loadfile``) are sent whole files
#: in the order collected (``--no-loadscope-reorder``), and these go first, so that the many
#: short files fill both workers' last minutes; by default xdist sends the files with most
#: tests first, and these, with few tests each, came last, one running alone on one core
#: while the other idled (50 s of a 550 s run). Only the order depends on this list.
LONGEST_FIRST = (
    "tests/integration/test_backends.py",
    "tests/sampling/test_auto_draws.py",
    "tests/sampling/test_invariance.py",
    "tests/sampling/test_calibration.py",
    "tests/integration/test_docs.py",
    "tests/estimators/test_sklearn_checks.py",
    "tests/sampling/test_default_calibration.py",
    "tests/sampling/test_control_variates.py",
    "tests/estimators/test_logistic_estimator.py",
    "tests/sampling/test_firefly_chains.py",
    "tests/sampling/test_test_error.py",
)
_TESTS_ROOT = Path(__file__).resolve().parents[1]
for _listed in LONGEST_FIRST:
    if not (_TESTS_ROOT / _listed).is_file():
        raise pytest.UsageError(f"tests/conftest.py: LONGEST_FIRST names {_listed}, which "
                                f"does not exist (renamed or removed?)")


def pytest_collection_modifyitems(config, items):
    """Send the files of :data:`LONGEST_FIRST` first, in its order; the other files keep
    theirs, and every file keeps the order of its own tests."""
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


_crashed_workers = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """Remember a test worker that died (pytest-xdist's hook)."""
    if error:
        _crashed_workers.append(f"{getattr(node, 'gateway', node).id}: {error}")


def pytest_sessionfinish(session, exitstatus):
    """Fail the run when a test worker crashed: pytest-xdist reports workers lost during
    collection ("maximum crashed workers reached") with no failed test and exit status 0
    or 5 (no tests), which would pass a run that tested nothing."""
    if _crashed_workers and exitstatus in (pytest.ExitCode.OK,
                                           pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("test workers crashed: " + "; ".join(_crashed_workers),
                                red=True)
