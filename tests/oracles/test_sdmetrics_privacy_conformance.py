"""Conformance of the disclosure metrics with SDMetrics 0.32 (run here as the oracle).

Deterministic metrics agree to 1e-9; the random-baseline ones agree within the spread of repeated
SDMetrics runs; where SDMetrics has a defect (docs/disclosure.md) the tests show that both agree when
the defect cannot bite and differ in the predicted direction when it does.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sdmetrics.single_table", reason="oracle sdmetrics 0.32 not installed (it pins pandas<3, so it cannot sit next to the newest pandas); it runs in .venv-oldest, see scripts/test.sh")
from sdmetrics.single_table import (  # noqa: E402
    CategoricalCAP,
    CategoricalGeneralizedCAP,
    CategoricalZeroCAP,
    DCRBaselineProtection,
    DCROverfittingProtection,
    DisclosureProtection,
    DisclosureProtectionEstimate,
    NewRowSynthesis,
)
from sdmetrics.single_table.privacy.dcr_utils import calculate_dcr  # noqa: E402

from synthguard.metrics.disclosure._dcr import dcr_columns, nearest
from synthguard.metrics.disclosure.cap import cap, generalized_cap, zero_cap
from synthguard.metrics.disclosure.dcr_protection import (
    dcr_baseline_protection,
    dcr_overfitting_protection,
)
from synthguard.metrics.disclosure.disclosure_protection import (
    disclosure_protection,
    disclosure_protection_estimate,
)
from synthguard.metrics.disclosure.new_row_synthesis import new_row_synthesis
from synthguard.registry import Context

from ..helpers import run

pytestmark = [pytest.mark.conformance, pytest.mark.oracle("sdmetrics")]
TOL = 1e-9

META = {"columns": {"age": {"sdtype": "numerical"}, "income": {"sdtype": "numerical"},
                    "kids": {"sdtype": "numerical"}, "sex": {"sdtype": "categorical"},
                    "region": {"sdtype": "categorical"}, "edu": {"sdtype": "categorical"},
                    "smoker": {"sdtype": "boolean"}, "disease": {"sdtype": "categorical"},
                    "visit": {"sdtype": "datetime"}}}


def people(n: int, seed: int, shift: float = 0.0) -> pd.DataFrame:
    """Correlated mixed table without NaN; ``shift`` moves the synthetic distribution away."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    sex = rng.choice(["F", "M"], n)
    region = rng.choice(["north", "south", "east", "west", "centre"], n, p=[.3, .25, .2, .15, .1])
    edu = np.where(rng.random(n) < 0.5 + shift, np.where(age > 40, "school", "college"),
                   rng.choice(["school", "college", "phd"], n))
    disease = np.where(rng.random(n) < 0.6, np.where(sex == "F", "asthma", "diabetes"),
                       rng.choice(["none", "asthma", "diabetes", "flu"], n))
    return pd.DataFrame({
        "age": age, "income": (20000 + 900 * age + rng.normal(0, 8000, n)).round(0),
        "kids": rng.poisson(1.2, n), "sex": sex, "region": region, "edu": edu,
        "smoker": rng.random(n) < 0.25, "disease": disease,
        "visit": pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D"),
    })


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    real = people(240, 1)
    syn = people(210, 2, shift=0.2)
    syn = syn[~((syn["region"] == "centre") & (syn["sex"] == "M"))].reset_index(drop=True)  # missing keys
    hold = people(240, 3)
    return {"real": real, "syn": syn, "hold": hold}


@pytest.fixture(scope="module")
def ctx(frames) -> Context:
    return Context.from_frames(frames["real"], frames["syn"], frames["hold"], META, seed=0)


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


