"""``synthguard.compat.sdmetrics`` against SDMetrics 0.32 on edge-case inputs, differentially.

The same call, on the same frames, goes to SDMetrics 0.32 (the test-only oracle) and to the facade
(:func:`.differential.sdmetrics_pair`): the same exception, the same user warnings and the same
numbers. The CAP family, DisclosureProtection, NewRowSynthesis and every synthetic-to-real DCR are
deterministic and compared to 1e-12 (datetime DCRs to the last bit). SDMetrics' random rows and
subsamples are unseeded and drawn differently on purpose (docs/compat.md S4, S7, S8), so a number
that depends on them is compared only on inputs where it is forced: every subsample gives the
same answer (all rows at the same distance, constant tables, subsamples as large as the
reference), or the random baseline's median is 0 in both (one real row) or positive in both.

Inputs are generated here (:func:`.oracle_inputs.edge_frame` and the small builders below) or taken
from the real tables of ``../shared/data`` and from SDMetrics' own demo table: one-row and one-column
tables, missing values, constant columns, ties, datetimes at whole seconds, categorical-only and
numeric-only tables.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from .differential import same_breakdown, same_dcr_baseline, same_number, sdmetrics_pair
from .oracle_inputs import WORDS, edge_frame, shared_rows

pytestmark = pytest.mark.oracle("sdmetrics")

NUM = {"columns": {"v": {"sdtype": "numerical"}}}


def _meta(frame: pd.DataFrame, datetime: tuple[str, ...] = ()) -> dict[str, Any]:
    """SDV metadata: numbers numerical, datetimes datetime, the rest categorical."""
    cols = {}
    for c in frame.columns:
        if c in datetime or pd.api.types.is_datetime64_any_dtype(frame[c]):
            cols[c] = {"sdtype": "datetime"}
        elif pd.api.types.is_numeric_dtype(frame[c]):
            cols[c] = {"sdtype": "numerical"}
        else:
            cols[c] = {"sdtype": "categorical"}
    return {"columns": cols}


def _spanning(train: pd.DataFrame, hold: pd.DataFrame) -> pd.DataFrame:
    """``hold`` with every numeric column clipped to the training range and reaching both ends of
    it: SDMetrics divides holdout distances by the holdout's own ranges (docs/compat.md S5), which
    are then the training ranges, as the facade's."""
    hold = hold.reset_index(drop=True).copy()
    for c in hold.columns:
        if pd.api.types.is_numeric_dtype(hold[c]) or pd.api.types.is_datetime64_any_dtype(hold[c]):
            lo, hi = train[c].min(), train[c].max()
            hold[c] = hold[c].clip(lo, hi)
            hold.loc[0, c], hold.loc[1, c] = lo, hi
    return hold


def _result(pair: tuple[dict[str, Any], dict[str, Any]]) -> tuple[Any, Any]:
    ref, got = pair
    assert "error" not in ref, ref.get("error")
    return ref["result"], got["result"]


