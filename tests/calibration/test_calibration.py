"""The calibration suite, small and real: fresh samples of real people raise no more alarms than
chance and read low where the data can show it; copies read high on every criterion.

Public person-level tables from ``../shared/data`` are split with a seed into original (training),
control and fresh (held out). A release made of the fresh part exposes nobody from training: any
alarm on it is a false alarm. Runs use the tests that state their responses to the leak families
(``_suite.FAMILY_TESTS``: every risk, every family and its limits, a fifth of the privacy preset's
cost); the full table (the whole privacy preset, 6 seeds, every family at several sizes) is
``benchmarks/calibration.py``, its figures in ``docs/calibration.md``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from synthguard.calibration import calibration_split, leaky_release, mixed_release
from synthguard.data.loading import CSV_FLOAT_KW

from . import _suite as S

pytestmark = pytest.mark.slow

DATASETS, SEEDS, ALARMS = S.DATASETS, S.SEEDS, S.ALARMS
SMALL = ("anes96", "diabetes_raw", "hhs_breaches")  # 177 to 422 training records: a second a run


def _at_least(share: float, n: int) -> int:
    return math.ceil(share * n - 1e-9)


def _alarms(runs: list[dict]) -> list[tuple]:
    return [(r["dataset"], r["seed"], r["level"]) for r in runs if r["level"] in ALARMS]


@pytest.fixture(scope="module")
def fresh():
    """The three small tables x 5 seeds (the limit tests reuse seeds 0-2 of anes96 and
    diabetes_raw; acs12 and nhefs fresh runs are the 800-record tests')."""
    return [S.run(d, "standard", s, "fresh", metrics="families") for d in SMALL for s in range(5)]


# ----------------------------------------------------------------------------------- the nulls
def test_fresh_real_samples_raise_at_most_one_alarm_in_15(fresh):
    """3 tables x 5 seeds; the benchmark runs 5 tables x 6 seeds."""
    assert len(fresh) == 15
    assert len(_alarms(fresh)) <= 1, _alarms(fresh)
    for m in {m for r in fresh for m in r["levels"]}:
        fired = [(r["dataset"], r["seed"]) for r in fresh if r["levels"].get(m) in ALARMS]
        assert len(fired) <= 1, (m, fired)
    assert all(r["leak_share"] == 0 for r in fresh)


def test_mode_seeking_null_raises_at_most_one_alarm_in_15():
    """Fresh real rows resampled towards common quasi-identifier combinations: nobody from training,
    so an alarm is a false alarm, however unlike the population the release looks. 3 seeds on the
    three small tables, 1 on acs12 and nhefs (11 runs; the benchmark: 5 tables x 6 seeds)."""
    runs = [S.run(d, "standard", s, "mode_seeking", metrics="families")
            for d in DATASETS for s in (SEEDS if d in SMALL else SEEDS[:1])]
    assert len(runs) == 11 and all(r["leak_share"] == 0 for r in runs)
    assert len(_alarms(runs)) <= 1, _alarms(runs)


# ---------------------------------------------------------------------------- copies read high
@pytest.mark.parametrize("dataset", DATASETS)
def test_thirty_percent_verbatim_and_thirty_percent_one_cell_copies_read_high_on_all_four_criteria(
        dataset):
    """A release of 30 % verbatim training rows, 30 % one-cell copies and 40 % fresh rows: a
    verbatim copy links and singles out its person and carries their sensitive values (WP216), so
    presence, singling out, linkability and inference all read high, driven by the copy tests."""
    p = S.parts(dataset, "standard", 0)
    leak = mixed_release(p, {"exact": 0.3, "near1": 0.3}, 0, metadata=S.META[dataset])
    rep = S.evaluate(f"{dataset}/standard/s0/exact30+near30", p["original"], leak.release,
                     p["control"], metadata=S.META[dataset], metrics=list(S.FAMILY_TESTS), seed=0)
    levels = {r["risk"]: r["level"] for r in rep.verdict.to_dict()["risks"]}
    assert levels == dict.fromkeys(("presence", "singling_out", "linkability", "inference"),
                                   "high"), levels
    drivers = {d["metric"] for d in rep.verdict.to_dict()["drivers"]}
    assert {"exact_matches", "near_copies"} <= drivers, drivers


def test_five_percent_copies_read_high_on_the_small_tables():
    """5 % of the training records copied (seed 0 on the three small tables, where 5 % is 9 to 21
    records; the 30 % + 30 % test covers every table, the benchmark every table x 6 seeds)."""
    runs = [S.run(d, "standard", 0, "exact", 0.05, metrics="families") for d in SMALL]
    assert [r["level"] for r in runs] == ["high"] * len(runs), [(r["dataset"], r["level"]) for r in runs]
    for r in runs:  # the verdict names what drives it, with its evidence
        d = r["verdict"]["drivers"][0]
        assert d["member"] > d["non_member"] and d["p_adjusted"] < 0.05


# ------------------------------------------------------------------------- low where it can be
LARGE = (("acs12", "equal"), ("nhefs", "n800"))  # 800 training and 800 control records


#: Why acs12 cannot be shown safe at 5 % (measured 2026-12-05 on seeds 0-2 with the family tests,
#: docs/calibration.md "Three more statistics"; strict: the day it reads low the mark goes).
ACS12_AT_5 = ("acs12 800/800/400 reads inconclusive at 5 % (presence bound 7.75 % on seeds 0 and 1, "
              "8.6 % on seed 2; the other three risks 5.0-5.25 %, held by near2): no test sees "
              "enough of the neighbour families to rule a 5 % leak out. noise10 7.75-8.1 % and "
              "interpolation 7.25-8.6 % (close_neighbours sees 59-62 % of them against 100 chance "
              "records in its tail), near2 5.0-5.25 % (near_copies_2 sees 55 %). Tried and "
              "measured, none lowers the bound: setting fresh people equal to unique real records "
              "aside (noise10 6.0-7.4 %, interpolation 7.4-9.0 %), the ratio over the 2nd-5th "
              "nearest real record, a between-two-neighbours score for interpolation")


@pytest.mark.parametrize("name, split", LARGE)
def test_fresh_samples_with_800_training_records_read_low_at_five_percent(name, split, request):
    """acs12 (800 / 800 / 400) and nhefs (800 / 800 / 29), seeds 0 and 1 (the benchmark: 6 seeds):
    a tool that never says low is no cure. Low in >= 80 % of runs at materiality 5 %."""
    if name == "acs12":
        request.applymarker(pytest.mark.xfail(strict=True, reason=ACS12_AT_5, raises=AssertionError))
    runs = [S.run(name, split, seed, "fresh", metrics="families", materiality=0.05)
            for seed in (0, 1)]
    assert all(r["n_original"] >= 800 for r in runs)
    levels = [(r["seed"], r["level"],
               {x["risk"]: (x["level"], x["bound"], x["unassessed"]) for x in r["verdict"]["risks"]})
              for r in runs]
    assert sum(r["level"] == "low" for r in runs) >= _at_least(0.8, len(runs)), (name, levels)


def test_where_one_percent_cannot_be_ruled_out_the_run_says_what_holds_the_bound_up():
    """acs12 at 800 / 800 (9 % of its rows repeat: chance copies hide a 1 % leak): at materiality
    1 % the fresh release reads inconclusive, never low, with the bound reached above 1 %, what
    holds it up and what would settle it."""
    r = S.run("acs12", "equal", 0, "fresh", metrics="families")
    assert r["level"] not in ALARMS
    for risk in r["verdict"]["risks"]:
        assert risk["level"] == "inconclusive", (risk["risk"], risk["level"], risk["bound"])
        assert risk["unresolved"] and risk["settle"]
        assert risk["bound"] is None or risk["bound"] >= 0.01


# ------------------------------------------------------------------------------------- shapes
def test_calibration_split_and_leak_shapes(shared_data: Path):
    table = pd.read_csv(shared_data / "anes96.csv", **CSV_FLOAT_KW)
    parts = calibration_split(table, 3)
    assert sum(len(p) for p in parts.values()) == len(table)
    assert len(table) == len(pd.read_csv(shared_data / "anes96.csv", **CSV_FLOAT_KW))  # the input is not touched
    rel = leaky_release(parts["fresh"], parts["original"], 0.1, 3)
    assert len(rel) == len(parts["fresh"])
    k = round(0.1 * len(parts["original"]))
    merged = rel.merge(parts["original"].drop_duplicates(), how="inner")
    assert len(merged) >= k
    pert = leaky_release(parts["fresh"], parts["original"], 0.1, 3, perturb=True)
    assert len(pert.merge(parts["original"].drop_duplicates(), how="inner")) < k