# ---------------------------------------------------------------- CAP family
@pytest.mark.parametrize("keys,sens", [
    (["sex", "region"], ["disease"]),
    (["sex", "region", "edu"], ["disease", "smoker"]),
    (["age", "sex"], ["edu"]),                      # numerical key matched on exact values
    (["region", "kids", "edu"], ["disease"]),
])
def test_cap_family_matches_sdmetrics(ctx, frames, keys, sens):
    real, syn = frames["real"], frames["syn"]
    for ours, ref in ((cap, CategoricalCAP), (zero_cap, CategoricalZeroCAP),
                      (generalized_cap, CategoricalGeneralizedCAP)):
        mine = ours(ctx, key_fields=keys, sensitive_fields=sens)
        theirs = _quiet(ref.compute, real, syn, key_fields=keys, sensitive_fields=sens)
        assert mine.value == pytest.approx(theirs, abs=TOL), ours.__name__
        assert mine["score"] == pytest.approx(theirs, abs=TOL)


def test_cap_variants_differ_when_keys_are_missing(ctx):
    keys, sens = ["sex", "region"], ["disease"]
    a, z, g = (f(ctx, key_fields=keys, sensitive_fields=sens) for f in (cap, zero_cap, generalized_cap))
    assert a["n_key_not_in_synthetic"] > 0
    assert z.value > a.value  # unmatched rows count as probability 0 -> more protection
    assert a.value != g.value


# ---------------------------------------------------------------- DisclosureProtection
@pytest.mark.parametrize("method", ["cap", "zero_cap", "generalized_cap"])
@pytest.mark.parametrize("known,sens,cont", [
    (["sex", "region"], ["disease"], None),
    (["age", "sex"], ["disease"], ["age"]),                   # binned known column
    (["sex", "edu"], ["income", "smoker"], ["income"]),       # binned sensitive column
    (["age", "region", "visit"], ["edu"], ["age", "visit"]),  # datetime binned as in SDMetrics
])
def test_disclosure_protection_matches_sdmetrics(ctx, frames, method, known, sens, cont):
    mine = run(disclosure_protection, ctx=ctx, known_column_names=known, sensitive_column_names=sens,
                                 computation_method=method, continuous_column_names=cont)
    theirs = _quiet(DisclosureProtection.compute_breakdown, frames["real"], frames["syn"],
                    known_column_names=known, sensitive_column_names=sens, computation_method=method,
                    continuous_column_names=cont)
    for key in ("score", "cap_protection", "baseline_protection"):
        assert mine[key] == pytest.approx(theirs[key], abs=TOL), key
    assert mine.value == pytest.approx(theirs["score"], abs=TOL)


def test_estimate_with_full_subsample_equals_sdmetrics(ctx, frames):
    """num_rows_subsample >= n: every iteration sees all rows, so the estimate is deterministic."""
    kw = dict(known_column_names=["sex", "region"], sensitive_column_names=["disease"])
    mine = run(disclosure_protection_estimate, ctx=ctx, num_rows_subsample=1000, num_iterations=2, **kw)
    theirs = _quiet(DisclosureProtectionEstimate.compute_breakdown, frames["real"], frames["syn"],
                    num_rows_subsample=1000, num_iterations=2, verbose=False, **kw)
    for key in ("score", "cap_protection", "baseline_protection"):
        assert mine[key] == pytest.approx(theirs[key], abs=TOL)


def test_estimate_subsampled_within_sdmetrics_spread(frames):
    kw = dict(known_column_names=["sex", "region", "edu"], sensitive_column_names=["disease"])
    np.random.seed(0)  # noqa: NPY002  (SDMetrics samples with the global RNG)
    ref = [_quiet(DisclosureProtectionEstimate.compute_breakdown, frames["real"], frames["syn"],
                  num_rows_subsample=60, num_iterations=3, verbose=False, **kw)["cap_protection"]
           for _ in range(5)]
    ours = [run(disclosure_protection_estimate, ctx=
        Context.from_frames(frames["real"], frames["syn"], metadata=META, seed=s),
        num_rows_subsample=60, num_iterations=3, **kw)["cap_protection"] for s in range(5)]
    full = run(disclosure_protection, ctx=Context.from_frames(frames["real"], frames["syn"], metadata=META),
                                 **kw)["cap_protection"]
    spread = np.std(ref, ddof=1) + np.std(ours, ddof=1)
    assert abs(np.mean(ours) - np.mean(ref)) <= 3 * spread / np.sqrt(5) * np.sqrt(2) + 1e-3
    assert abs(np.mean(ours) - full) < 0.1  # both estimate the same quantity


