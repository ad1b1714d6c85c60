"""The fixed-file metric ``closest_distance_mia`` (the ``synthguard attack`` command: ``tests/unit/cli``)."""

from __future__ import annotations

import numpy as np
import pytest

from synthguard import evaluate
from synthguard.demo import DEMO_METADATA
from synthguard.metrics.privacy.closest_distance_mia import closest_distance_mia
from synthguard.registry import Context, get_metric

from ....helpers import run


@pytest.fixture(scope="module")
def runs(demo_data):
    out = {}
    for rel in ("leaky", "safe"):
        out[rel] = evaluate(demo_data["original"], demo_data[rel], demo_data["control"], DEMO_METADATA,
                            metrics=["closest_distance_mia"])
    return out


def test_registered_in_the_attacks_family():
    spec = get_metric("closest_distance_mia")
    assert spec.family == "attacks" and set(spec.needs) == {"original", "synthetic", "control"}


def test_leaky_release_is_caught_and_safe_release_sits_at_the_baseline(runs):
    leaky = runs["leaky"]["closest_distance_mia"]["result"]
    safe = runs["safe"]["closest_distance_mia"]["result"]
    assert leaky["value"] > 0.7 and leaky["ci"][0] > 0.5 and leaky["risk_level"] in ("medium", "high")
    assert leaky["tpr_at_fpr_0.01"] > 0.3  # 40 % exact copies: found with almost no false positive
    assert leaky["effective_epsilon"] > 1.0
    assert safe["ci"][0] <= 0.5 <= safe["ci"][1]
    assert safe["reference_level"] == "not meaningful" and safe["warning"]
    assert safe["risk_level"] in ("low", "inconclusive")
    assert leaky["evidence"]["member"] > 0.3 and leaky["evidence"]["p_value"] < 1e-10
    for res in (leaky, safe):
        assert res["baseline"]["value"] == 0.5
        assert res["roc_curve"][0] == [0.0, 0.0] and res["roc_curve"][-1] == [1.0, 1.0]
        assert len(res["roc_curve"]) <= 101
        assert res["n_members"] == res["n_non_members"]
        assert 0 <= res["advantage"] <= 1
        # 1000 control rows: 0.1 % FPR is one false positive, resolvable
        assert res["tpr_at_fpr_0.001"] is not None
    top = leaky["records"]
    assert len(top) == 10 and top[0]["distance"] == 0.0
    assert all(a["distance"] <= b["distance"] for a, b in zip(top, top[1:], strict=False))


def test_row_order_does_not_change_the_result(demo_data):
    d = demo_data
    for cap in (None, 400):  # capped samples are drawn by content, not position
        a = run(closest_distance_mia, ctx=Context.from_frames(d["original"], d["leaky"], d["control"],
                                                     DEMO_METADATA), max_rows=cap, n_boot=30)
        perm = np.random.default_rng(0).permutation(len(d["original"]))
        b = run(closest_distance_mia, ctx=Context.from_frames(d["original"].iloc[perm], d["leaky"].iloc[::-1],
                                                     d["control"].iloc[::-1], DEMO_METADATA),
                                 max_rows=cap, n_boot=30)
        assert a.value == b.value and a.ci == b.ci
        assert a.details["advantage"] == b.details["advantage"]
        assert a.details["effective_epsilon"] == b.details["effective_epsilon"]


def test_max_rows_caps_and_balances_with_a_seed(demo_data):
    d = demo_data
    ctx = Context.from_frames(d["original"], d["leaky"], d["control"].iloc[:300], DEMO_METADATA, seed=3)
    r1 = run(closest_distance_mia, ctx=ctx, max_rows=200, n_boot=30)
    r2 = run(closest_distance_mia, ctx=ctx, max_rows=200, n_boot=30)
    assert r1.details["n_members"] == r1.details["n_non_members"] == 200
    assert r1.value == r2.value and r1.ci == r2.ci
    assert r1.details["tpr_at_fpr_0.001"] is None and "note" in " ".join(r1.details)


def test_missing_control_is_skipped_with_a_reason(demo_data):
    r = evaluate(demo_data["original"], demo_data["safe"], metrics=["closest_distance_mia"])
    assert r["closest_distance_mia"]["status"] == "skipped"
    assert "control" in r["closest_distance_mia"]["reason"]


def test_the_rows_behind_the_tail_are_every_release_row_within_its_cut_however_many():
    """The ties name every (record in the tail, release row within the cut) pair, as a search of
    every distance finds them, a record equal to 60 release rows included (one pass of the
    release over an index of the flagged records: no search for ever more neighbours)."""
    import pandas as pd

    from synthguard.engine.neighbors import gower, kneighbors
    from synthguard.metrics.privacy.closest_distance_mia import tail_ties

    rng = np.random.default_rng(11)
    o = pd.DataFrame({"x": rng.normal(size=80).round(1), "g": rng.choice(list("ab"), 80)})
    c = pd.DataFrame({"x": rng.normal(size=80).round(1), "g": rng.choice(list("ab"), 80)})
    rel = pd.concat([pd.concat([o.head(1)] * 60), o.iloc[1:20],
                     pd.DataFrame({"x": rng.normal(size=40).round(1), "g": rng.choice(list("ab"), 40)})],
                    ignore_index=True)
    ctx = Context.from_frames(o, rel, control=c, canonical=False)
    data = ctx.data
    metric = gower(data.ranges(["x", "g"], ("original", "synthetic", "control")), clip=True)
    n_syn = len(rel)
    d = {r: kneighbors(ctx.encoded.block(r, ["x", "g"]), ctx.encoded.block("synthetic", ["x", "g"]),
                       metric, n_syn) for r in ("original", "control")}
    cut = float(np.quantile(np.r_[d["original"].distances[:, 0], d["control"].distances[:, 0]], 0.1))
    got = tail_ties(data, ["x", "g"], metric, (np.arange(80), d["original"].distances[:, 0], 80),
                    (np.arange(80), d["control"].distances[:, 0], 80), cut)
    want = set()
    for r, offset in (("original", 0), ("control", 80)):
        near = d[r].distances <= cut
        q, j = np.nonzero(near)
        want |= set(zip((q + offset).tolist(), d[r].indices[q, j].tolist(), strict=True))
    assert set(zip(got.pairs.record.tolist(), got.pairs.row.tolist(), strict=True)) == want
    assert sum(rec == 0 for rec, _ in want) >= 60  # the record 60 release rows equal
    assert got.member.tolist() == (d["original"].distances[:, 0] <= cut).tolist()
