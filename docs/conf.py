"""Sphinx configuration of the skbayes_mh documentation.

Build (from the repository root, with the ``docs`` extra installed)::

    python -m sphinx -W -b html docs docs/_build/html

Environment variables read at build time:

``SKBAYES_MH_DOCS_NO_GALLERY=1``
    Do not run the scripts in ``examples/``: the gallery pages are still written, with
    their code but without output or figures (``plot_gallery = False``). For quick builds
    of the prose and the API reference.
``SKBAYES_MH_DOCS_SMALL=1``
    Not read here but by the examples themselves: an example that honours it runs a smaller
    version of its experiment (fewer rows, draws or chains), so that the gallery builds
    quickly. sphinx-gallery runs the examples inside this Sphinx process, so the variable
    reaches them as it was set for the build.

The build needs no network: no intersphinx, and the theme's assets are copied from the
installed package. (MathJax, by sphinx.ext.mathjax's default, would be loaded from its CDN
by the reader's browser on pages that contain math; no page does yet.)
"""
import inspect
import os
import sys
from pathlib import Path

import matplotlib

# Every figure (sphinx-gallery's examples, the plot directive of the quickstart) is drawn
# off screen.
matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# Document the working tree even when an older copy of the package is installed.
sys.path.insert(0, str(ROOT))

import skbayes_mh  # noqa: E402  (after the path is set)

# -- Project -------------------------------------------------------------------------------

project = "skbayes_mh"
author = "The skbayes_mh developers"
copyright = "the skbayes_mh developers"
version = skbayes_mh.__version__
release = skbayes_mh.__version__

# -- Extensions ----------------------------------------------------------------------------

extensions = [
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "matplotlib.sphinxext.plot_directive",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# -- autodoc, autosummary, numpydoc --------------------------------------------------------

# The API pages are generated into docs/api/generated/ (git ignores it) on every build.
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
# Signatures stay as written; type information is in the numpydoc sections.
autodoc_typehints = "none"
# "fit", not "MinibatchMHLogisticRegression.fit", in the "On this page" sidebar.
toc_object_entries_show_parents = "hide"

# numpydoc would list every method and attribute a second time in a table of its own, next
# to the entries autodoc writes from the class template: the same objects described twice.
numpydoc_show_class_members = False
# No numpydoc style validation: the build reports only what breaks the rendering.
numpydoc_validation_checks = set()
# ``X : array-like of shape (n, d)``: no cross-reference attempt for every word of a type.
numpydoc_xref_param_type = False


def _skip_scikit_learn_members(app, what, name, obj, skip, options):
    """Leave out of the class pages the methods a class inherits from scikit-learn
    (``get_params``, ``set_params``, ``score``, ``get_metadata_routing``, the
    ``set_*_request`` methods): scikit-learn documents them, and their docstrings point to
    labels and glossary terms of scikit-learn's own documentation, which do not exist here.
    The class template says where to find them."""
    if what != "class" or skip:
        return None
    function = obj.fget if isinstance(obj, property) else obj
    if inspect.isroutine(function):
        module = getattr(function, "__module__", None) or ""
        if not module.startswith("skbayes_mh"):
            return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)


# -- MyST (the Markdown pages) -------------------------------------------------------------

# Headings up to ### get anchors, so that ``page.md#a-heading`` links resolve.
myst_heading_anchors = 3
# Definition lists (the extras on the installation page).
myst_enable_extensions = ["deflist"]

# -- Figures drawn at build time (the quickstart's ``plot`` directive) ---------------------

plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 100)]
plot_rcparams = {"figure.figsize": (6.0, 3.5)}
plot_apply_rcparams = True

# -- sphinx-gallery ------------------------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # Run every script in examples/, whatever its name (the default runs only plot_*.py).
    "filename_pattern": r"\.py$",
    "plot_gallery": os.environ.get("SKBAYES_MH_DOCS_NO_GALLERY", "0") != "1",
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    # An example that fails fails the build.
    "abort_on_example_error": True,
    # The examples' code links to this package's API pages, resolved from this build (no
    # intersphinx, so no links to other packages' documentation and no network).
    "doc_module": ("skbayes_mh",),
    "backreferences_dir": None,
    "download_all_examples": False,
    # No sg_execution_times pages: they load jQuery and DataTables from CDNs when viewed.
    # The run time of each example is printed in the build log and on its own page.
    "write_computation_times": False,
    "remove_config_comments": True,
}

# -- HTML ----------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"skbayes_mh {release}"
html_theme_options = {
    # No icon links, version switcher or analytics: nothing that loads from the network.
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# The light/dark switch starts at "auto" (the reader's system setting); without it the
# theme's script logs an error on a reader's first visit.
html_context = {"default_mode": "auto"}
html_show_sourcelink = False
html_copy_source = False
