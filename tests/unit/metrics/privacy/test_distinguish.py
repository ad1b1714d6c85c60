"""distinguishability: separable, indistinguishable and copied releases; text, NaN, params, seeds."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.errors import ConfigError
from synthguard.metrics.privacy.distinguish import _group_split, distinguishability
from synthguard.registry import Context

from ....helpers import run as run_metric

FAST = {"n_estimators": 30, "n_boot": 200, "max_rows": 800}


def draw(n, seed, shift=0.0, nan_rate=0.0):
    rng = np.random.default_rng(seed)
    x = rng.normal(shift, 1, n)
    x[rng.random(n) < nan_rate] = np.nan
    return pd.DataFrame({"x": x, "c": rng.choice(list("abc"), n),
                         "when": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 300, n), "D")})


def run(o, s, seed=0, **params):
    ctx = Context.from_frames(o, s, None, None, seed=seed).for_metric(distinguishability.spec)
    return run_metric(distinguishability, ctx=ctx, **{**FAST, **params})


def test_separable_release_is_high():
    r = run(draw(300, 1), draw(300, 2, shift=8.0))
    d = r.to_dict()
    assert r.value == pytest.approx(1.0) and r.risk_level == "high" and d["distinguishable"]
    assert d["precision_at_k"]["10"] == 1.0 and d["precision_at_k"]["50"] == 1.0
    assert d["roc_curve"][0] == [0.0, 0.0] and d["roc_curve"][-1] == [1.0, 1.0]
    assert d["mean_confidence_synthetic"] > 0.8 > 0.2 > d["mean_confidence_original"]
    assert d["n_train"] + d["n_test"] == 600 and r.n == d["n_test"]
    assert r.baseline.value == 0.5 and r.baseline.ci == tuple(d["null"]["ci"])
    assert d["null"]["ci"][1] < r.value and d["null"]["p_value"] < 1e-6 and d["permutation"] is None
    json.dumps(d)


def test_baseline_is_chance_with_the_null_interval_of_the_held_out_auc():
    # no refit by default: 0.5 with the Mann-Whitney null interval of the n_test held-out scores
    r = run(draw(400, 1), draw(400, 2, shift=0.3))
    d = r.to_dict()
    null = d["null"]
    m, n = null["n_positive"], null["n_negative"]
    assert m + n == r.n and r.baseline.value == 0.5 and "null interval" in r.baseline.description
    # without ties the null sd is sqrt((m + n + 1) / (12 m n)); the forest's 30-tree votes tie a little
    assert null["sd"] == pytest.approx(((m + n + 1) / (12 * m * n)) ** 0.5, rel=0.05)
    assert null["ci"][0] < 0.5 < null["ci"][1] and d["distinguishable"] is (r.value > null["ci"][1])
    assert d["distinguishable"] is (null["p_value"] < 0.025)


def test_refits_on_request_give_the_permutation_baseline():
    r = run(draw(300, 1), draw(300, 2, shift=8.0), n_permutations=2)
    d = r.to_dict()
    assert "permutation" in r.baseline.description and len(d["permutation"]["values"]) == 2
    assert r.baseline.value == pytest.approx(np.mean(d["permutation"]["values"]))
    assert r.baseline.ci == (min(d["permutation"]["values"]), max(d["permutation"]["values"]))
    assert d["null"]["p_value"] < 1e-6 and d["distinguishable"]


def test_independent_sample_sits_at_baseline():
    r = run(draw(400, 1), draw(400, 2))
    lo, hi = r.ci
    assert lo <= 0.5 <= hi
    assert r.risk_level == "low" and r.to_dict()["distinguishable"] is False
    assert r.baseline.ci[0] <= r.value <= r.baseline.ci[1] and not r.to_dict()["below_baseline"]


def test_near_copies_score_below_the_chance_baseline_and_say_so():
    # synthetic rows a hair from original rows (no exact copy): a near-copy in training, labelled
    # synthetic, makes its held-out original twin look synthetic, so the AUC falls below chance
    o = draw(300, 1)
    s = o.assign(x=o["x"] + 1e-6)
    r = run(o, s)
    d = r.to_dict()
    assert r.value < d["null"]["ci"][0] and d["below_baseline"] and d["null"]["p_below"] < 0.025
    assert "below the chance baseline" in r.warning and r.risk_level == "low"


def test_copy_is_indistinguishable_and_warns():
    # a distinguishability test cannot see copies: exactly the tie case, with a warning to say so
    o = draw(300, 1)
    r = run(o, o.copy())
    assert r.value == pytest.approx(0.5)
    assert r.risk_level == "low"
    assert "exact copies" in r.warning and r.to_dict()["exact_copy_share"] == 1.0


def test_group_split_keeps_twins_together_and_stratifies():
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(100, int), np.ones(100, int)]
    groups = np.r_[np.arange(100), np.arange(50, 150)]  # 50 twins across the classes
    train, test = _group_split(y, groups, 0.3, rng)
    assert set(groups[train]).isdisjoint(groups[test])
    assert 0.2 < test.size / y.size < 0.4
    assert 0.3 < y[test].mean() < 0.7


def test_text_column_takes_part():
    rng = np.random.default_rng(0)
    words_a, words_b = ["apple", "pear", "plum", "fig"], ["stone", "rock", "sand", "clay"]
    n = 200
    text = lambda w: [" ".join(rng.choice(w, 6)) for _ in range(n)]  # noqa: E731
    tab = draw(n, 3)
    o = tab.assign(review=text(words_a))
    s = tab.sample(frac=1.0, random_state=1).reset_index(drop=True).assign(review=text(words_b))
    s["x"] = s["x"] + 1e-9  # no exact copies
    meta = {"columns": {"review": {"sdtype": "text"}}}
    ctx = Context.from_frames(o, s, None, meta).for_metric(distinguishability.spec)
    r = run_metric(distinguishability, ctx=ctx, **FAST)
    assert r.to_dict()["text_columns_used"] == ["review"]
    assert r.value > 0.95 and r.risk_level == "high"


def test_missingness_and_datetimes_are_features():
    # half the original rows miss x, no synthetic row does: the ideal AUC is 0.5 * 1 + 0.5 * 0.5 = 0.75
    r = run(draw(300, 1, nan_rate=0.5), draw(300, 2))
    assert 0.65 < r.value < 0.85 and r.ci[0] > 0.6
    o = draw(300, 1)
    s = draw(300, 2)
    s["when"] = s["when"] + pd.Timedelta(days=1000)
    assert run(o, s).value > 0.95


def test_seed_determinism_and_alias_and_cap():
    o, s = draw(300, 1), draw(300, 2, shift=0.5)
    a = evaluate(o, s, metrics={"membership_inference": FAST}, seed=3)
    b = evaluate(o, s, metrics={"distinguishability": FAST}, seed=3)
    assert list(a.metrics) == ["distinguishability"]
    assert a.to_dict()["metrics"]["distinguishability"]["result"] == \
        b.to_dict()["metrics"]["distinguishability"]["result"]
    r = run(o, s, max_rows=100)
    used = r.to_dict()["rows_used"]
    assert used["original"] == used["synthetic"] == 50 and used["capped"] is True


@pytest.mark.parametrize("params", [{"test_size": 0.9}, {"max_rows": 5}, {"n_permutations": -1},
                                    {"precision_k": [0]}, {"confidence_level": 2.0}])
def test_bad_params_raise_config_error(params):
    o = draw(50, 1)
    with pytest.raises(ConfigError):
        evaluate(o, o, metrics={"distinguishability": params})
    with pytest.raises(ConfigError):
        run(o, o, **params)
