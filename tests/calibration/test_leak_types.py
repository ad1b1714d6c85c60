"""No false all-clear (issue #20): every leak type of at least 1 % of the training records reads
high (or inconclusive), never low; the nulls (fresh real people, a mode-seeking resample of them)
raise at most one alarm in 15; where original and control are large, safety is shown.

Releases come from :mod:`synthguard.calibration` with their ground truth (which training records
leaked); runs are cached in ``_suite`` so each (table, split, seed, release) is evaluated once.
Sizes: five tables x 3 seeds for the nulls and the main leak types, one seed for the other leak
sizes, acs12 at 800 / 800 / 400 for the equal-size checks; the full table is
``benchmarks/calibration.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from . import _suite as S

pytestmark = pytest.mark.slow

EQUAL_SEEDS = tuple(range(10))  # acs12 fresh at 800 / 800 / 400
SAFETY_SEEDS = tuple(range(5))  # nhefs fresh at 733 / 733 / 163: low in >= 4 of 5
LIMIT_SEEDS = tuple(range(5))  # 1.5 x the stated limit: high in >= 4 of 5


@pytest.fixture(scope="module", autouse=True)
def _shared(shared_data):
    S.SHARED = shared_data


def _alarms(runs: list[dict]) -> list[tuple]:
    return [(r["dataset"], r["seed"], r["level"]) for r in runs if r["level"] in S.ALARMS]


def _at_least(share: float, n: int) -> int:
    return math.ceil(share * n - 1e-9)


# ----------------------------------------------------------------------------------- the nulls
def test_mode_seeking_null_raises_at_most_one_alarm_in_15():
    """Fresh real rows resampled towards common quasi-identifier combinations: nobody from training,
    so an alarm is a false alarm, however unlike the population the release looks."""
    runs = [S.run(d, "standard", s, "mode_seeking") for d in S.DATASETS for s in S.SEEDS]
    assert all(r["leak_share"] == 0 for r in runs)
    assert len(_alarms(runs)) <= 1, _alarms(runs)


def test_safety_is_shown_where_the_data_can_show_it():
    """nhefs at 0.45 / 0.45 / 0.10 (733 training, 733 control, the most the table holds; copies by
    chance are rare there): the fresh release reads low in >= 80 % of runs, every risk low."""
    runs = [S.run("nhefs", "large", s, "fresh") for s in SAFETY_SEEDS]
    lows = [r["level"] == "low" for r in runs]
    assert sum(lows) >= _at_least(0.8, len(runs)), [r["level"] for r in runs]
    assert len(_alarms(runs)) <= 1, _alarms(runs)
    for r in runs:  # with 733 a side the run could see a leak of 1 % of every type it answers for
        for t, lim in r["verdict"]["detection_limits"].items():
            assert lim["value"] is not None and lim["value"] <= 0.01, (t, lim)


def test_safety_is_not_claimed_where_chance_copies_hide_a_one_percent_leak():
    """acs12 at 0.4 / 0.4 / 0.2 (800 / 800 / 400): 9 % of its rows repeat (children with most
    cells missing), so 1-2 % of fresh real people match a record unique among the 1,600 real ones
    exactly or in all cells but one. A leak of 1 % of the training records moves these rates by
    less than their sampling error at 800 a side, so a rule that read 'low' on most fresh samples
    would read 'low' on most 1 % leaks too (docs/risk-levels.md): the run says inconclusive, with
    detection limits above 1 %, and never raises more than the chance alarm."""
    runs = [S.run("acs12", "equal", s, "fresh") for s in EQUAL_SEEDS]
    assert len(_alarms(runs)) <= 1, _alarms(runs)
    for r in runs:
        assert r["level"] in ("low", "inconclusive", *S.ALARMS)
        limits = r["verdict"]["detection_limits"]
        if r["level"] == "inconclusive":  # the limit that explains why is stated
            presence = next(x for x in r["verdict"]["risks"] if x["risk"] == "presence")
            assert presence["unresolved"] and presence["settle"]
            assert any(limits[t]["value"] is None or limits[t]["value"] > 0.01
                       for t in presence["unresolved"])


# -------------------------------------------------------------------------- never a false low
# kind, share, of, seeds, extra builder parameters
LEAKS = {
    "exact-1%": ("exact", 0.01, (0,), ()),
    "exact-5%": ("exact", 0.05, S.SEEDS, ()),
    "near-5%-of-release": ("near", 0.05, S.SEEDS, (("of", "release"),)),
    "near-10%-of-release": ("near", 0.10, (0,), (("of", "release"),)),
    "near-30%-of-release": ("near", 0.30, (0,), (("of", "release"),)),
    "rare-5%": ("rare", 0.05, (0,), ()),
    "smote": ("smote", None, S.SEEDS[:2], ()),
    "mixture-n/5": ("mixture", None, S.SEEDS[:2], ()),
}


def _leak_runs(name: str) -> list[dict]:
    kind, share, seeds, extra = LEAKS[name]
    out = []
    for d in S.DATASETS:
        for s in seeds:
            sh = share
            if kind == "exact" and share == 0.01:  # at least 1 % on every table (422 rows: 5, not 4)
                n = len(S.parts(d, "standard", s)["original"])
                sh = math.ceil(0.01 * n) / n
            out.append(S.run(d, "standard", s, kind, sh, extra))
    return out


@pytest.mark.parametrize("leak", list(LEAKS))
def test_a_material_leak_never_reads_low(leak):
    runs = _leak_runs(leak)
    assert all(r["leak_share"] >= 0.01 for r in runs), [(r["dataset"], r["leak_share"]) for r in runs]
    lows = [(r["dataset"], r["seed"], round(r["leak_share"], 3)) for r in runs if r["level"] == "low"]
    assert not lows, lows


def test_person_copies_never_read_low():
    runs = [S.person_run(s, 0.05) for s in (0,)]
    assert all(r["leak_share"] >= 0.01 for r in runs)
    assert [r["level"] for r in runs if r["level"] == "low"] == []


def test_text_release_with_near_verbatim_training_documents_reads_high():
    """Test reviews plus 5 % of the training reviews, each with one word changed."""
    leaky = S.text_run(0, 0.05)
    assert leaky["leak_share"] == pytest.approx(0.05)
    assert leaky["level"] == "high", (leaky["level"], leaky["levels"])


def test_text_release_without_training_documents_raises_no_alarm():
    clean = S.text_run(0, None)
    assert clean["level"] not in S.ALARMS, (clean["level"], clean["levels"])


# ---------------------------------------------------------------------------------------- power
def test_five_percent_copies_read_high_every_time_at_800_per_side():
    """acs12 at 800 / 800 / 400 with 5 % of the training records (40) copied: high every time.
    5 seeds, not 15, to keep the suite within its time: the 5 % copies are at several times the
    stated limit here (~1.5 %), and the 15-run version on all five tables is
    test_calibration.py::test_five_percent_copies_always_read_high."""
    runs = [S.run("acs12", "equal", s, "exact", 0.05) for s in LIMIT_SEEDS]
    assert [r["level"] for r in runs] == ["high"] * len(runs)


def test_near_copies_read_high_where_a_near_copy_statistic_separates():
    """Near-copies (one cell changed) as 5 % of the release (3.7-4 % of the training records).

    Tables where a near-copy statistic can separate training from control records are those whose
    records have no other real record one cell away (label-free, read from the near_copies
    evidence: visibility >= 0.9): anes96, diabetes_raw, hhs_breaches, nhefs. There: high in >= 80 %
    of runs. On every table: high wherever the run's stated near-copy limit is below the leak,
    otherwise high or inconclusive with that limit stated, never low. (acs12, visibility 0.55 and a
    2 % chance rate, cannot separate them: docs/privacy-metrics.md.)"""
    runs = {(d, s): S.run(d, "standard", s, "near", 0.05, (("of", "release"),))
            for d in S.DATASETS for s in S.SEEDS}
    separable = []
    for (d, s), r in runs.items():
        limit = r["verdict"]["detection_limits"]["near"]["value"]
        if limit is not None and limit < r["leak_share"]:
            assert r["level"] == "high", (d, s, limit, r["leak_share"], r["level"])
        assert r["level"] in ("high", "inconclusive"), (d, s, r["level"])
        vis = S.near_visibility(r)
        if vis >= 0.9:
            separable.append((d, s, r["level"]))
    assert len(separable) >= 9, separable
    highs = sum(lv == "high" for *_, lv in separable)
    assert highs >= _at_least(0.8, len(separable)), separable


@pytest.mark.parametrize("leak", ["smote", "mixture-n/5"])
def test_neighbourhood_releases_read_high_in_80_percent_of_runs(leak):
    runs = _leak_runs(leak)
    highs = sum(r["level"] == "high" for r in runs)
    assert highs >= _at_least(0.8, len(runs)), [(r["dataset"], r["seed"], r["level"]) for r in runs]


# ------------------------------------------------------------- 1.5 x the stated detection limit
TABULAR_KIND = {"exact": "exact", "near": "near", "rare": "rare", "neighbourhood": "smote"}


@pytest.mark.parametrize("leak_type", list(TABULAR_KIND))
def test_a_leak_of_one_and_a_half_times_the_stated_limit_reads_high(leak_type):
    """acs12 at 800 / 800 / 400: the fresh run of each seed states a detection limit per leak type;
    a leak of that type of 1.5 x the limit reads high in >= 80 % of runs."""
    levels = []
    for s in LIMIT_SEEDS:
        stated = S.limit(S.run("acs12", "equal", s, "fresh"), leak_type)
        share = round(min(1.5 * stated, 1.0), 4)
        r = S.run("acs12", "equal", s, TABULAR_KIND[leak_type], share)
        assert r["leak_share"] >= 1.5 * stated - 1.0 / 800, (r["leak_share"], stated)
        levels.append((s, share, r["level"]))
    highs = sum(lv == "high" for *_, lv in levels)
    assert highs >= _at_least(0.8, len(levels)), levels


def test_person_leak_of_one_and_a_half_times_the_stated_limit_reads_high():
    levels = []
    for s in (0, 1, 2):
        stated = S.limit(S.person_run(s, None), "person")
        r = S.person_run(s, round(min(1.5 * stated, 1.0), 4))
        levels.append((s, r["leak_share"], r["level"]))
    assert sum(lv == "high" for *_, lv in levels) >= _at_least(0.8, len(levels)), levels


def test_text_leak_of_one_and_a_half_times_the_stated_limit_reads_high():
    levels = []
    for s in (0, 1):
        stated = S.limit(S.text_run(s, None), "text")
        r = S.text_run(s, round(min(1.5 * stated, 1.0), 4))
        levels.append((s, r["leak_share"], r["level"]))
    assert sum(lv == "high" for *_, lv in levels) >= _at_least(0.8, len(levels)), levels


def test_person_and_text_nulls_raise_no_alarm():
    runs = [S.person_run(s, None) for s in (0, 1, 2)] + [S.text_run(s, None) for s in (0, 1)]
    assert len(_alarms(runs)) <= 1, _alarms(runs)
    assert np.all([r["leak_share"] == 0 for r in runs])
