"""The trio's verdict evidence: every training and every control record attacked, label-free per-record
outcomes, and for inference the maximum over the secrets adjusted for them only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.core.results import Evidence, RecordFlags
from synthguard.metrics.anonymeter.inference import _evidence, upper_bound
from synthguard.registry import Context, get_metric
from synthguard.run.executor import run_metric


def leaky(n: int, seed: int, share: float):
    """Three real-like tables; ``share`` of the release rows are copies of original rows."""
    rng = np.random.default_rng(seed)

    def pop(m):
        z = rng.normal(size=m)
        return pd.DataFrame({"age": np.clip(40 + 12 * z, 18, 90).round(),
                             "edu": rng.choice(list("abcd"), m), "region": rng.choice(list("pqrstu"), m),
                             "sex": np.where(z + rng.normal(0, 1, m) > 0, "F", "M")})

    ori, ctl, syn = pop(n), pop(n // 2 + 7), pop(n)
    take = rng.random(n) < share
    syn.loc[take] = ori.sample(int(take.sum()), random_state=seed).to_numpy()
    return ori, syn.astype(ori.dtypes.to_dict()), ctl


def run(name, ori, syn, ctl, metadata=None, **params):
    ctx = Context.from_frames(ori, syn, ctl, metadata, seed=0)
    spec = get_metric(name)
    return run_metric(spec, ctx.for_metric(spec), spec.resolve_params(params))


TRIO = ["inference", "linkability", "singling_out_univariate", "singling_out_multivariate"]


@pytest.mark.parametrize("name", TRIO)
def test_evidence_attacks_every_training_and_control_record_headline_keeps_n_attacks(name):
    ori, syn, ctl = leaky(600, seed=3, share=0.3)
    ori = pd.concat([ori, ori.iloc[:25]], ignore_index=True)  # duplicates are records too
    res = run(name, ori, syn, ctl, n_attacks=200)
    ev = res.evidence
    assert (ev.n_member, ev.n_non_member) == (len(ori), len(ctl))
    assert res.details["n_attacks"] <= 200 and res.n <= 200  # anonymeter's sampled headline
    if name != "inference":
        assert ev.flags is not None and ev.flags.member.size == len(ori)


@pytest.mark.parametrize("name", TRIO)
def test_evidence_flags_do_not_depend_on_the_labels(name):
    """Exchanging the training and control tables exchanges the per-record outcomes exactly: each
    record's outcome is decided from the pooled real records, so the verdict's permutation test of
    training against control records is exact."""
    ori, syn, ctl = leaky(500, seed=4, share=0.2)
    params = {"secret": "sex"} if name == "inference" else {}
    a = run(name, ori, syn, ctl, **params).evidence
    b = run(name, ctl, syn, ori, **params).evidence
    assert (a.k_member, a.n_member) == (b.k_non_member, b.n_non_member)
    assert (a.k_non_member, a.n_non_member) == (b.k_member, b.n_member)
    np.testing.assert_array_equal(a.flags.member, b.flags.non_member)
    np.testing.assert_array_equal(a.flags.non_member, b.flags.member)


def test_evidence_is_the_same_whatever_the_row_order():
    ori, syn, ctl = leaky(500, seed=5, share=0.2)
    rng = np.random.default_rng(0)
    shuf = [f.iloc[rng.permutation(len(f))].reset_index(drop=True) for f in (ori, syn, ctl)]
    for name in ("inference", "linkability"):
        a, b = run(name, ori, syn, ctl).evidence, run(name, *shuf).evidence
        assert a.to_dict() == b.to_dict(), name


def test_inference_bound_is_the_largest_upper_bound_and_the_alarm_the_adjusted_smallest_p():
    ori, syn, ctl = leaky(600, seed=3, share=0.3)
    res = run("inference", ori, syn, ctl, n_attacks=200)
    ev = res.evidence
    per = res.details["per_secret"]
    s = len(per)
    assert s == 4 and ev.risk == "inference" and ev.confidence_level == 0.95
    uppers = [d["evidence"].get("effect_upper", d["evidence"]["effect_ci"][1]) for d in per]
    assert upper_bound(ev) == pytest.approx(max(uppers))
    assert ev.p_value == pytest.approx(min(1.0, s * min(d["evidence"]["p_value"] for d in per)))
    assert ev.flags is None  # one secret's flags would be re-tested without the adjustment
    assert str(s) in ev.note and all(d["secret_column"] in ev.note for d in per)


def test_inference_max_rule_on_known_numbers():
    """Secret 'a' alarms (small p, tight interval); secret 'b' is noisy (large upper bound): the
    evidence alarms with a's p-value x 2 and bounds with b's interval."""
    def flags(k1, n1, k2, n2):
        return RecordFlags(np.arange(n1) < k1, np.arange(n2) < k2)

    a = Evidence.from_flags("a", flags(300, 1000, 200, 1000), risk="inference")
    b = Evidence.from_flags("b", flags(12, 40, 10, 40), risk="inference")
    ev = _evidence([a, b], ["a", "b"], "test")
    assert ev.p_value == pytest.approx(2 * a.p_value) and ev.p_value < 0.01
    assert ev.effect == b.effect and ev.effect_ci == b.effect_ci and ev.statistic == "b"
    one = _evidence([a], ["a"], "test")
    assert one.p_value == a.p_value and one.flags is a.flags  # one secret: the verdict tests its flags


def test_inference_evidence_reads_a_verbatim_leak():
    ori, syn, ctl = leaky(600, seed=3, share=0.5)
    ev = run("inference", ori, syn, ctl, secret="region").evidence
    assert ev.effect > 0.1 and ev.p_value < 1e-6 and ev.flags is not None