def test_estimate_honours_parameters_unlike_sdmetrics_compute(ctx, frames, monkeypatch):
    """SDMetrics defect: DisclosureProtectionEstimate.compute() ignores num_iterations."""
    calls = []
    original = CategoricalCAP._compute.__func__

    def counting(cls, *a, **k):
        calls.append(1)
        return original(cls, *a, **k)

    monkeypatch.setattr(CategoricalCAP, "_compute", classmethod(counting))
    small_real, small_syn = frames["real"].iloc[:40], frames["syn"].iloc[:40]
    kw = dict(known_column_names=["sex"], sensitive_column_names=["disease"])
    _quiet(DisclosureProtectionEstimate.compute, small_real, small_syn, num_iterations=2, verbose=False, **kw)
    assert len(calls) == 10  # the defect: always 10 iterations
    calls.clear()
    _quiet(DisclosureProtectionEstimate.compute_breakdown, small_real, small_syn, num_iterations=2,
           verbose=False, **kw)
    assert len(calls) == 2
    mine = run(disclosure_protection_estimate, ctx=ctx, num_iterations=2, **kw)
    assert mine["num_iterations"] == 2 and len(mine["cap_protection_per_iteration"]) == 2


# ---------------------------------------------------------------- DCR
def _dcr_ours(ctx: Context, query_role: str, ref_role: str) -> np.ndarray:
    cols = dcr_columns(ctx)
    scale = ctx.encoded.ranges(cols, (ref_role,))
    d = nearest(ctx, ctx.encoded.block(query_role, cols), ctx.encoded.block(ref_role, cols),
                scale).distances[:, 0]
    nums = (ctx.tables.row_numbers or {}).get(query_role)  # the run's rows: canonical order
    if nums is None:
        return d
    back = np.empty_like(d)
    back[np.asarray(nums, dtype=np.int64)] = d
    return back


def test_dcr_distances_match_calculate_dcr(ctx, frames):
    ours = _dcr_ours(ctx, "synthetic", "original")
    theirs = _quiet(calculate_dcr, frames["syn"], frames["real"], META).to_numpy()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOL)


def test_dcr_rules_constant_column_and_missing_values():
    """range == 0 -> 0/1; one side missing -> 1; both missing -> 0 (SDMetrics' per-column rules)."""
    real = people(120, 7)
    syn = people(90, 8)
    real["kids"] = 2.0
    syn.loc[::3, "kids"] = 2.0
    real.loc[::5, "income"] = np.nan
    syn.loc[::4, "income"] = np.nan
    real.loc[::6, "region"] = np.nan
    syn.loc[::7, "region"] = np.nan
    c = Context.from_frames(real, syn, metadata=META)
    ours = _dcr_ours(c, "synthetic", "original")
    theirs = _quiet(calculate_dcr, syn, real, META).to_numpy()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOL)


