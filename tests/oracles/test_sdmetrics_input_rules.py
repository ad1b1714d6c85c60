"""The SDMetrics facade follows SDMetrics 0.32's input rules (issue #25), proven differentially.

Every case feeds the same inputs, with the same call (positional or keyword), to SDMetrics 0.32
itself (the test-only oracle) and to ``synthguard.compat.sdmetrics``, and asserts the same outcome:
the same exception type and message, or the same user warnings (category and message) and the
same numbers. SDMetrics' random DCR baseline is unseeded and drawn differently on purpose
(docs/compat.md S7, S8), so its median is compared only where it is deterministic (zero or
not); every other number is compared exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthguard.compat.sdmetrics import single_table as facade

from .differential import same_breakdown as _same_breakdown
from .differential import same_dcr_baseline as _same_baseline
from .differential import sdmetrics_pair as _differential

pytestmark = pytest.mark.oracle("sdmetrics")

NUM = {"columns": {"A": {"sdtype": "numerical"}}}
AB = {"columns": {"A": {"sdtype": "numerical"}, "B": {"sdtype": "categorical"}}}


# ------------------------------------------------------------------------------------------ (a) columns
def test_column_missing_from_synthetic_is_left_out_with_sdmetrics_warning():
    real = pd.DataFrame({"A": [1.0, 2, 3, 4], "B": list("abab")})
    syn = pd.DataFrame({"A": [1.0, 2, 3, 4]})
    ref, got = _differential("DCRBaselineProtection", real, syn, AB, None)
    assert ref["warnings"] and "error" not in ref
    _same_baseline(ref, got)


def test_column_missing_from_metadata_is_left_out_with_sdmetrics_warning():
    real = pd.DataFrame({"A": [1.0, 2, 3, 4], "extra": [9, 8, 7, 6]})
    syn = pd.DataFrame({"A": [1.5, 2, 3, 9], "extra": [1, 1, 1, 1]})
    ref, got = _differential("DCRBaselineProtection", real, syn, NUM, None)
    assert ref["warnings"] and "error" not in ref
    _same_baseline(ref, got)


def test_overfitting_evaluates_common_declared_columns():
    train = pd.DataFrame({"A": [1.0, 2, 3, 4], "B": list("abab"), "note": list("wxyz")})
    syn = pd.DataFrame({"A": [1.0, 2.1, 3, 4.2], "B": list("abba")})
    hold = pd.DataFrame({"A": [1.5, 2.5, 3.5, 4.0], "B": list("bbaa")})
    ref, got = _differential("DCROverfittingProtection", train, syn, hold, AB, None)
    _same_breakdown(ref, got)


def test_no_declared_statistical_column_raises_sdmetrics_error():
    real = pd.DataFrame({"A": [1.0, 2, 3]})
    meta = {"columns": {"A": {"sdtype": "id"}}}
    ref, _ = _differential("DCRBaselineProtection", real, real.copy(), meta, None)
    assert ref["error"][0] == "ValueError"


# ------------------------------------------------------------------------------------------ (b) NaN rules
def test_all_missing_synthetic_column_is_scored_like_sdmetrics():
    real = pd.DataFrame({"A": [12.5, np.nan, 3.0, 8.25, 40.0, 7.5, np.nan]})
    syn = pd.DataFrame({"A": [np.nan, np.nan]})
    ref, got = _differential("DCRBaselineProtection", real, syn, NUM, None)
    assert "error" not in ref
    _same_baseline(ref, got)


@pytest.mark.parametrize("real_a, syn_a", [
    ([np.nan, np.nan, np.nan], [1.0, np.nan, 2.0]),       # real all missing
    ([np.nan, np.nan], [np.nan, np.nan, np.nan]),         # both all missing
], ids=["real-all-missing", "both-all-missing"])
def test_all_missing_real_column_is_scored_where_sdmetrics_crashes(real_a, syn_a):
    """Documented difference (docs/compat.md S15): SDMetrics' random baseline draws
    ``uniform(nan, nan)`` and numpy raises OverflowError; the facade scores the column (the random
    rows are missing there too, as SDMetrics intends) and gives the distances SDMetrics'
    overfitting metric gives on the same column."""
    import sdmetrics.single_table as oracle

    real, syn = pd.DataFrame({"A": real_a}), pd.DataFrame({"A": syn_a})
    with pytest.raises(OverflowError):
        oracle.DCRBaselineProtection.compute_breakdown(real, syn, NUM, None)
    got = facade.DCRBaselineProtection.compute_breakdown(real, syn, NUM, None)
    expected = float(np.median(np.where(pd.isna(syn_a), 0.0, 1.0)))
    assert got["median_DCR_to_real_data"]["synthetic_data"] == expected
    assert got["median_DCR_to_real_data"]["random_data_baseline"] == 0.0  # every random value missing
    _same_breakdown(*_differential("DCROverfittingProtection", real, syn, real.copy(), NUM, None))


def test_all_missing_column_next_to_others_counts_in_the_mean():
    real = pd.DataFrame({"A": [1.0, 2, 3, 4, 5], "B": list("abcab"), "C": [np.nan] * 5})
    syn = pd.DataFrame({"A": [1.0, 2.5, 3, 6, 5], "B": list("abccb"), "C": [np.nan, 1.0, np.nan, 2.0, 3.0]})
    meta = {"columns": {**AB["columns"], "C": {"sdtype": "numerical"}}}
    # baseline: the synthetic column all missing (a real one all missing crashes SDMetrics, S15)
    ref, got = _differential("DCRBaselineProtection", real.assign(C=[1.0, 2, np.nan, 4, 5]),
                             syn.assign(C=np.nan), meta, None)
    assert "error" not in ref
    _same_baseline(ref, got)
    # same ranges as the training data: SDMetrics divides by the holdout's own ranges (S5)
    hold = pd.DataFrame({"A": [1.0, 2, 3.3, 4, 5], "B": list("aacab"), "C": [np.nan] * 5})
    _same_breakdown(*_differential("DCROverfittingProtection", real, syn, hold, meta, None))


def test_partly_missing_values_follow_sdmetrics_distance():
    real = pd.DataFrame({"A": [1.0, np.nan, 3, 4, 5], "B": ["a", None, "c", "a", "b"]})
    syn = pd.DataFrame({"A": [np.nan, 2.0, 3, np.nan, 5], "B": [None, "b", None, "a", "b"]})
    ref, got = _differential("DCRBaselineProtection", real, syn, AB, None)
    _same_baseline(ref, got)
    hold = pd.DataFrame({"A": [np.nan, 2.0, 3.5, 4, 1], "B": ["a", "b", None, "c", "b"]})
    _same_breakdown(*_differential("DCROverfittingProtection", real, syn, hold, AB, None))


# ------------------------------------------------------------------------------------------ (c) warnings, errors
def test_subsample_larger_than_synthetic_warns_and_uses_all_rows():
    real = pd.DataFrame({"A": [1.0, 2, 3, 4, 5, 6]})
    syn = pd.DataFrame({"A": [1.5, 2, 3.5, 9]})
    ref, got = _differential("DCRBaselineProtection", real, syn, NUM, None, 10, 3)
    assert ref["warnings"]
    _same_baseline(ref, got)
    hold = pd.DataFrame({"A": [1.0, 6, 3, 4]})  # the training data's range (S5)
    _same_breakdown(*_differential("DCROverfittingProtection", real, syn, hold, NUM, None,
                                   num_rows_subsample=10, num_iterations=3))


def test_small_validation_data_warns_like_sdmetrics():
    real = pd.DataFrame({"A": [1.0, 2, 3, 4, 5, 6]})
    ref, got = _differential("DCROverfittingProtection", real, real.iloc[:3], real.iloc[:2], NUM, None)
    assert ref["warnings"]
    _same_breakdown(ref, got)


@pytest.mark.parametrize("fmt", [None, "%Y-%m-%d", "%d/%m/%Y"], ids=["no-format", "format", "wrong-format"])
def test_datetime_text_needs_a_format_like_sdmetrics(fmt):
    spec = {"sdtype": "datetime", **({"datetime_format": fmt} if fmt else {})}
    meta = {"columns": {"when": spec, "A": {"sdtype": "numerical"}}}
    real = pd.DataFrame({"when": ["2020-01-01", "2020-03-01", "2021-01-01"], "A": [1.0, 2, 3]})
    syn = pd.DataFrame({"when": ["2020-01-02", "2020-05-01", "2021-01-01"], "A": [1.0, 2, 4]})
    ref, got = _differential("DCRBaselineProtection", real, syn, meta, None)
    if fmt == "%Y-%m-%d":
        assert "error" not in ref
    else:
        assert ref["error"][0] == "ValueError"
    _same_baseline(ref, got)


@pytest.mark.parametrize("args", [
    (None, None, 2),          # iterations without subsampling
    (None, 0, 1),             # subsample below 1
    (1.5, None, 1),           # table_name not a string
    ("other", None, 1),       # metadata is single-table: table_name is not checked
], ids=["iterations-without-subsample", "zero-subsample", "table-name-float", "table-name-unknown"])
def test_argument_errors_match_sdmetrics(args):
    real = pd.DataFrame({"A": [1.0, 2, 3]})
    _differential("DCRBaselineProtection", real, real.copy(), NUM, *args)


def test_multi_table_metadata_and_unknown_table_match_sdmetrics():
    real = pd.DataFrame({"A": [1.0, 2, 3]})
    multi = {"tables": {"t": NUM, "u": NUM}}
    for table in (None, "x", "u"):
        _same_baseline(*_differential("DCRBaselineProtection", real, real.copy(), multi, table))


def test_non_frame_inputs_raise_sdmetrics_type_error():
    real = pd.DataFrame({"A": [1.0, 2, 3]})
    ref, _ = _differential("DCRBaselineProtection", real, [[1.0], [2.0]], NUM, None)
    assert ref["error"][0] == "TypeError"
    ref, _ = _differential("DCROverfittingProtection", real, real, {"t": real}, NUM, None)
    assert ref["error"][0] == "TypeError"
    ref, _ = _differential("DCRBaselineProtection", real, real, None, None)
    assert ref["error"][0] == "TypeError"


# ------------------------------------------------------------------------------------------ (d) demo, positional
@pytest.fixture(scope="module")
def demo():
    from sdmetrics.demos import load_single_table_demo

    return load_single_table_demo()


def test_demo_dicts_positional_and_keyword(demo):
    real, syn, meta = demo
    _same_baseline(*_differential("DCRBaselineProtection", real, syn, meta, None))
    _same_baseline(*_differential("DCRBaselineProtection", real_data=real, synthetic_data=real,
                                  metadata=meta, table_name="student_placements"))


def test_demo_overfitting_with_shared_tables(demo):
    real, syn, meta = demo
    train = next(iter(real.values())).iloc[:150]
    hold = next(iter(real.values())).iloc[150:]
    # holdout = synthetic: every synthetic row is at distance 0 from the holdout (score 1);
    # training = synthetic: closer to training (score 0)
    _same_breakdown(*_differential("DCROverfittingProtection", train, syn, syn, meta, None))
    _same_breakdown(*_differential("DCROverfittingProtection", syn, syn, hold, meta, None))


# ------------------------------------------------------------------------------------------ (e) dropped columns
def test_unknown_sdtype_is_dropped_like_sdmetrics():
    """The column of unknown sdtype would put every synthetic row nearer the holdout; dropped, the
    rows are copies of training rows (closer to training, score 0)."""
    train = pd.DataFrame({"note": [-40.0, 90.0, 55.0], "A": [0.5, 6.0, 11.5]})
    syn = pd.DataFrame({"note": [3.0, 4.0, 5.0], "A": [11.5, 0.5, 6.0]})
    hold = pd.DataFrame({"note": [3.0, 4.0, 5.0], "A": [2.0, 8.5, 13.0]})
    meta = {"columns": {"note": {"sdtype": "unknown"}, "A": {"sdtype": "numerical"}}}
    ref, got = _differential("DCROverfittingProtection", train, syn, hold, meta, None)
    assert ref["result"]["score"] == 0.0
    _same_breakdown(ref, got)


# ------------------------------------------------------------------------------------------ DisclosureProtection
@pytest.fixture
def cap_tables():
    real = pd.DataFrame({"k": list("abcabcab"), "s": [1, 2, 1, 2, 1, 2, 2, 1], "x": [0.5, 1.5, 2.5, 3.5,
                                                                               4.5, 5.5, 6.5, 7.5],
                         "gone": [np.nan] * 8})
    syn = pd.DataFrame({"k": list("abcaacbb"), "s": [1, 2, 2, 2, 1, 1, 2, 1], "x": [0.4, 1.0, 7.5, 3.0,
                                                                               4.5, 5.5, 6.0, 7.0],
                        "gone": [np.nan] * 8})
    return real, syn


@pytest.mark.parametrize("name", ["DisclosureProtection", "DisclosureProtectionEstimate"])
@pytest.mark.parametrize("case", ["plain", "nan-key", "all-missing-sensitive", "continuous",
                                  "continuous-all-missing", "unknown-known", "unknown-sensitive",
                                  "no-known", "bad-method", "bad-bins", "column-sets-differ",
                                  "frame-type"])
def test_disclosure_protection_follows_sdmetrics(name, case, cap_tables):
    real, syn = cap_tables
    args: list[Any] = [real, syn, ["k"], ["s"]]
    kw: dict[str, Any] = {}
    if name == "DisclosureProtectionEstimate":  # all rows in one iteration: deterministic
        kw.update(num_rows_subsample=100, num_iterations=1, verbose=False)
    if case == "nan-key":
        real = real.assign(k=real["k"].mask(real.index % 3 == 0))
        args[:2] = [real, syn.assign(k=syn["k"].mask(syn.index % 4 == 0))]
    elif case == "all-missing-sensitive":
        args[3] = ["gone"]
    elif case == "continuous":
        args[2], kw["continuous_column_names"] = ["k", "x"], ["x"]
    elif case == "continuous-all-missing":
        args[3], kw["continuous_column_names"] = ["gone"], ["gone"]
    elif case == "unknown-known":
        args[2] = ["nope"]
    elif case == "unknown-sensitive":
        args[3] = ["nope"]
    elif case == "no-known":
        args[2] = []
    elif case == "bad-method":
        kw["computation_method"] = "best"
    elif case == "bad-bins":
        kw["num_discrete_bins"] = 0
    elif case == "column-sets-differ":
        args[1] = syn.drop(columns="gone")
    elif case == "frame-type":
        args[0] = real.to_dict("list")
    _same_breakdown(*_differential(name, *args, **kw))


def test_disclosure_protection_estimate_argument_errors(cap_tables):
    real, syn = cap_tables
    for kw in ({"num_rows_subsample": 0}, {"num_iterations": 0}, {"num_rows_subsample": 2.5}):
        _differential("DisclosureProtectionEstimate", real, syn, ["k"], ["s"], verbose=False, **kw)
