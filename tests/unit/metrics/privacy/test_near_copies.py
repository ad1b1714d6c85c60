"""near_copies and close_neighbours: hand-computed flags, label-free visibility, leaks seen, fresh
releases quiet, order invariance, bounded hash joins."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.calibration import calibration_split, leaky_release
from synthguard.errors import ConfigError, MetricError
from synthguard.metrics.privacy._copies import identifiable_share, identifying_matches
from synthguard.metrics.privacy.near_copies import close_neighbours, materiality_tail, near_copies
from synthguard.run.config import PRESETS

from ....helpers import context
from ....helpers import run as run_metric


def run(func, o, s, c, meta=None, **params):
    return run_metric(func, o, s, c, meta, **params)  # through the executor


def shared(name):
    root = Path(os.environ.get("SYNTHGUARD_SHARED_DATA",
                               Path(__file__).resolve().parents[5] / "shared" / "data"))
    if not (root / name).exists():
        pytest.skip("shared data not found")
    return pd.read_csv(root / name)


def test_identifying_matches_and_their_visibility_hand_computed_for_one_and_two_cells():
    real = np.array([[0, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 2], [5, 5, 5, 5]])
    rel = np.array([[0, 9, 0, 0], [5, 9, 9, 5], [1, 1, 1, 9]])
    # release row 0 is record 0 with one cell changed; row 2 is one cell from records 1 and 2,
    # which share its untouched cells: it identifies neither
    assert [a.tolist() for a in identifying_matches(real, rel, 1)] == [[0], [0]]
    # release row 1 is record 3 with two cells changed, and no other record is 5, _, _, 5
    assert [a.tolist() for a in identifying_matches(real, rel, 2)] == [[0, 1], [0, 3]]
    # records 1 and 2 are unique outside any one cell but the last
    assert identifiable_share(real, 1).tolist() == [1.0, 0.75, 0.75, 1.0]


def test_near_copies_flags_records_a_one_cell_copy_identifies():
    o = pd.DataFrame({"a": [1, 2, 3, 4], "b": list("wxyz"), "c": [5.0, 6.0, 7.0, 8.0]})
    c = pd.DataFrame({"a": [9, 10, 4], "b": list("pqz"), "c": [0.0, 11.0, 8.5]})
    s = pd.DataFrame({"a": [1, 10, 4], "b": ["w", "r", "z"], "c": [99.0, 12.0, 0.0]})
    r = run(near_copies, o, s, c)
    f = r.evidence.flags
    # s[0] is o[0] with one cell changed; s[2] equals o[3] and c[2] outside c: identifies no one
    assert f.member.tolist() == [True, False, False, False]
    assert f.non_member.tolist() == [False, False, False]
    # o[3] is unique outside a or b, not outside c (c[2] is 4, z too)
    assert f.responds["near"].tolist() == [True, True, True, True]
    assert r.evidence.sees == ("near", "exact", "rare") and r.evidence.risk == "presence"
    # measured on the run's one-cell copies: o[3]'s would be alone unless its changed cell were c
    # (c[2] is 4, z too); the seeded copy changes another cell, so all four are seen
    assert r.evidence.visibility["near"] == 1.0 and r.to_dict()["identifiable_share"] == 1.0
    # an exact copy is flagged only without another real record within one cell: not o[3]'s
    assert f.responds["exact"].tolist() == [True, True, True, False]
    assert r.value == pytest.approx(0.25) and r.baseline.value == 0.0
    assert set(r.to_dict()["by_max_diff"]) == {"1", "2"}


def test_near_copies_reports_verbatim_copies_of_qi_unique_records_below_materiality():
    rng = np.random.default_rng(1)
    o = pd.DataFrame({"age": np.arange(300), "zip": np.zeros(300, int), "y": rng.normal(size=300)})
    c = pd.DataFrame({"age": np.arange(300) + 1000, "zip": np.zeros(300, int),
                      "y": rng.normal(size=300)})
    s = pd.concat([c.iloc[:99] + 0.5, o.iloc[[5]]], ignore_index=True)
    r = run(near_copies, o, s, c, {"quasi_identifiers": ["age", "zip"]})
    qi = r.to_dict()["qi_unique_copies"]
    assert qi["quasi_identifiers"] == ["age", "zip"]
    assert (qi["copied_training"], qi["copied_control"]) == (1, 0)  # 0.3 %: below materiality
    assert [x["original_row"] for x in r.records if x["kind"] == "qi_unique_verbatim_copy"] == [5]
    assert "quasi-identifiers" in r.warning and "1 of 300 training" in r.warning


def test_near_copies_needs_control_and_checks_max_diff():
    o = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    with pytest.raises(MetricError):
        run(near_copies, o, o, None)
    with pytest.raises(ConfigError):
        run(near_copies, o, o, o + 10, max_diff=3)


def test_near_copies_are_seen_and_a_fresh_release_is_quiet_on_nhefs():
    df = shared("nhefs.csv")
    p = calibration_split(df, seed=0)
    fresh = run(near_copies, p["original"], p["fresh"], p["control"]).evidence
    assert fresh.k_member == fresh.k_non_member == 0
    assert fresh.visibility["near"] == 1.0 and fresh.effect_ci[1] < 0.01  # 1 % ruled out
    leak = leaky_release(p["fresh"], p["original"], 0.05, 0, perturb=True)
    ev = run(near_copies, p["original"], leak, p["control"]).evidence
    assert ev.effect == pytest.approx(0.05, abs=0.005) and ev.p_value < 1e-6


def test_near_copies_row_order_invariance():
    rng = np.random.default_rng(3)
    o = pd.DataFrame({"a": rng.integers(0, 5, 80), "b": rng.integers(0, 5, 80),
                      "x": rng.normal(size=80).round(1)})
    c = o.sample(frac=1.0, random_state=1).reset_index(drop=True) + 1
    s = pd.concat([o.iloc[:10].assign(a=9), c.iloc[:30]], ignore_index=True)
    a = run(near_copies, o, s, c)
    perm = rng.permutation(80)
    b = run(near_copies, o.iloc[perm].reset_index(drop=True), s.sample(frac=1.0, random_state=2),
            c)
    assert a.value == b.value and a.baseline.value == b.baseline.value and a.value > 0
    # flags come in the run's canonical record order, whatever the input order
    assert np.array_equal(a.evidence.flags.member, b.evidence.flags.member)


def _smote(o, n, seed):
    """SMOTE-like release: interpolate numeric columns between a training row and one of its 5
    nearest training neighbours (numeric columns only)."""
    rng = np.random.default_rng(seed)
    x = o.to_numpy(float)
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    nb = np.argsort(d, axis=1)[:, :5]
    i = rng.integers(0, len(o), n)
    j = nb[i, rng.integers(0, 5, n)]
    lam = rng.random((n, 1))
    return pd.DataFrame(x[i] + lam * (x[j] - x[i]), columns=o.columns)


def test_close_neighbours_sees_smote_like_release_and_not_a_fresh_one():
    df = shared("diabetes_raw.csv")
    p = calibration_split(df, seed=0)
    fresh = run(close_neighbours, p["original"], p["fresh"], p["control"]).evidence
    assert fresh.p_value > 0.05
    smote = _smote(p["original"], len(p["fresh"]), 0)
    ev = run(close_neighbours, p["original"], smote, p["control"]).evidence
    # the pooled 2 % tail holds almost only training records: the effect is capped by the tail
    assert ev.member > 3 * ev.non_member and ev.p_value < 1e-4
    assert ev.sees == ("neighbourhood", "near", "exact") and ev.risk == "presence"


def test_close_neighbours_default_tail_is_the_shared_materiality_tail():
    import dataclasses

    df = shared("diabetes_raw.csv")
    p = calibration_split(df, seed=0)
    n_o, n_c = len(p["original"]), len(p["control"])
    # 177 training and 132 control records: 20 records at 1 %, 2.5 material leaks at 20 %
    for m, expected in ((0.01, 20 / (n_o + n_c)), (0.2, 2.5 * 0.2 * n_o / (n_o + n_c))):
        ctx = dataclasses.replace(context(p["original"], p["fresh"], p["control"]), materiality=m)
        tail = run_metric(close_neighbours, ctx=ctx).details["tail"]
        assert tail == materiality_tail(n_o + n_c, n_o, m) == pytest.approx(expected)
    assert materiality_tail(100, 50, 0.01) == 0.2  # at least 20 records
    assert materiality_tail(100, 100, 1.0) == 0.5  # at most half


def test_close_neighbours_leaves_out_records_with_a_real_duplicate():
    o = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "y": [0.0, 0.0, 0.0, 0.0]})
    c = pd.DataFrame({"x": [0.0, 10.0], "y": [0.0, 0.0]})  # c[0] duplicates o[0]
    s = pd.DataFrame({"x": [0.0, 2.01], "y": [0.0, 0.0]})
    # flags by input row; the closest one of the six real records
    r = run_metric(close_neighbours, ctx=context(o, s, c, canonical=False), tail=0.1)
    f = r.evidence.flags
    assert np.isneginf(f.scores[0]) and np.isneginf(f.scores[4])  # never flagged: a real twin
    assert f.member.tolist() == [False, False, True, False]  # o[2]: release 0.01 away, real 1
    assert f.non_member.tolist() == [False, False]


def test_presets_run_near_copies_and_text_copies():
    for preset in ("quick", "privacy"):
        assert {"near_copies", "close_neighbours", "text_exact_matches"} <= set(PRESETS[preset])
    assert "text_entities" in PRESETS["privacy"]


def test_near_copies_in_a_full_run_without_text_columns():
    rng = np.random.default_rng(0)
    o, c = (pd.DataFrame({"a": rng.integers(0, 9, 60), "x": rng.normal(size=60)}) for _ in "oc")
    rep = evaluate(o, c.iloc[:30], c, preset="quick")
    assert rep.result("near_copies").evidence is not None
    assert rep.to_dict()["metrics"]["text_exact_matches"]["status"] == "skipped"


def test_two_cell_detail_is_skipped_beyond_the_hash_join_budget(monkeypatch):
    import synthguard.metrics.privacy.near_copies as nc

    o = pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6], "c": [7, 8, 9]})
    monkeypatch.setattr(nc, "MAX_PAIR_WORK", 5)
    r = run(near_copies, o, o + 100, o + 10)
    assert "skipped" in r.to_dict()["by_max_diff"]["2"]
    assert r.to_dict()["by_max_diff"]["1"]["training_flagged"] == 0


def test_near_copies_state_the_measured_share_of_copies_they_see_on_acs12():
    p = calibration_split(shared("acs12.csv"), seed=0)
    r = run(near_copies, p["original"], p["fresh"], p["control"])
    # coarse categorical columns: a quarter of the one-cell copies are as close to other real
    # people (measured on the run's own copies; the near-unique records were 54 %)
    vis = r.evidence.visibility["near"]
    assert 0.6 < vis < 0.9
    assert f"{100 * vis:.1f} % of the run's copies" in r.evidence.note
    assert "can be told from common rows" in r.warning