def test_dcr_baseline_protection_matches_sdmetrics(frames):
    real, syn = frames["real"], frames["syn"]
    ref_rand, ref_score = [], []
    for s in range(5):
        DCRBaselineProtection._seed = s
        out = _quiet(DCRBaselineProtection.compute_breakdown, real, syn, META, None)
        med = out["median_DCR_to_real_data"]
        ref_syn = med["synthetic_data"]
        ref_rand.append(med["random_data_baseline"])
        ref_score.append(out["score"])
    DCRBaselineProtection._seed = None
    ours = [run(dcr_baseline_protection, ctx=Context.from_frames(real, syn, metadata=META, seed=s)) for s in range(5)]
    # the synthetic -> real median is deterministic: exact
    for r in ours:
        assert r["median_DCR_to_real_data"]["synthetic_data"] == pytest.approx(ref_syn, abs=TOL)
    # the random baseline: same distribution (within the spread of repeated SDMetrics runs)
    our_rand = [r["median_DCR_to_real_data"]["random_data_baseline"] for r in ours]
    sd = np.std(ref_rand, ddof=1) + np.std(our_rand, ddof=1)
    assert abs(np.mean(our_rand) - np.mean(ref_rand)) <= 3 * sd
    assert abs(np.mean([r.value for r in ours]) - np.mean(ref_score)) <= 3 * (
        np.std(ref_score, ddof=1) + np.std([r.value for r in ours], ddof=1))
    # seeded: same seed, same numbers
    again = run(dcr_baseline_protection, ctx=Context.from_frames(real, syn, metadata=META, seed=0))
    assert again.value == ours[0].value


def _holdout_with_training_ranges(real: pd.DataFrame, hold: pd.DataFrame) -> pd.DataFrame:
    """A holdout whose numeric/datetime ranges equal the training ranges (the defect cannot bite)."""
    h = hold.copy()
    for c in ("age", "income", "kids", "visit"):
        h[c] = h[c].clip(real[c].min(), real[c].max())
        h.loc[0, c] = real[c].min()
        h.loc[1, c] = real[c].max()
    return h


def test_dcr_overfitting_equal_ranges_matches_sdmetrics(frames):
    real, syn = frames["real"], frames["syn"]
    hold = _holdout_with_training_ranges(real, frames["hold"])
    c = Context.from_frames(real, syn, hold, META)
    mine = run(dcr_overfitting_protection, ctx=c)
    theirs = _quiet(DCROverfittingProtection.compute_breakdown, real, syn, hold, META, None)
    assert mine.value == pytest.approx(theirs["score"], abs=TOL)
    for k in ("closer_to_training", "closer_to_holdout"):
        assert mine["synthetic_data_percentages"][k] == pytest.approx(
            theirs["synthetic_data_percentages"][k], abs=TOL)


def test_dcr_overfitting_different_ranges_differ_as_predicted():
    """SDMetrics normalises holdout distances by the holdout's ranges. A holdout with a far wider
    income range shrinks SDMetrics' holdout distances, so fewer synthetic rows look 'closer to
    training' than under one common scale; sdmetrics_compat=True reproduces SDMetrics exactly."""
    real = people(200, 11)
    syn = pd.concat([real.iloc[:60], people(140, 12)], ignore_index=True)  # memorised rows
    hold = people(200, 13)
    hold.loc[0, "income"] = 10 * real["income"].max()  # one extreme holdout value
    c = Context.from_frames(real, syn, hold, META)
    theirs = _quiet(DCROverfittingProtection.compute_breakdown, real, syn, hold, META, None)
    compat = run(dcr_overfitting_protection, ctx=c, sdmetrics_compat=True)
    default = run(dcr_overfitting_protection, ctx=c)
    p_theirs = theirs["synthetic_data_percentages"]["closer_to_training"]
    assert compat["synthetic_data_percentages"]["closer_to_training"] == pytest.approx(p_theirs, abs=TOL)
    assert compat.value == pytest.approx(theirs["score"], abs=TOL)
    assert default["synthetic_data_percentages"]["closer_to_training"] > p_theirs + 0.02
    assert default.value < theirs["score"]
    # the holdout distances of the compat run are SDMetrics' own
    np.testing.assert_allclose(_dcr_ours(c, "synthetic", "control"),
                               _quiet(calculate_dcr, syn, hold, META).to_numpy(), atol=TOL)


