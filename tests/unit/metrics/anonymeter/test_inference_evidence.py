"""The inference evidence adjusts for the maximum over secrets: Bonferroni p-value AND interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.metrics.anonymeter.inference import _evidence
from synthguard.registry import Context, get_metric
from synthguard.run.executor import run_metric


def leaky(n: int, seed: int, share: float):
    """Three real-like tables; ``share`` of the release rows are copies of original rows."""
    rng = np.random.default_rng(seed)

    def pop():
        z = rng.normal(size=n)
        return pd.DataFrame({"age": np.clip(40 + 12 * z, 18, 90).round(),
                             "edu": rng.choice(list("abcd"), n), "region": rng.choice(list("pqrstu"), n),
                             "sex": np.where(z + rng.normal(0, 1, n) > 0, "F", "M")})

    ori, ctl, syn = pop(), pop(), pop()
    take = rng.random(n) < share
    syn.loc[take] = ori.sample(int(take.sum()), random_state=seed).to_numpy()
    return ori, syn.astype(ori.dtypes.to_dict()), ctl


def run(name, ori, syn, ctl, **params):
    ctx = Context.from_frames(ori, syn, ctl, seed=0)
    spec = get_metric(name)
    return run_metric(spec, ctx.for_metric(spec), spec.resolve_params(params))


def test_inference_interval_covers_the_maximum_over_secrets():
    ori, syn, ctl = leaky(600, seed=3, share=0.3)
    res = run("inference", ori, syn, ctl, n_attacks=200)
    ev = res.evidence
    s = len(res.details["per_secret"])
    assert s > 1 and ev.risk == "inference"
    assert ev.confidence_level == pytest.approx(1 - 0.05 / s)
    assert "interval" in ev.note and str(s) in ev.note
    # the same secret's interval at the unadjusted level is narrower
    top = next(d for d in res.details["per_secret"] if d["secret_column"] in ev.statistic)
    plain = _evidence([top], 0.95)
    assert plain.confidence_level == 0.95 and plain.risk == "inference"
    assert plain.effect == pytest.approx(ev.effect)
    assert ev.effect_ci[0] < plain.effect_ci[0] and ev.effect_ci[1] > plain.effect_ci[1]


def test_inference_value_unchanged_by_the_adjustment():
    ori, syn, ctl = leaky(600, seed=3, share=0.3)
    res = run("inference", ori, syn, ctl, n_attacks=200)
    assert res.value == max(d["risk"] for d in res.details["per_secret"] if d["meaningful"])
    assert np.isfinite(res.evidence.p_value) and res.evidence.p_value <= 1