# ------------------------------------------------------------------------------------------ CAP family
def _cap_tables(n: int = 60, seed: int = 4) -> dict[str, pd.DataFrame]:
    """Real rows and four releases from safest to most revealing: sensitive values never seen in
    the real data; independent draws; the real rows with the first sensitive column rotated on
    every fourth row; the real rows themselves."""
    rng = np.random.default_rng(seed)
    real = pd.DataFrame({"town": rng.choice(WORDS[:4], n), "band": rng.integers(0, 4, n),
                         "diag": rng.choice(["flu", "gout", "acne"], n), "score": rng.integers(0, 3, n)})
    unseen = pd.DataFrame({"town": rng.choice(WORDS[:4], n // 3), "band": rng.integers(0, 4, n // 3),
                           "diag": rng.choice(["mumps", "croup"], n // 3), "score": rng.integers(5, 8, n // 3)})
    independent = pd.DataFrame({c: rng.permutation(real[c].to_numpy())[: n // 3] for c in real.columns})
    rotated = real.copy()
    rows = np.arange(0, n, 4)
    rotated.loc[rows, "diag"] = rotated["diag"].to_numpy()[(rows + 1) % n]
    return {"real": real, "unseen": unseen, "independent": independent, "rotated": rotated, "copy": real.copy()}


CAP_CLASSES = ("CategoricalCAP", "CategoricalZeroCAP", "CategoricalGeneralizedCAP")
ORDER = ("copy", "rotated", "independent", "unseen")


@pytest.mark.parametrize("cls", CAP_CLASSES)
def test_cap_family_on_four_releases_equals_sdmetrics(cls):
    """Same score for each release; in both, a release that reveals more scores no higher."""
    t = _cap_tables()
    kw = dict(key_fields=["town", "band"], sensitive_fields=["diag", "score"])
    scores = {}
    for name in ORDER:
        ref, got = _result(sdmetrics_pair(cls, t["real"], t[name], method="compute", **kw))
        assert same_number(got, ref), (name, ref, got)
        scores[name] = ref
    assert 0.0 <= scores["copy"] <= scores["rotated"] <= scores["independent"] <= scores["unseen"] <= 1.0
    assert scores["copy"] < scores["unseen"]


@pytest.mark.parametrize("cls", CAP_CLASSES)
def test_cap_family_on_real_rows_equals_sdmetrics(shared_data, cls):
    """acs12: two samples of people, one as the release (categorical keys and secret)."""
    cols = ["race", "gender", "married", "edu", "employment"]
    real = shared_rows(shared_data, "acs12.csv", 300, seed=1, columns=cols).dropna()
    syn = shared_rows(shared_data, "acs12.csv", 200, seed=2, columns=cols).dropna()
    kw = dict(key_fields=["race", "gender", "married"], sensitive_fields=["edu"])
    ref, got = _result(sdmetrics_pair(cls, real, syn, method="compute", **kw))
    assert same_number(got, ref)


@pytest.mark.parametrize("cls", CAP_CLASSES)
@pytest.mark.parametrize("given", [{"sensitive_fields": ["diag"]}, {"key_fields": ["town"]}, {}],
                         ids=["no-keys", "no-sensitive", "neither"])
def test_cap_without_its_fields_raises_like_sdmetrics(cls, given):
    t = _cap_tables()
    ref, got = sdmetrics_pair(cls, t["real"], t["copy"], method="compute", **given)
    assert ref["error"][0] == got["error"][0] == "TypeError"


# ------------------------------------------------------------------------------------------ DisclosureProtection
def _dp_tables(n: int = 80, seed: int = 6) -> dict[str, pd.DataFrame]:
    """Known and sensitive columns, one of each continuous (binned); releases as in _cap_tables."""
    rng = np.random.default_rng(seed)
    real = pd.DataFrame({"town": rng.choice(WORDS[:5], n), "height": rng.uniform(150, 200, n),
                         "diag": rng.choice(["flu", "gout", "acne", "none"], n), "cost": rng.uniform(0, 900, n)})
    unseen = pd.DataFrame({"town": rng.choice(WORDS[:5], 30), "height": rng.uniform(150, 200, 30),
                           "diag": rng.choice(["mumps", "croup"], 30), "cost": rng.uniform(2000, 3000, 30)})
    independent = pd.DataFrame({c: rng.permutation(real[c].to_numpy())[:30] for c in real.columns})
    rotated = real.copy()
    rows = np.arange(0, n, 3)
    rotated.loc[rows, "diag"] = rotated["diag"].to_numpy()[(rows + 1) % n]
    return {"real": real, "unseen": unseen, "independent": independent, "rotated": rotated, "copy": real.copy()}


DP_KW = dict(known_column_names=["town", "height"], sensitive_column_names=["diag", "cost"],
             continuous_column_names=["height", "cost"], num_discrete_bins=8)


@pytest.mark.parametrize("method", ["cap", "zero_cap", "generalized_cap"])
@pytest.mark.parametrize("release", ORDER)
def test_disclosure_protection_with_binned_known_and_sensitive_equals_sdmetrics(method, release):
    t = _dp_tables()
    same_breakdown(*sdmetrics_pair("DisclosureProtection", t["real"], t[release], computation_method=method,
                                   **DP_KW))


@pytest.mark.parametrize("method", ["cap", "zero_cap", "generalized_cap"])
def test_disclosure_protection_estimate_on_unseen_secrets_is_forced(method):
    """Sensitive values the real data never holds: every subsample of 20 rows protects fully, so the
    sampled estimate equals SDMetrics' whatever the draws."""
    t = _dp_tables()
    ref, got = _result(sdmetrics_pair("DisclosureProtectionEstimate", t["real"], t["unseen"], computation_method=method,
                                      num_rows_subsample=20, num_iterations=3, verbose=False, **DP_KW))
    assert ref["cap_protection"] == got["cap_protection"] == 1.0
    same_breakdown({"result": ref}, {"result": got})


# ------------------------------------------------------------------------------------------ DCRBaselineProtection
def test_dcr_of_a_release_outside_the_real_range_is_forced():
    """Every synthetic value beyond the real maximum: each DCR is 1, the score 1 in both."""
    real = edge_frame(12, 1, numeric=1, categorical=0).rename(columns={"x0": "v"})
    syn = pd.DataFrame({"v": real["v"].max() + 50 + np.arange(9.0)})
    ref, got = _result(sdmetrics_pair("DCRBaselineProtection", real, syn, NUM, None))
    assert ref["score"] == got["score"] == 1.0
    assert ref["median_DCR_to_real_data"]["synthetic_data"] == got["median_DCR_to_real_data"]["synthetic_data"] == 1.0


@pytest.mark.parametrize("n_real", [1, 2, 7])
def test_dcr_of_a_single_synthetic_row_equals_sdmetrics(n_real):
    real = pd.DataFrame({"v": [4.0, 19.0, 11.5, 30.0, 2.5, 8.0, 16.0][:n_real]})
    syn = pd.DataFrame({"v": [10.0]})
    ref, got = sdmetrics_pair("DCRBaselineProtection", real, syn, NUM, None)
    same_dcr_baseline(ref, got)
    if n_real == 1:  # zero range: every random value equals the real one, so the score is NaN in both
        same_breakdown(ref, got)
        assert math.isnan(got["result"]["score"])


def test_dcr_with_a_constant_column_and_missing_values_equals_sdmetrics():
    """An all-equal numeric column (range 0: equal or not), missing numbers and categories."""
    real = edge_frame(30, 2, numeric=2, categorical=1, missing=0.2, constant=(3.5, "same"))
    syn = edge_frame(20, 3, numeric=2, categorical=1, missing=0.2, constant=(3.5, "same"))
    syn.loc[::4, "k0"] = 9.0
    syn.iloc[1:4, :3] = real.iloc[1:4, :3].to_numpy()
    meta = _meta(real)
    same_dcr_baseline(*sdmetrics_pair("DCRBaselineProtection", real, syn, meta, None))
    hold = _spanning(real, edge_frame(30, 4, numeric=2, categorical=1, missing=0.2, constant=(3.5, "same")))
    same_breakdown(*sdmetrics_pair("DCROverfittingProtection", real, syn, hold, meta, None))


@pytest.mark.parametrize("kind", ["numeric-only", "categorical-only", "single-column"])
def test_dcr_on_one_kind_of_column_equals_sdmetrics(kind):
    spec = {"numeric-only": dict(numeric=3, categorical=0), "categorical-only": dict(numeric=0, categorical=3),
            "single-column": dict(numeric=1, categorical=0)}[kind]
    real, syn, hold = (edge_frame(25, s, **spec) for s in (4, 5, 6))
    syn.iloc[:5] = real.iloc[:5].to_numpy()
    hold = _spanning(real, hold)
    meta = _meta(real)
    same_dcr_baseline(*sdmetrics_pair("DCRBaselineProtection", real, syn, meta, None))
    same_breakdown(*sdmetrics_pair("DCROverfittingProtection", real, syn, hold, meta, None))


def test_dcr_subsampled_where_every_row_is_equally_close_is_forced():
    """Every synthetic row is 1/16 of the range from its closest real row, so any subsample has
    median 1/16. The subsample equals the number of real rows, so SDMetrics' subsample of the
    reference (S4) is the whole reference too."""
    real = pd.DataFrame({"v": [0.0, 4.0, 8.0, 12.0, 16.0]})
    syn = pd.DataFrame({"v": [1.0, 5.0, 9.0, 13.0, 15.0, 3.0, 7.0, 11.0]})
    ref, got = _result(sdmetrics_pair("DCRBaselineProtection", real, syn, NUM, None, 5, 4))
    assert ref["median_DCR_to_real_data"]["synthetic_data"] == got["median_DCR_to_real_data"]["synthetic_data"] == 0.0625


def test_dcr_on_the_sdmetrics_demo_equals_sdmetrics():
    """SDMetrics' demo table (student placements): the release, and the real rows against themselves
    (synthetic median 0, score 0 in both; a release scores higher)."""
    from sdmetrics.demos import load_single_table_demo

    real, syn, meta = load_single_table_demo()
    rel_ref, rel_got = _result(sdmetrics_pair("DCRBaselineProtection", real, syn, meta, None))
    assert same_number(rel_got["median_DCR_to_real_data"]["synthetic_data"],
                       rel_ref["median_DCR_to_real_data"]["synthetic_data"])
    ref, got = _result(sdmetrics_pair("DCRBaselineProtection", real, real, meta, None))
    assert ref["median_DCR_to_real_data"]["synthetic_data"] == got["median_DCR_to_real_data"]["synthetic_data"] == 0.0
    assert ref["score"] == got["score"] == 0.0
    assert rel_got["score"] > got["score"] and rel_ref["score"] > ref["score"]


# ------------------------------------------------------------------------------------------ datetimes (parity)
def _datetime_tables() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Datetimes at whole seconds within one day, whole days, and text with a format."""
    real = edge_frame(9, 12, numeric=1, categorical=0, datetime=2)
    real["day"] = (pd.Timestamp("2023-03-01") + pd.to_timedelta(np.arange(9) * 3, unit="D")).strftime("%d/%m/%Y")
    syn = edge_frame(6, 13, numeric=1, categorical=0, datetime=2)
    syn["day"] = ["04/03/2023", "01/03/2023", "20/03/2023", "11/03/2023", "27/03/2023", "15/03/2023"]
    meta = _meta(real)
    meta["columns"]["day"] = {"sdtype": "datetime", "datetime_format": "%d/%m/%Y"}
    return real, syn, meta


def test_datetime_dcr_is_exactly_sdmetrics():
    """Parity (issue #33): seconds are compared as seconds, so the synthetic median is SDMetrics' to
    the last bit (days since 1970 gave 0.19999998742 where SDMetrics gives 0.2)."""
    real, syn, meta = _datetime_tables()
    ref, got = _result(sdmetrics_pair("DCRBaselineProtection", real, syn, meta, None))
    assert got["median_DCR_to_real_data"]["synthetic_data"] == ref["median_DCR_to_real_data"]["synthetic_data"]
    for c in ("t0", "t1"):  # one column at a time: a one-in-five-seconds difference
        one = {"columns": {c: {"sdtype": "datetime"}}}
        r = pd.DataFrame({c: pd.Timestamp("2025-02-03") + pd.to_timedelta([20, 25], unit="s")})
        s = pd.DataFrame({c: pd.Timestamp("2025-02-03") + pd.to_timedelta([24], unit="s")})
        ref1, got1 = _result(sdmetrics_pair("DCRBaselineProtection", r, s, one, None))
        assert ref1["median_DCR_to_real_data"]["synthetic_data"] == 0.2
        assert got1["median_DCR_to_real_data"]["synthetic_data"] == 0.2


def test_datetime_overfitting_is_exactly_sdmetrics():
    real, syn, meta = _datetime_tables()
    hold = _spanning(real, edge_frame(9, 14, numeric=1, categorical=0, datetime=2).assign(day=real["day"].iloc[::-1]))
    ref, got = _result(sdmetrics_pair("DCROverfittingProtection", real, syn, hold, meta, None))
    assert got == ref


def test_datetime_distances_equal_sdmetrics_calculate_dcr_bit_for_bit():
    """Every row's DCR, not just the median: datetimes at whole seconds and at milliseconds."""
    from sdmetrics.single_table.privacy.dcr_utils import calculate_dcr

    from synthguard.metrics.disclosure._dcr import dcr_block, dcr_columns, dcr_scale, nearest
    from synthguard.registry import Context

    real, syn, _ = _datetime_tables()
    real, syn = real.drop(columns="day"), syn.drop(columns="day")
    syn["t1"] = syn["t1"] + pd.to_timedelta([0, 125, 7, 999, 1, 500], unit="ms")
    meta = _meta(real)
    ctx = Context.from_frames(real, syn, metadata=meta)
    cols = dcr_columns(ctx)
    ours = nearest(ctx, dcr_block(ctx, "synthetic", cols), dcr_block(ctx, "original", cols),
                   dcr_scale(ctx, cols)).distances[:, 0]
    nums = ctx.tables.row_numbers.get("synthetic")  # the run's rows are in canonical order
    if nums is not None:
        back = np.empty_like(ours)
        back[np.asarray(nums)] = ours
        ours = back
    theirs = calculate_dcr(syn, real, meta).to_numpy()
    whole = (syn["t1"].dt.microsecond == 0).to_numpy()
    np.testing.assert_array_equal(ours[whole], theirs[whole])
    np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=0)


# ------------------------------------------------------------------------------------------ dropped columns (parity)
def test_every_column_dropped_but_one_float_column_scores_like_sdmetrics():
    """Parity (issue #33): the columns undeclared or of unknown sdtype are dropped; the one left is a
    float column of whole numbers, copied. SDMetrics draws its random values by dtype: reals for a
    float column, so the random median is positive and the score 0; the facade follows (it gave
    NaN, drawing whole numbers that all coincide with the two real values)."""
    real = pd.DataFrame({"kept": [3.0, 4.0], "note_a": [0.5, 0.25]})
    syn = pd.DataFrame({"kept": [4.0, 3.0], "note_b": [1.5, 9.0]})
    meta = {"columns": {"kept": {"sdtype": "numerical"}, "note": {"sdtype": "unknown"}}}
    ref, got = _result(sdmetrics_pair("DCRBaselineProtection", real, syn, meta, None))
    for r in (ref, got):
        assert r["score"] == 0.0
        assert r["median_DCR_to_real_data"]["synthetic_data"] == 0.0
        assert r["median_DCR_to_real_data"]["random_data_baseline"] > 0.0


def test_integer_column_random_rows_are_whole_numbers_like_sdmetrics():
    """The same values stored as integers: SDMetrics draws integers, which all hit one of the two
    real values, so the random median is 0 and the score NaN, in both."""
    real = pd.DataFrame({"kept": [3, 4]})
    syn = pd.DataFrame({"kept": [4, 3]})
    meta = {"columns": {"kept": {"sdtype": "numerical"}}}
    ref, got = _result(sdmetrics_pair("DCRBaselineProtection", real, syn, meta, None))
    same_breakdown({"result": ref}, {"result": got})
    assert math.isnan(got["score"])


# ------------------------------------------------------------------------------------------ DCROverfittingProtection
def _split(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    cut = int(len(frame) * 0.8)
    return frame.iloc[:cut].reset_index(drop=True), frame.iloc[cut:].reset_index(drop=True)


def test_overfitting_on_the_sdmetrics_demo_forced_cases_equal_sdmetrics():
    """Holdout = release: every synthetic row is at distance 0 from the holdout (a tie counts for
    the holdout): score 1. Training = release: score 0. All three the same: score 1. ``compute`` is
    the breakdown's score."""
    from sdmetrics.demos import load_single_table_demo

    real, syn, meta = load_single_table_demo()
    real, syn = next(iter(real.values())), next(iter(syn.values()))
    train, hold = _split(real)
    expect = {"holdout": (syn, syn, 1.0), "training": (syn, hold, 0.0), "all": (syn, syn, 1.0)}
    for name, (tr, ho, score) in expect.items():
        tr = train if name == "holdout" else tr
        ref, got = _result(sdmetrics_pair("DCROverfittingProtection", tr, syn, ho, meta, None))
        assert ref["score"] == got["score"] == score, name
        same_breakdown({"result": ref}, {"result": got})
    ref, got = sdmetrics_pair("DCROverfittingProtection", train, syn, hold, meta, None, method="compute")
    full = sdmetrics_pair("DCROverfittingProtection", train, syn, hold, meta, None)[1]["result"]
    assert got["result"] == full["score"]


def test_overfitting_on_constant_tables_is_forced_under_any_subsample():
    """Training and release hold one value, the holdout another: every synthetic row is closer to
    training whatever rows a subsample keeps (SDMetrics subsamples all three tables): score 0."""
    train = pd.DataFrame({"v": [5.0] * 8, "c": ["same"] * 8})
    syn = train.iloc[:6].copy()
    hold = pd.DataFrame({"v": [6.0] * 8, "c": ["other"] * 8})
    meta = _meta(train)
    for args in ((), (4, 3)):
        ref, got = _result(sdmetrics_pair("DCROverfittingProtection", train, syn, hold, meta, None, *args))
        assert ref == got == {"score": 0.0, "synthetic_data_percentages": {"closer_to_training": 1.0,
                                                                            "closer_to_holdout": 0.0}}


def test_overfitting_on_real_rows_equals_sdmetrics(shared_data):
    """anes96: training and holdout samples of people, the release a mix of training copies and
    other people; the holdout spans the training ranges (S5 cannot bite)."""
    cols = ["popul", "age", "educ", "income", "vote", "PID"]
    rows = shared_rows(shared_data, "anes96.csv", 240, seed=3, columns=cols)
    train, other = rows.iloc[:90].reset_index(drop=True), rows.iloc[180:]
    hold = _spanning(train, rows.iloc[90:180])
    syn = pd.concat([train.iloc[:25], other], ignore_index=True)
    meta = {"columns": {c: {"sdtype": "numerical" if c in ("popul", "age") else "categorical"} for c in cols}}
    same_breakdown(*sdmetrics_pair("DCROverfittingProtection", train, syn, hold, meta, None))


# ------------------------------------------------------------------------------------------ NewRowSynthesis
def _nrs_tables() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Real rows with missing numbers; a release of exact copies (a missing value matches a missing
    value) and rows far from every real row."""
    real = pd.DataFrame({"n": [3, 9, 14, 3, 27, 40], "w": ["ash", "oak", "yew", "elm", "oak", "ash"],
                         "f": [0.75, np.nan, 12.5, 3.25, np.nan, 6.0]})
    syn = pd.DataFrame({"n": [9, 14, 70, 27, 3, 88, 3], "w": ["oak", "yew", "ash", "oak", "ash", "fig", "elm"],
                        "f": [np.nan, 12.5, 0.75, np.nan, 0.75, 6.0, 99.0]})
    return real, syn, _meta(real)


def test_new_row_synthesis_with_missing_values_equals_sdmetrics():
    """Also with SDV's legacy ``fields`` metadata, which the facade reads (SDMetrics 0.32 refuses it)."""
    real, syn, meta = _nrs_tables()
    ref, got = _result(sdmetrics_pair("NewRowSynthesis", real, syn, meta))
    assert ref == got
    assert 0 < ref["num_matched_rows"] < len(syn)
    from synthguard.compat.sdmetrics.single_table import NewRowSynthesis

    legacy = {"fields": {"n": {"type": "numerical", "subtype": "integer"}, "w": {"type": "categorical"},
                         "f": {"type": "numerical", "subtype": "float"}}}
    assert NewRowSynthesis.compute_breakdown(real, syn, legacy) == ref


@pytest.mark.parametrize("rows", ["new", "copies"])
def test_new_row_synthesis_sampled_is_forced_when_every_row_agrees(rows):
    """A sample of 3 synthetic rows when all are new (score 1) or all copies (score 0)."""
    real, syn, meta = _nrs_tables()
    syn = syn.iloc[[2, 5, 6]] if rows == "new" else syn.iloc[[0, 1, 3, 4]]
    ref, got = _result(sdmetrics_pair("NewRowSynthesis", real, syn.reset_index(drop=True), meta,
                                      synthetic_sample_size=3))
    assert ref == got
    assert got["score"] == (1.0 if rows == "new" else 0.0)


def test_new_row_synthesis_sample_larger_than_the_release_warns_like_sdmetrics():
    real, syn, meta = _nrs_tables()
    ref, got = sdmetrics_pair("NewRowSynthesis", real, syn, meta, synthetic_sample_size=40)
    assert ref["warnings"]
    assert ref["result"] == got["result"]


@pytest.mark.parametrize("raw", [0.0, 0.125, 0.9, 1.0, -0.5, 1.5])
def test_new_row_synthesis_normalize_equals_sdmetrics(raw):
    ref, got = sdmetrics_pair("NewRowSynthesis", raw, method="normalize")
    assert ref.get("result") == got.get("result")
