"""The batched convergence diagnostics (``skbayes_mh.diagnostics``: rank-normalised split
R-hat, bulk and tail ESS for all parameters at once) against arviz-stats' per-parameter
array functions, on draws that exercise every branch of the ESS's Geyer sequences:
independent draws, autocorrelated chains (short and long positive sequences), a random
walk (the sequence runs to the last lags), chains at different levels, ties, constant
parameters, NaN, odd and short chains, one chain. The two compute the same formulas in
another order of operations: they agree to a few units in the last place (1e-12
relative)."""
import numpy as np
import pytest
from arviz_stats.base import array_stats

from skbayes_mh import diagnostics


def autoregressive(rng, n_chains, n_draws, n_params, phi):
    x = np.zeros((n_chains, n_draws, n_params))
    noise = rng.normal(size=x.shape)
    for t in range(1, n_draws):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


def _cases():
    rng = np.random.default_rng(0)
    with_nan = rng.normal(size=(4, 100, 5))
    with_nan[2, 17, 3] = np.nan
    constant_column = rng.normal(size=(4, 200, 4))
    constant_column[:, :, 1] = 2.5
    return {
        "independent": rng.normal(size=(4, 1000, 30)),
        "ar-0.9": autoregressive(rng, 4, 1000, 30, 0.9),
        "ar-0.995-odd": autoregressive(rng, 4, 1001, 20, 0.995),
        "anticorrelated": autoregressive(rng, 2, 500, 10, -0.7),
        "random-walk": np.cumsum(rng.normal(size=(4, 1000, 20)), axis=1),
        "chains-apart": autoregressive(rng, 4, 500, 10, 0.5) + np.arange(4)[:, None, None],
        "ties": rng.integers(0, 3, size=(3, 200, 10)).astype(float),
        "constant": constant_column,
        "nan": with_nan,
        "short": rng.normal(size=(2, 7, 5)),
        "too-short": rng.normal(size=(3, 3, 2)),
        "one-chain": autoregressive(rng, 1, 300, 10, 0.7),
        "matrix-shaped": rng.normal(size=(2, 100, 3, 4)),
    }


CASES = _cases()


def _arviz(function, draws, **kwargs):
    flat = draws.reshape(draws.shape[0], draws.shape[1], -1)
    with np.errstate(all="ignore"):
        values = function(np.moveaxis(flat, 2, 0), chain_axis=1, draw_axis=2, **kwargs)
    return np.asarray(values, dtype=float).reshape(draws.shape[2:])


@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_diagnostics_equal_arviz_stats(name):
    draws = CASES[name]
    expected = {"r_hat": _arviz(array_stats.rhat, draws, method="rank"),
                "ess_bulk": _arviz(array_stats.ess, draws, method="bulk"),
                "ess_tail": _arviz(array_stats.ess, draws, method="tail", prob=(0.05, 0.95))}
    separate = {"r_hat": diagnostics.rhat(draws), "ess_bulk": diagnostics.ess_bulk(draws),
                "ess_tail": diagnostics.ess_tail(draws)}
    together = dict(zip(("r_hat", "ess_bulk", "ess_tail"),
                        diagnostics.convergence_statistics(draws)))
    for key, reference in expected.items():
        for values in (separate[key], together[key]):
            assert values.shape == reference.shape
            np.testing.assert_array_equal(np.isnan(values), np.isnan(reference), err_msg=key)
            np.testing.assert_allclose(values, reference, rtol=1e-12, err_msg=key)


@pytest.mark.parametrize("smallest, draws_per_block", [(7, 1), (1, 4 * 1000 * 3)])
def test_blocks_do_not_change_the_result(monkeypatch, smallest, draws_per_block):
    draws = CASES["ar-0.9"]
    whole = diagnostics.convergence_statistics(draws)
    monkeypatch.setattr(diagnostics, "DIAGNOSTICS_BLOCK", smallest)
    monkeypatch.setattr(diagnostics, "DIAGNOSTICS_BLOCK_DRAWS", draws_per_block)
    # The same to rounding: NumPy's sums over a block's rows may pair terms by its length.
    for a, b in zip(whole, diagnostics.convergence_statistics(draws)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("direct_lags", [2, 4, 16, 64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_first_lags_summed_directly_give_what_every_lag_gives(monkeypatch, name,
                                                                   direct_lags):
    """The ESS from the first ``DIRECT_LAGS`` autocovariances summed directly, where every
    parameter's Geyer sequence ends within them, equals the one from every lag's (FFTs, the
    path taken with ``DIRECT_LAGS = 0``); where a sequence runs on, the FFTs decide."""
    draws = CASES[name]
    monkeypatch.setattr(diagnostics, "DIRECT_LAGS", 0)
    every_lag = [diagnostics.ess_bulk(draws), diagnostics.ess_tail(draws)]
    monkeypatch.setattr(diagnostics, "DIRECT_LAGS", direct_lags)
    for first_lags, reference in zip([diagnostics.ess_bulk(draws),
                                      diagnostics.ess_tail(draws)], every_lag):
        np.testing.assert_array_equal(np.isnan(first_lags), np.isnan(reference))
        np.testing.assert_allclose(first_lags, reference, rtol=1e-12)


def test_the_direct_sum_serves_independent_draws_and_not_a_random_walk(monkeypatch):
    """Which path serves which draws: independent draws end their sequences within the
    first lags (no FFT), a random walk's runs on (the FFTs)."""
    calls = []
    fft = diagnostics.rfft
    monkeypatch.setattr(diagnostics, "rfft", lambda *a, **k: calls.append(1) or fft(*a, **k))
    diagnostics.ess_bulk(CASES["independent"])
    assert not calls
    diagnostics.ess_bulk(CASES["random-walk"])
    assert calls


def test_shorter_chains_take_more_parameters_a_block():
    assert diagnostics._block_size(4, 1000) == diagnostics.DIAGNOSTICS_BLOCK
    assert diagnostics._block_size(4, 10**6) == diagnostics.DIAGNOSTICS_BLOCK
    assert (diagnostics._block_size(1, 5)
            == diagnostics.DIAGNOSTICS_BLOCK_DRAWS // 5 > diagnostics.DIAGNOSTICS_BLOCK)


@pytest.mark.parametrize("levels", [None, 1, 3, 40])
def test_average_ranks_are_scipys(levels):
    # Continuous values, and values with ties (a rejected move repeats its draw): one level
    # makes every value of a row tie.
    from scipy.stats import rankdata

    rng = np.random.default_rng(levels or 0)
    for shape in [(31, 4000), (1, 4), (3, 7)]:
        values = (rng.normal(size=shape) if levels is None
                  else rng.integers(0, levels, size=shape).astype(float))
        np.testing.assert_array_equal(diagnostics._average_ranks(values),
                                      rankdata(values, method="average", axis=1))
