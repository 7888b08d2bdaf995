"""The README's main job, at a small size: every acceptance test runs, and each posterior
agrees with the exact test's within its Monte Carlo error."""
import pytest

from skbayes_mh.__main__ import main
from skbayes_mh.acceptance import ACCEPTANCE_TESTS
from skbayes_mh.demo import compare

#: The demo fits every acceptance test.
pytestmark = pytest.mark.slow


def test_every_test_runs_and_agrees_with_the_exact_posterior():
    rows = {row["name"]: row for row in compare(n_data=3000, n_draws=1500, seed=1)}
    assert set(rows) == set(ACCEPTANCE_TESTS)
    for name, row in rows.items():
        assert row["r_hat"] < 1.05, (name, row)
        # The worst weight's mean and sd within four Monte Carlo standard errors of the
        # exact posterior's (no allowance beyond them).
        assert row["shift"] <= 4 * row["shift_error"], (name, row)
        assert abs(row["sd_ratio_worst"] - 1) <= 4 * row["sd_ratio_error"], (name, row)
    assert rows["firefly"]["rows_per_iteration"] < 0.5 * 3000
    # The exact test reads every row at each gradient step of its Hamiltonian path; the
    # minibatch test with control variates reads a minibatch of about 100.
    assert rows["metropolis"]["proposal"] == "hmc"
    assert rows["metropolis"]["rows_per_iteration"] >= 3000
    assert rows["minibatch"]["proposal"] == "hmc+CV"
    assert rows["minibatch"]["rows_per_iteration"] < 0.1 * 3000


def test_the_command_prints_a_row_per_test(capsys):
    assert main(["demo", "--n-data", "1000", "--n-draws", "200"]) == 0
    out = capsys.readouterr().out
    for name in ACCEPTANCE_TESTS:
        assert any(line.startswith(name) for line in out.splitlines())
    assert "(reference)" in out
