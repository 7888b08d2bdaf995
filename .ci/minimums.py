"""Print the project's declared minimum versions as pip constraints (``name==version``).

Every core dependency in ``pyproject.toml`` is declared as ``name>=version``; the
minimum-versions job of ``.ci/run`` installs exactly those versions, so that the declared
minimums are the tested ones. A dependency without a ``>=`` bound is an error.
"""
import re
import sys
import tomllib
from pathlib import Path

project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
pins = []
for requirement in project["project"]["dependencies"]:
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-\[\]]+)\s*>=\s*([0-9][0-9A-Za-z.]*)\s*(,.*)?",
                         requirement)
    if match is None:
        sys.exit(f"pyproject.toml: {requirement!r} declares no minimum version (name>=version)")
    name = re.sub(r"\[.*\]", "", match.group(1))
    pins.append(f"{name}=={match.group(2)}")
print("\n".join(pins))
