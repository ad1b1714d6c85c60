"""What the fidelity scores say beside their ceiling, on real tables: a fresh real sample is not
called closer to the training rows than fresh data is, a verbatim copy is; the summary card shows
a family's lowest score, not whichever ran first; a pair the release cannot score is said; the
triples' heading says whether they were sampled."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthguard
from synthguard.core.format import pct
from synthguard.core.results import ABOVE_CEILING_GAP, beyond_ceiling


def _thirds(shared_data, table: str, seed: int) -> tuple[pd.DataFrame, ...]:
    df = pd.read_csv(shared_data / f"{table}.csv")
    n = min(len(df) // 3, 600)
    idx = np.random.default_rng(100 + seed).permutation(len(df))
    return tuple(df.iloc[idx[i * n:(i + 1) * n]].reset_index(drop=True) for i in range(3))


#: splits where the old margins (0.01 above the ceiling; a card at 100.5 %) called a fresh
#: sample closer to the training rows than fresh data is (the first three in the warning and the
#: card, the last in the card only; found by a review in session 46)
FRESH_ALARMED = [("anes96", 7), ("acs12", 14), ("diabetes_raw", 4), ("acs12", 2)]


@pytest.mark.parametrize("table,seed", FRESH_ALARMED)
def test_a_fresh_real_sample_is_not_called_closer_to_the_training_rows(shared_data, table, seed):
    o, c, fresh = _thirds(shared_data, table, seed)
    rep = synthguard.evaluate(o, fresh, control=c, metrics=["accuracy", "quality_report"], seed=0)
    for name in ("accuracy", "quality_report"):
        head = rep.result(name).headline
        assert not head.above_ceiling, (name, head.value, head.ceiling)
    assert "closer to the training rows" not in (rep.result("accuracy").warning or "")
    assert "closer to the training rows" not in rep.to_html()


def test_a_verbatim_copy_is_called_closer_to_the_training_rows(shared_data):
    o, c, _ = _thirds(shared_data, "anes96", 0)
    rep = synthguard.evaluate(o, o.copy(), control=c, metrics=["accuracy"], seed=0)
    assert "closer to the training rows than fresh data is" in rep.result("accuracy").warning
    assert rep.result("accuracy").headline.above_ceiling
    assert "closer to the training rows than fresh real data is" in rep.to_html()


def test_the_rule_is_half_the_way_from_the_ceiling_to_a_copy():
    assert ABOVE_CEILING_GAP == 0.5
    assert not beyond_ceiling(0.85, 0.8) and not beyond_ceiling(0.9, 0.8)
    assert beyond_ceiling(0.91, 0.8) and not beyond_ceiling(1.0, 1.0)


def test_the_fidelity_card_shows_the_lowest_score_and_names_the_others(shared_data):
    """A release with one column made constant and one scaled: the card reads the family's lowest
    share of its ceiling (before: whichever fidelity metric came first)."""
    o, c, fresh = _thirds(shared_data, "acs12", 0)
    broken = fresh.copy()
    broken["gender"] = broken["gender"].iloc[0]
    broken["income"] = broken["income"] * 10
    rep = synthguard.evaluate(o, broken, control=c, metrics=["quality_report", "accuracy"], seed=0)
    shares = {n: rep.result(n).headline.share for n in ("quality_report", "accuracy")}
    low = min(shares, key=shares.get)
    other = max(shares, key=shares.get)
    assert shares[low] < shares[other]
    cards = rep.to_html().split('<div class="cards">', 1)[1].split('<section id="decision"', 1)[0]
    assert f">{pct(shares[low])}<" in cards
    assert f"the lowest of 2 scores: {other} {pct(shares[other])}" in cards


def test_a_column_the_release_holds_constant_is_named_with_the_pairs_it_loses(shared_data):
    df = pd.read_csv(shared_data / "diabetes_raw.csv")
    o, c, fresh = (df.iloc[i * 147:(i + 1) * 147].reset_index(drop=True) for i in range(3))
    flat = fresh.assign(s1=fresh["s1"].iloc[0])
    warning = synthguard.evaluate(o, flat, control=c, metrics=["quality_report"],
                                  seed=0).result("quality_report").warning or ""
    assert "'s1' (" in warning and "left out of Column Pair Trends" in warning
    clean = synthguard.evaluate(o, fresh, control=c, metrics=["quality_report"],
                                seed=0).result("quality_report").warning or ""
    assert "left out of Column Pair Trends" not in clean


def test_the_triples_heading_says_every_triple_when_none_was_sampled(shared_data):
    o, c, fresh = _thirds(shared_data, "diabetes_raw", 0)  # 11 columns: 165 triples, all scored
    sections = synthguard.evaluate(o, fresh, control=c, metrics=["accuracy"],
                                   seed=0).result("accuracy").sections
    titles = [s.title for s in sections if s.title.startswith("Triples")]
    assert titles and titles[0].startswith("Triples (every one of the 165")
    assert not any(s.title.startswith("Sampled") for s in sections)


def test_the_console_names_the_columns_furthest_below_their_ceiling(shared_data):
    """A constant column is the furthest below its ceiling, and the console says so beside the
    headline (before, only diagnostic_report's worst check named a column)."""
    o, c, fresh = _thirds(shared_data, "acs12", 0)
    broken = fresh.assign(gender=fresh["gender"].iloc[0])
    rep = synthguard.evaluate(o, broken, control=c, metrics=["accuracy"], seed=0)
    text = " ".join(rep.to_console(10_000).split())
    assert "furthest below their ceiling: gender " in text
