"""exact_matches and ims: hand-computed answers, baselines, known answers, order invariance, params."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.errors import ConfigError
from synthguard.metrics.privacy.matching import exact_matches, ims
from synthguard.registry import Context
from synthguard.stats import difference_ci

from ....helpers import run

META = {"columns": {"x": {"sdtype": "numerical"}, "c": {"sdtype": "categorical"}}}
ORIG = pd.DataFrame({"x": [1.0, 1.0, 2.0, np.nan], "c": ["a", "a", "b", None]})
SYN = pd.DataFrame({"x": [1.0, np.nan, 3.0, 2.0, 1.0], "c": ["a", None, "d", "b", "a"]})
CTL = pd.DataFrame({"x": [2.0, 5.0], "c": ["b", "e"]})


def ctx(o=ORIG, s=SYN, c=CTL, meta=META, **kw):
    # input order: the hand-computed answers below are per record, by input position
    return Context.from_frames(o, s, c, meta, canonical=False, **kw).for_metric(exact_matches.spec)


def test_newcombe_difference_matches_published_example():
    # Newcombe (1998), Statistics in Medicine 17, 873-890, example (a): 56/70 - 48/80
    d = difference_ci(56, 70, 48, 80)
    assert d["value"] == pytest.approx(0.2)
    assert d["ci"] == pytest.approx([0.0524, 0.3339], abs=1e-4)


def test_exact_matches_hand_computed():
    r = run(exact_matches, ctx=ctx())
    # synthetic rows 0, 1 (missing equals missing), 3, 4 occur in the original; row 2 does not
    assert r.value == pytest.approx(0.8)
    assert r.n == 5
    d = r.to_dict()
    assert d["percentage"] == pytest.approx(80.0)
    assert d["synthetic_match_rate"]["k"] == 4
    assert d["original_duplication_rate"]["value"] == pytest.approx(0.5)  # rows 0 and 1 are twins
    assert d["control_match_rate"]["value"] == pytest.approx(0.5)
    assert r.baseline.value == pytest.approx(0.5)
    assert r.baseline.description.startswith("control vs original")
    lo, hi = r.ci
    assert lo < 0.8 < hi
    assert r.risk_level == "high"  # 80 % > 5 %
    assert [rec["original_row"] for rec in r.records] == [0, 2, 3]
    assert r.records[0] == {"original_row": 0, "synthetic_copies": 2, "original_duplicates": 2}
    json.dumps(d)


def test_exact_matches_without_control_and_threshold():
    r = run(exact_matches, ctx=Context.from_frames(ORIG, SYN, None, META).for_metric(
        exact_matches.spec, {"high": 0.9}))
    assert r.baseline.value is None and r.baseline.description == "no baseline: no control given"
    assert r.to_dict()["control_match_rate"] is None
    assert r.risk_level == "low"  # 0.8 < user threshold 0.9


def test_ims_hand_computed_with_and_without_control():
    c = Context.from_frames(ORIG, SYN, CTL, META).for_metric(ims.spec)
    r = run(ims, ctx=c)
    # distinct synthetic rows: (1,a), (nan,nan), (3,d), (2,b) -> 3 of 4 in original
    assert r.value == pytest.approx(0.75) and r.n == 4
    assert r.baseline.value == pytest.approx(0.5)  # distinct control rows: (2,b) yes, (5,e) no
    d = r.to_dict()
    assert d["passed"] is False
    assert d["difference_to_baseline"]["value"] == pytest.approx(0.25)
    assert d["significantly_above_baseline"] is False  # tiny n: within sampling error
    assert r.risk_level == "low"
    r0 = run(ims, ctx=Context.from_frames(ORIG, SYN, None, META).for_metric(ims.spec))
    assert r0.to_dict()["passed"] is None
    assert r0.baseline.value is None
    assert r0.baseline.description == "no baseline: no control given"
    assert "passed" not in r0.baseline.description


def test_ims_no_control_is_never_a_self_comparison():
    # SynEval compared the original with a shuffled copy of itself (always 1.0, always "passed").
    r = evaluate(ORIG, ORIG, metadata=META, metrics=["ims"]).result("ims")
    assert r.value == 1.0 and r.to_dict()["passed"] is None and r.reference_level == "high"
    assert r.risk_level == "not assessed" and r.evidence is None  # no control: nothing to test


def test_id_columns_ignored_text_columns_compared():
    meta = {"columns": {"id": {"sdtype": "id"}, "t": {"sdtype": "text"}, "c": {"sdtype": "categorical"}}}
    o = pd.DataFrame({"id": [1, 2, 3], "t": ["hello world", "good day", "hi"], "c": ["a", "b", "a"]})
    s = pd.DataFrame({"id": [7, 8, 9], "t": ["hello world", "good night", "hi"], "c": ["a", "b", "b"]})
    r = run(exact_matches, ctx=Context.from_frames(o, s, None, meta).for_metric(exact_matches.spec))
    assert r.value == pytest.approx(1 / 3)


def test_copy_is_maximally_risky_and_independent_sample_sits_at_baseline():
    rng = np.random.default_rng(3)

    def draw(n):
        return pd.DataFrame({"a": rng.choice(list("abc"), n), "b": rng.choice(list("xy"), n),
                             "k": rng.integers(0, 4, n).astype(str)})

    orig, syn, ctl = draw(400), draw(400), draw(400)
    rep = evaluate(orig, orig, ctl, metrics=["exact_matches", "ims"])
    assert rep.result("exact_matches").value == 1.0
    assert rep.result("exact_matches").reference_level == "high"
    assert rep.result("ims").value == 1.0
    # 24 possible rows: every real person matches the copy by chance as often, so copying this
    # table exposes nobody beyond chance; the calibrated test cannot (and must not) alarm
    assert rep.result("exact_matches").risk_level not in ("high", "medium")
    wide = pd.concat([orig, pd.DataFrame({"x": rng.normal(size=400)})], axis=1)
    wide_ctl = pd.concat([ctl, pd.DataFrame({"x": rng.normal(size=400)})], axis=1)
    rep = evaluate(wide, wide, wide_ctl, metrics=["exact_matches", "ims"])
    assert rep.result("exact_matches").risk_level == "high"
    # ims is informational (a fidelity share): its evidence never drives the verdict
    assert rep.result("ims").evidence.drives_verdict is False
    assert rep.result("ims").risk_level not in ("high", "medium", "low")
    rep = evaluate(orig, syn, ctl, metrics=["exact_matches", "ims"])
    for name in ("exact_matches", "ims"):
        d = rep.result(name).to_dict()
        lo, hi = d["difference_to_baseline"]["ci"]
        assert lo <= 0 <= hi, name  # an independent sample matches like real unseen rows
    assert rep.result("ims").risk_level not in ("high", "medium")


def test_row_order_does_not_change_values(demo_data, demo_metadata):
    d = demo_data
    a = evaluate(d["original"], d["leaky"], d["control"], demo_metadata, metrics=["exact_matches", "ims"])
    sh = {k: d[k].sample(frac=1.0, random_state=5).reset_index(drop=True)
          for k in ("original", "leaky", "control")}
    b = evaluate(sh["original"], sh["leaky"], sh["control"], demo_metadata,
                 metrics=["exact_matches", "ims"])
    for name in ("exact_matches", "ims"):
        ra, rb = a.result(name).to_dict(), b.result(name).to_dict()
        for key in ("value", "ci", "baseline", "n", "risk_level"):
            assert ra[key] == rb[key], (name, key)
    alone = evaluate(d["original"], d["leaky"], d["control"], demo_metadata,
                     metrics=["exact_matches"]).to_dict()["metrics"]["exact_matches"]["result"]
    both = a.to_dict()["metrics"]["exact_matches"]["result"]
    # the verdict adjusts p-values over the tests of the run: only that differs
    for res in (alone, both):
        res["evidence"].pop("p_adjusted")
    assert both == alone


@pytest.mark.parametrize("params", [{"top_n": 0}, {"confidence_level": 1.5}, {"top_n": "x"}])
def test_bad_params_raise_config_error(params):
    with pytest.raises(ConfigError):
        evaluate(ORIG, SYN, metadata=META, metrics={"exact_matches": params})
    with pytest.raises(ConfigError):
        run(exact_matches, ctx=ctx(), **params)


def test_ims_bad_confidence():
    with pytest.raises(ConfigError):
        evaluate(ORIG, SYN, metadata=META, metrics={"ims": {"confidence_level": 0}})


def test_exact_matches_evidence_flags_every_record_unique_in_pooled_real_data():
    orig = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "c": ["a", "b", "c", "d"]})
    ctl = pd.DataFrame({"x": [2.0, 5.0, 6.0], "c": ["b", "e", "f"]})
    syn = pd.DataFrame({"x": [1.0, 2.0, 5.0, 9.0], "c": ["a", "b", "e", "z"]})
    r = run(exact_matches, ctx=ctx(orig, syn, ctl))
    ev = r.evidence
    f = ev.flags
    # (2, b) is in both original and control: not unique in the pooled real data, never flagged
    assert f.member.tolist() == [True, False, False, False]
    assert f.non_member.tolist() == [False, True, False]
    assert f.responds["exact"].tolist() == [True, False, True, True]
    assert f.responds["rare"].tolist() == f.responds["exact"].tolist()
    assert ev.n_member == 4 and ev.n_non_member == 3  # all records, not only the unique ones
    assert ev.sees == ("exact", "rare") and ev.risk == "presence" and ev.weight == 3.0
    assert ev.visibility["exact"] == pytest.approx(0.75)
    assert r.value == pytest.approx(0.5)  # headline (SynEval) unchanged: release rows in original


def test_ims_evidence_is_informational_per_record_verbatim_copy():
    r = run(ims, ctx=Context.from_frames(ORIG, SYN, CTL, META, canonical=False).for_metric(ims.spec))
    ev = r.evidence
    assert ev.drives_verdict is False and ev.sees == ()
    assert "exact_matches" in ev.note
    # original rows (1,a),(1,a),(2,b),(nan,nan) all have a copy in SYN; control (2,b) yes, (5,e) no
    assert ev.flags.member.tolist() == [True, True, True, True]
    assert ev.flags.non_member.tolist() == [True, False]


def test_count_paths_give_the_same_evidence_as_the_flags():
    from synthguard.metrics.privacy.matching import (
        copy_evidence_counts,
        copy_flags,
        exact_matches_result,
        ims_result,
    )

    orig, ctl, syn = np.array([1, 2, 2, 5]), np.array([3, 4, 5]), np.array([1, 3, 2, 9])
    kw = dict(k=2, n_synthetic=4, n_duplicated=2, n_original=4, control=(1, 3), records=[],
              evidence_counts=copy_evidence_counts(orig, ctl, syn))
    with_flags = exact_matches_result({}, ["x"], flags=copy_flags(orig, ctl, syn), **kw)
    counts_only = exact_matches_result({}, ["x"], **kw)
    assert with_flags.evidence.to_dict() == counts_only.evidence.to_dict()
    from synthguard.core.results import RecordFlags

    flags = RecordFlags(np.isin(orig, syn), np.isin(ctl, syn), {"exact": np.ones(4, bool)})
    rc = (int(flags.member.sum()), 4, int(flags.non_member.sum()), 3)
    a = ims_result({}, k=2, n_distinct=4, control=(1, 3, 2, 4, 1, 3), flags=flags)
    b = ims_result({}, k=2, n_distinct=4, control=(1, 3, 2, 4, 1, 3), record_counts=rc)
    assert a.evidence.to_dict() == b.evidence.to_dict()
