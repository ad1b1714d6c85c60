"""Singling-out control-size correction below 1,000 control rows (issue 14).

anonymeter draws the curve's subsample sizes from ``min(1000, n)``: below 1,000 control rows every size
is ``n``, the fit is degenerate and the control rate was multiplied by about |original|/|control|
(risk silently 0). The sizes now run from n/10 to n; when the curve cannot be fitted the run says so and
counts the attack on an equal-size subsample of the original.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthguard.metrics.anonymeter import singling_out as so
from synthguard.registry import Context, get_metric
from synthguard.run.executor import run_metric


@pytest.fixture(scope="module")
def leaky(shared_data):
    """acs12: 1,000 original rows, a leaky release (the original with age jittered by +-2 on half the
    rows) and 1,000 real held-out rows."""
    df = pd.read_csv(shared_data / "acs12.csv")
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(df))
    ori = df.iloc[idx[:1000]].reset_index(drop=True)
    ctl = df.iloc[idx[1000:]].reset_index(drop=True)
    syn = ori.copy()
    m = rng.random(len(syn)) < 0.5
    syn.loc[m, "age"] = syn.loc[m, "age"] + rng.integers(-2, 3, int(m.sum()))
    return ori, syn, ctl


def _run(mode, ori, syn, ctl, n_attacks=250):
    spec = get_metric(f"singling_out_{mode}")
    ctx = Context.from_frames(ori, syn, ctl, seed=0)
    return run_metric(spec, ctx.for_metric(spec), spec.resolve_params({"n_attacks": n_attacks}))


def test_curve_sizes_vary_below_1000():
    for n in (30, 300, 600, 999):
        s = so.curve_sizes(n)
        assert s.size >= 3 and s.min() <= n // 10 + 1 and s.max() == n


@pytest.mark.parametrize("mode, n_ctl", [("univariate", 300), ("univariate", 900), ("multivariate", 300),
                                         ("multivariate", 600), ("multivariate", 900)])
def test_small_control_agrees_with_equal_size_control(leaky, mode, n_ctl):
    ori, syn, ctl = leaky
    equal = _run(mode, ori, syn, ctl)                 # control as large as the original: no correction
    small = _run(mode, ori, syn, ctl.iloc[:n_ctl])    # corrected by the fitted curve
    corr = small.details["control_correction"]
    assert corr["applied"], corr
    # 1.1.0 (and the degenerate fit) would give about |ctl|/|ori| or |ori|/|ctl|
    if n_ctl <= 600:
        assert abs(corr["factor"] - len(ori) / n_ctl) > 0.2
    lo = max(equal.ci[0], small.ci[0])
    hi = min(equal.ci[1], small.ci[1])
    assert lo <= hi, (equal.value, equal.ci, small.value, small.ci)  # the intervals overlap
    assert small.value > 0.3  # a leaky release is never read as safe


def test_leaky_release_small_control_is_never_zero(leaky):
    ori, syn, ctl = leaky
    for mode in ("univariate", "multivariate"):
        r = _run(mode, ori, syn, ctl.iloc[:300])
        assert r.value > 0.3 and r.ci[0] > 0.1


def test_failed_fit_falls_back_to_equal_size_comparison(leaky, monkeypatch):
    ori, syn, ctl = leaky

    def fail(*a, **k):
        raise RuntimeError("forced failure")

    monkeypatch.setattr(so, "correction_factor", fail)
    r = _run("univariate", ori, syn, ctl.iloc[:300])
    corr = r.details["control_correction"]
    assert not corr["applied"] and corr["factor"] == 1.0
    assert "equal-size comparison" in corr["method"] and "forced failure" in corr["reason"]
    assert "equal-size comparison" in r.warning
    # the attack is counted on 300 original rows: fewer successes than on the full original
    assert r.details["n_success"] <= corr["n_success_full_original"]
    assert r.details["n_control"] == corr["n_control_raw"]
    assert r.value > 0


def test_degenerate_flat_curve_is_refused():
    sizes = np.repeat(np.array([100, 200, 300]), 5)
    ys = 5000.0 / (sizes + 1.0)  # the w = 1 curve, whose ratio is 1.1.0's (|ctl|+1)/(|ori|+1)
    with pytest.raises(RuntimeError):
        so.correction_factor(sizes, ys, 1000, 300)
