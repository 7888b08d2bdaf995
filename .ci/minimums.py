"""Print the project's declared minimum versions as pip constraints (``name==version``).

Every core dependency in ``pyproject.toml`` is declared as ``name>=version``; the
minimum-versions job (``.ci/run-minimums``) installs exactly those versions, so that the declared
minimums are the tested ones. A dependency without a ``>=`` bound is an error.

``python .ci/minimums.py --test-tools NAME ...`` prints instead the ``test`` extra's
requirements of those names (``pytest>=7``, ...): the tools that job's tests need, without
the optional backends and plotting libraries the extra also holds.
"""
import re
import sys
import tomllib
from pathlib import Path

project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())


def name_of(requirement):
    return re.split(r"[\s<>=!~;\[]", requirement.strip(), maxsplit=1)[0].lower()


if sys.argv[1:2] == ["--test-tools"]:
    wanted = {name.lower() for name in sys.argv[2:]}
    test_extra = project["project"]["optional-dependencies"]["test"]
    found = [requirement for requirement in test_extra if name_of(requirement) in wanted]
    missing = wanted - {name_of(requirement) for requirement in found}
    if missing:
        sys.exit(f"pyproject.toml: the test extra has no {', '.join(sorted(missing))}")
    print("\n".join(found))
    sys.exit(0)

pins = []
for requirement in project["project"]["dependencies"]:
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-\[\]]+)\s*>=\s*([0-9][0-9A-Za-z.]*)\s*(,.*)?",
                         requirement)
    if match is None:
        sys.exit(f"pyproject.toml: {requirement!r} declares no minimum version (name>=version)")
    name = re.sub(r"\[.*\]", "", match.group(1))
    pins.append(f"{name}=={match.group(2)}")
print("\n".join(pins))
