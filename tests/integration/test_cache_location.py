"""A read-only install (numba cannot write its cache beside the package nor in the user's
cache directory, e.g. a container image run as another user): ``import skbayes_mh`` and the
kernels work, cached among the machine's temporary files, or compiled in memory where even
those cannot be written, with one warning saying which.

Each case runs in a fresh process whose numba finds no writable place of its own (its list
of cache locations cut down before the import), and compiles one small kernel there."""
import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import tempfile, warnings
    import numba.core.caching as caching
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    keep = [cls for cls in impl._locator_classes
            if cls.__name__.lstrip("_") == "UserProvidedCacheLocator"]
    impl._locator_classes = keep  # neither beside the package nor in $HOME
    if {no_temporary_files}:
        tempfile.tempdir = "/proc/no-such-directory"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import skbayes_mh
        from skbayes_mh._kernels._cache import CACHE
        from skbayes_mh._kernels.special import student_t_sf
        value = student_t_sf(1.0, 3.0)
    ours = [str(w.message) for w in caught if "skbayes_mh: numba" in str(w.message)]
    print(CACHE, round(value, 6), len(ours))
    print(ours[0] if ours else "")
""")


@pytest.mark.parametrize("no_temporary_files", [False, True], ids=["temporary", "memory"])
def test_an_unwritable_cache_falls_back_with_one_warning(no_temporary_files, tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    env["TMPDIR"] = str(tmp_path)  # the fallback lands here, not among the machine's files
    result = subprocess.run([sys.executable, "-c", CHILD.format(
        no_temporary_files=no_temporary_files)], capture_output=True, text=True, env=env,
        timeout=300)
    assert result.returncode == 0, result.stderr
    cached, value, n_warnings = result.stdout.splitlines()[0].split()
    message = result.stdout.splitlines()[1]
    assert float(value) == pytest.approx(0.195501, abs=1e-6)  # P(T_3 > 1)
    assert n_warnings == "1"
    if no_temporary_files:
        assert cached == "False" and "compiled in memory" in message
    else:
        assert cached == "True" and str(tmp_path) in message
        assert any(tmp_path.iterdir())  # the kernel was cached there


def test_a_cached_kernel_is_stale_when_any_kernel_source_changes(tmp_path):
    """A kernel compiles its callees from other files into itself, so its cache entry must
    go stale when any file with jitted code changes, not only its own (numba checks only its
    own, and its cache beside the package outlives an upgrade)."""
    import shutil

    from numba.core.caching import FunctionCache

    from skbayes_mh._kernels import _cache, mh

    stamp = FunctionCache(mh.mh_loop.py_func)._impl.locator.get_source_stamp()
    assert stamp[1] == _cache.KERNEL_SOURCES_STAMP == _cache.kernel_sources_stamp()
    copy = tmp_path / "skbayes_mh"
    shutil.copytree(_cache.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert _cache.kernel_sources_stamp(str(copy)) == _cache.KERNEL_SOURCES_STAMP
    with open(copy / "_kernels" / "proposals.py", "a") as source:
        source.write("\n# a callee of mh.py changed\n")
    assert _cache.kernel_sources_stamp(str(copy)) != _cache.KERNEL_SOURCES_STAMP
