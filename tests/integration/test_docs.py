"""The documentation builds with warnings as errors (the gallery at its reduced size), and
its quickstart page, rendered by a headless Chromium, shows its figure.

Needs the ``docs`` extra; the page test also needs a Chromium on the machine (Debian's
``chromium`` package, which ``.ci/run`` installs). Without them the tests skip and say
why."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    for module in ("sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme", "myst_parser"):
        pytest.importorskip(module, reason="the docs extra is not installed: "
                                           "pip install '.[docs]'")
    if not (ROOT / "docs" / "conf.py").is_file():
        pytest.skip("no docs/ folder (an installed copy of the package)")
    output = tmp_path_factory.mktemp("site")
    environment = dict(os.environ, SKBAYES_MH_DOCS_SMALL="1", MPLBACKEND="Agg")
    environment.pop("SKBAYES_MH_DOCS_NO_GALLERY", None)
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(output / "doctrees"), str(ROOT / "docs"), str(output / "html")],
        capture_output=True, text=True, env=environment, cwd=ROOT, timeout=1200)
    assert build.returncode == 0, (
        f"sphinx-build -W failed:\n{build.stdout[-4000:]}\n{build.stderr[-6000:]}")
    return output / "html"


def test_every_page_and_gallery_example_is_built(built_site):
    for page in ("index", "installation", "quickstart", "user_guide", "api", "cite"):
        assert (built_site / f"{page}.html").is_file(), page
    examples = sorted(path.stem for path in (ROOT / "examples").glob("*.py"))
    for example in examples:
        assert (built_site / "auto_examples" / f"{example}.html").is_file(), example
    # Every plotting example drew at least one figure.
    for example in (name for name in examples if name.startswith("plot_")):
        figures = list((built_site / "_images").glob(f"sphx_glr_{example}_*.png"))
        assert figures, f"{example} drew no figure"


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_quickstart_page_shows_its_figure_in_a_browser(built_site):
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed: pip install '.[docs]'")
    executable = chromium()
    if executable is None:
        pytest.skip("no Chromium on this machine (Debian: apt-get install chromium)")
    page_url = (built_site / "quickstart.html").as_uri()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(page_url, wait_until="load")
            images = page.eval_on_selector_all(
                "article img",
                "nodes => nodes.map(n => [n.getAttribute('src'), n.complete, n.naturalWidth,"
                " n.naturalHeight, n.getBoundingClientRect().width])")
            title = page.title()
        finally:
            browser.close()
    assert "Quickstart" in title or "quickstart" in title.lower(), title
    drawn = [image for image in images if image[1] and image[2] > 100 and image[3] > 100
             and image[4] > 100]
    assert drawn, f"no figure rendered on the quickstart page; images found: {images}"
