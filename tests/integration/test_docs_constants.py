"""The numbers the pages and docstrings quote for the ``"auto"`` rules are the code's.

Each documented place that states a rule's constant is checked against the constant itself,
so that changing a rule without its documentation (or the other way round) fails here. The
pages are read from the checkout; an installed copy without them skips those checks.
"""
from pathlib import Path

import pytest

from skbayes_mh._core.auto import (AUTO_EXACT_MAX_ROWS, AUTO_FULL_DATA_ESS_PER_CHAIN,
                                   AUTO_FULL_DATA_WORK, AUTO_MAX_THIN, AUTO_MIN_ROWS_PER_PARAM,
                                   AUTO_SHORT_WARMUP, AUTO_SHORT_WARMUP_MIN_PARAMS,
                                   AUTO_SLOW_MAX_THIN, AUTO_WARMUP)
from skbayes_mh._core.convergence import MAX_RHAT, MIN_ESS_PER_CHAIN
from skbayes_mh.linear_model._docs import SAMPLING_PARAMETERS
from skbayes_mh.sampling import AutoThin
from skbayes_mh.sampling._driver import N_WINDOWS
from skbayes_mh.sampling._tuning import SettledWarmup

ROOT = Path(__file__).resolve().parents[2]
WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}
ORDINALS = {4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh", 8: "eighth"}


def page(name):
    path = ROOT / name
    if not path.is_file():
        pytest.skip(f"{name} is not beside the package (an installed copy)")
    return " ".join(path.read_text().split())  # line breaks as spaces


def rule_row(starts):
    rows = [line for line in (ROOT / "docs" / "choosing.md").read_text().splitlines()
            if line.startswith(starts)]
    assert len(rows) == 1, f"choosing.md: no single rule row starting {starts!r}"
    return rows[0]


def test_choosing_rule_table_quotes_the_auto_constants():
    page("docs/choosing.md")
    exact = rule_row(f"| up to {AUTO_EXACT_MAX_ROWS:,} rows, or fewer than "
                           f"{AUTO_MIN_ROWS_PER_PARAM} rows per parameter |")
    assert f"at most {AUTO_MAX_THIN}" in exact
    assert f"at most {AUTO_FULL_DATA_WORK:,} / (rows x parameters)" in exact
    assert f"a bulk ESS of {AUTO_FULL_DATA_ESS_PER_CHAIN} a chain" in exact
    tall = rule_row(f"| above {AUTO_EXACT_MAX_ROWS:,} rows and at least "
                          f"{AUTO_MIN_ROWS_PER_PARAM} rows per parameter |")
    assert f"at most {AUTO_MAX_THIN};" in tall
    assert (f"as far as a bulk ESS of {AUTO_FULL_DATA_ESS_PER_CHAIN} a chain needs, at most "
            f"{AUTO_SLOW_MAX_THIN}") in tall


def test_readme_states_the_acceptance_rule_and_the_convergence_check():
    text = page("README.md")
    assert (f"up to {AUTO_EXACT_MAX_ROWS:,} rows (or with fewer than "
            f"{AUTO_MIN_ROWS_PER_PARAM} rows per parameter)") in text
    assert f"R-hat > {MAX_RHAT}" in text
    assert f"below {MIN_ESS_PER_CHAIN} per chain" in text


def test_estimator_docstrings_quote_the_thinning_rule():
    text = " ".join(SAMPLING_PARAMETERS.split())
    assert f"at most {AUTO_MAX_THIN} (kept in ``thin_``)" in text
    assert f"at most {AUTO_FULL_DATA_WORK:,} rows x parameters x thin per draw" in text
    assert f"a bulk ESS of {AUTO_FULL_DATA_ESS_PER_CHAIN} a chain" in text
    assert f"at most {WORDS[int(AutoThin.TAU_MEDIAN_REACH)]} times the median" in text
    assert (f"up to {AUTO_SLOW_MAX_THIN} as far as a bulk ESS of "
            f"{AUTO_FULL_DATA_ESS_PER_CHAIN} a chain needs") in text


def test_every_estimators_acceptance_entry_quotes_the_rule():
    from skbayes_mh.linear_model._base import ESTIMATORS

    assert len(ESTIMATORS) >= 5
    for name, estimator in ESTIMATORS.items():
        text = " ".join(estimator.__doc__.split())
        assert (f"the data have at most {AUTO_EXACT_MAX_ROWS:,} rows or fewer than "
                f"{AUTO_MIN_ROWS_PER_PARAM} rows per parameter") in text, name


def test_the_warm_up_rule_is_quoted_as_the_code_has_it():
    """choosing.md's warm-up paragraph and the shared ``n_warmup`` entry."""
    text = page("docs/choosing.md")
    assert f'`n_warmup="auto"` is {AUTO_WARMUP:,} iterations a chain' in text
    assert f"and {AUTO_SHORT_WARMUP} (nutpie's) where" in text
    assert f"the model has at least {AUTO_SHORT_WARMUP_MIN_PARAMS} parameters" in text
    entry = " ".join(SAMPLING_PARAMETERS.split())
    assert (f'``"auto"``: {AUTO_WARMUP}; {AUTO_SHORT_WARMUP} where a test reading every row '
            f"runs Hamiltonian paths in the Laplace shape of a model with at least "
            f"{AUTO_SHORT_WARMUP_MIN_PARAMS} parameters") in entry


def test_the_warm_ups_end_is_quoted_as_the_code_has_it():
    """choosing.md's and the shared ``n_warmup`` entry's account of ``SettledWarmup``."""
    text = page("docs/choosing.md")
    assert (f"at the end of the first of its {N_WINDOWS} windows, from the "
            f"{ORDINALS[SettledWarmup.MIN_WINDOWS]} on, at which the last two windows' "
            f"acceptance rate lies within {SettledWarmup.RATE_BAND} of the target") in text
    assert (f"the means of the two halves within {WORDS[int(SettledWarmup.LEVEL_Z)]} Monte "
            f"Carlo standard errors") in text
    assert f"first needs {2 * AutoThin.MIN_DRAWS} iterations" in text
    entry = " ".join(SAMPLING_PARAMETERS.split())
    minimum = round(100 * SettledWarmup.MIN_WINDOWS / N_WINDOWS)
    assert (f"from {minimum}% of the {AUTO_SHORT_WARMUP} on, and {2 * AutoThin.MIN_DRAWS} "
            f"where a thinning rule reads it") in entry
