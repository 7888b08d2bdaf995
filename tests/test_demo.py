"""The README's main job, at a small size: it runs and prints one row per test."""
from skbayes_mh.__main__ import main
from skbayes_mh.acceptance import ACCEPTANCE_TESTS


def test_demo_prints_a_row_per_test(capsys):
    assert main(["demo", "--n-data", "2000", "--n-samples", "500"]) == 0
    out = capsys.readouterr().out
    for name in ACCEPTANCE_TESTS:
        assert any(line.startswith(name) for line in out.splitlines())
    assert "exact posterior mean" in out
