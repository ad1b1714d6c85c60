"""The drop-in facades return a reference's headline and no verdict, so they skip the verdict's
evidence over every record (``Context.evidence``); the headline does not depend on it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from synthguard.compat.anonymeter import (
    InferenceEvaluator,
    LinkabilityEvaluator,
    SinglingOutEvaluator,
)
from synthguard.compat.sdmetrics.single_table import DCROverfittingProtection
from synthguard.metrics.anonymeter import inference, linkability, singling_out
from synthguard.metrics.disclosure import dcr_protection
from synthguard.registry import Context, get_metric
from synthguard.run.executor import run_metric

ATTACKS = {"singling_out_univariate": {"n_attacks": 200},
           "linkability": {"n_attacks": 200, "n_neighbors": 3},
           "inference": {"n_attacks": 200, "secret": "income"},
           "dcr_overfitting_protection": {}}


@pytest.fixture(scope="module")
def frames(demo_data):
    return (demo_data["original"].head(400), demo_data["leaky"].head(400),
            demo_data["control"].head(400))


def _without_evidence(d):
    """A result's dictionary without the evidence (also each inferred secret's own, and the
    records the DCR evidence counts)."""
    def strip(m):
        out = {k: v for k, v in m.items() if k not in ("evidence", "evidence_won_records")}
        if "per_secret" in out:
            out["per_secret"] = [{k: v for k, v in s.items() if k != "evidence"}
                                 for s in out["per_secret"]]
        return out

    d = strip(d)
    if isinstance(d.get("details"), dict):
        d["details"] = strip(d["details"])
    return d


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_attacks_headline_is_the_same_with_or_without_the_verdicts_evidence(frames, name):
    spec = get_metric(name)
    params = spec.resolve_params(ATTACKS[name])
    full = run_metric(spec, Context.from_frames(*frames, seed=3).for_metric(spec), params)
    bare_ctx = replace(Context.from_frames(*frames, seed=3), evidence=False)
    bare = run_metric(spec, bare_ctx.for_metric(spec), params)
    assert full.evidence is not None and bare.evidence is None
    assert _without_evidence(bare.to_dict()) == _without_evidence(full.to_dict())


def test_the_anonymeter_facade_never_computes_the_evidence(frames, monkeypatch):
    """anonymeter's API users get the same risks without paying for a search over every record."""
    def refuse(*_a, **_k):
        raise AssertionError("the facade computed the verdict's evidence")

    monkeypatch.setattr(linkability, "link_flags", refuse)
    monkeypatch.setattr(inference, "secret_flags", refuse)
    monkeypatch.setattr(singling_out, "_paired_evidence", refuse)
    ori, syn, ctl = frames
    so = SinglingOutEvaluator(ori, syn, control=ctl, n_attacks=200)
    assert 0.0 <= so.evaluate(mode="univariate").risk().value <= 1.0
    cols = list(ori.columns)
    li = LinkabilityEvaluator(ori, syn, aux_cols=(cols[:3], cols[3:]), n_attacks=200, control=ctl,
                              n_neighbors=3)
    assert 0.0 <= li.evaluate().risk().value <= 1.0
    inf = InferenceEvaluator(ori, syn, aux_cols=[c for c in cols if c != "income"], secret="income",
                             n_attacks=200, control=ctl)
    assert 0.0 <= inf.evaluate().risk().value <= 1.0


def test_the_sdmetrics_facade_never_computes_the_evidence(frames, monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("the facade computed the verdict's evidence")

    monkeypatch.setattr(dcr_protection, "_overfitting_evidence", refuse)
    ori, syn, ctl = frames
    meta = {"columns": {c: {"sdtype": "numerical" if ori[c].dtype.kind in "fi" else "categorical"}
                        for c in ori.columns}}
    score = DCROverfittingProtection.compute(ori, syn, ctl, meta)
    assert 0.0 <= score <= 1.0
