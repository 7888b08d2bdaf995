"""Where numba caches the kernels, and when a cached kernel is fresh: beside the package, in
the user's cache directory or among the temporary files (:data:`CACHE`), each stamped with
the package's kernel sources (:data:`KERNEL_SOURCES_STAMP`)."""
import glob
import hashlib
import os
import tempfile
import warnings

import numba

#: The package's directory, and the parts of it that hold jitted code. A kernel compiles its
#: callees from other files into itself, while numba checks a cached kernel against its own
#: file only: a release that changed ``proposals.py`` alone would load ``mh.py``'s kernels
#: cached with the old proposals (numba's cache beside the package outlives an upgrade).
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL_SOURCES = ("_kernels", "models", "_validation.py")


def kernel_sources_stamp(root=PACKAGE_DIR):
    """A SHA-256 digest of every source file under ``root`` that holds jitted code
    (:data:`KERNEL_SOURCES`): the freshness stamp of every cached kernel of the package."""
    digest = hashlib.sha256()
    for entry in KERNEL_SOURCES:
        path = os.path.join(root, entry)
        files = sorted(glob.glob(os.path.join(path, "*.py"))) if os.path.isdir(path) else [path]
        for name in files:
            digest.update(os.path.relpath(name, root).encode())
            with open(name, "rb") as source:
                digest.update(source.read())
    return digest.hexdigest()


#: The stamp of this installation's kernel sources (:func:`kernel_sources_stamp`).
KERNEL_SOURCES_STAMP = kernel_sources_stamp()


def _stamp_package_caches():
    """Make numba's cache of every function in this package fresh only for the same kernel
    sources (:data:`KERNEL_SOURCES_STAMP`) as well as its own file: a locator class for each
    of numba's file-backed ones, taking this package's functions and adding the stamp.
    Without numba's locator classes (a future numba), its own check stays."""
    try:
        from numba.core.caching import CacheImpl, _SourceFileBackedLocatorMixin
        classes = CacheImpl._locator_classes
    except (ImportError, AttributeError):
        return
    if any(getattr(locator, "package_stamped", False) for locator in classes):
        return

    def stamped(base):
        class Locator(base):
            package_stamped = True

            @classmethod
            def from_function(cls, py_func, py_file):
                if not os.path.abspath(py_file).startswith(PACKAGE_DIR + os.sep):
                    return None
                return super().from_function(py_func, py_file)

            def get_source_stamp(self):
                return super().get_source_stamp(), KERNEL_SOURCES_STAMP

        Locator.__name__ = Locator.__qualname__ = f"PackageStamped{base.__name__}"
        return Locator

    classes[:0] = [stamped(base) for base in classes
                   if issubclass(base, _SourceFileBackedLocatorMixin)]


_stamp_package_caches()


def _cache_probe():
    """A function of this directory's files, for which :func:`_cache_on_disk` asks numba
    where it would cache."""


def _cache_on_disk():
    """Whether the kernels can be cached on disk, arranging a place first. numba caches
    beside the package (``__pycache__``) or in the user's cache directory. Where neither can
    be written (a read-only install run as another user without a writable home), a
    directory among this machine's temporary files takes their place; where that fails
    too, the kernels are compiled in memory, again in each process. Either way one warning
    says so (``NUMBA_CACHE_DIR`` chooses the place)."""
    from numba.core.caching import FunctionCache

    try:
        FunctionCache(_cache_probe)
        return True
    except RuntimeError:  # numba found no writable place
        pass
    where = os.path.dirname(os.path.abspath(__file__))
    owner = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    fallback = os.path.join(tempfile.gettempdir(), f"skbayes_mh-numba-cache-{owner}")
    previous = numba.config.CACHE_DIR
    try:
        os.makedirs(fallback, exist_ok=True)
        numba.config.CACHE_DIR = fallback
        FunctionCache(_cache_probe)
    except (OSError, RuntimeError):
        numba.config.CACHE_DIR = previous
        warnings.warn(
            f"skbayes_mh: numba cannot write its cache beside the package ({where}), in the "
            f"user cache directory or in {fallback}: the kernels are compiled in memory, "
            f"again in each new process (about a minute each time). Set NUMBA_CACHE_DIR to a "
            f"writable directory to keep them.", RuntimeWarning, stacklevel=2)
        return False
    warnings.warn(
        f"skbayes_mh: numba cannot write its cache beside the package ({where}) nor in the "
        f"user cache directory: the compiled kernels are cached in {fallback} instead. Set "
        f"NUMBA_CACHE_DIR to choose another place.", RuntimeWarning, stacklevel=2)
    return True


#: Whether the kernels are cached on disk (:func:`_cache_on_disk`).
CACHE = _cache_on_disk()