# ---------------------------------------------------------------- NewRowSynthesis
def _near_copies(real: pd.DataFrame, n_fresh: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    copies = real.sample(30, random_state=seed)
    tiny = real.sample(30, random_state=seed + 1).copy()
    tiny["income"] = tiny["income"] * (1 + rng.uniform(-1e-4, 1e-4, len(tiny)))  # within both rules
    far = real.sample(30, random_state=seed + 2).copy()
    far["income"] = far["income"] * 1.5 + 50000                                 # outside both rules
    return pd.concat([copies, tiny, far, people(n_fresh, seed + 3)], ignore_index=True)


def test_new_row_synthesis_compat_matches_sdmetrics(frames):
    real = frames["real"]
    rng = np.random.default_rng(5)
    syn = _near_copies(real, 40, 20)
    border = real.sample(30, random_state=9).copy()  # straddle SDMetrics' 1 % relative tolerance
    border["income"] = border["income"] * (1 + rng.uniform(-0.02, 0.02, len(border)))
    border["age"] = border["age"] + rng.integers(-1, 2, len(border))
    syn = pd.concat([syn, border], ignore_index=True)
    c = Context.from_frames(real, syn, metadata=META)
    mine = run(new_row_synthesis, ctx=c, sdmetrics_compat=True)
    theirs = _quiet(NewRowSynthesis.compute_breakdown, real, syn, META)
    assert mine["num_matched_rows"] == theirs["num_matched_rows"]
    assert mine["num_new_rows"] == theirs["num_new_rows"]
    assert mine.value == pytest.approx(theirs["score"], abs=TOL)
    assert 60 < theirs["num_matched_rows"] < 90  # the border rows split both ways


def test_new_row_synthesis_default_agrees_when_tolerance_rule_cannot_bite(frames):
    real = frames["real"]
    syn = _near_copies(real, 40, 30)
    c = Context.from_frames(real, syn, metadata=META)
    mine = run(new_row_synthesis, ctx=c)
    theirs = _quiet(NewRowSynthesis.compute_breakdown, real, syn, META)
    assert mine["num_matched_rows"] == theirs["num_matched_rows"] >= 60
    assert mine.value == pytest.approx(theirs["score"], abs=TOL)


def test_new_row_synthesis_tolerance_defect_probes():
    """SDMetrics' tolerance is 1 % of the synthetic value: exact at 0 and ~6 months for 2020 dates.
    Ours is 1 % of the original column's range."""
    real = pd.DataFrame({"x": [0.0, 50.0, 100.0, 30.0], "c": ["a", "a", "b", "b"],
                         "t": pd.to_datetime(["2020-01-01", "2020-03-01", "2020-05-01", "2020-07-01"])})
    syn = pd.DataFrame({"x": [0.5, 50.0, 100.0, 30.0], "c": ["a", "a", "b", "b"],
                        "t": pd.to_datetime(["2020-01-01", "2020-06-10", "2020-05-01", "2020-07-01"])})
    meta = {"columns": {"x": {"sdtype": "numerical"}, "c": {"sdtype": "categorical"},
                        "t": {"sdtype": "datetime"}}}
    theirs = _quiet(NewRowSynthesis.compute_breakdown, real, syn, meta)
    c = Context.from_frames(real, syn, metadata=meta)
    mine = run(new_row_synthesis, ctx=c)
    compat = run(new_row_synthesis, ctx=c, sdmetrics_compat=True)
    # row 0: x 0.5 vs 0 -> within 1 % of the range (100), but not within 1 % of 0.5 -> SDMetrics: new
    # row 1: 2020-06-10 vs 2020-03-01 -> 101 days; SDMetrics: within 1 % of the epoch ns -> matched
    assert theirs["num_matched_rows"] == 3  # rows 1, 2, 3
    assert compat["num_matched_rows"] == 3
    assert mine["num_matched_rows"] == 3  # rows 0, 2, 3
    # records name input rows, listed in the run's canonical row order
    assert sorted(r["synthetic_row"] for r in mine.records) == [0, 2, 3]
    assert sorted(r["synthetic_row"] for r in compat.records) == [1, 2, 3]
