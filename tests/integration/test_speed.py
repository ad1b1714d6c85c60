"""Issue 15 (single machine): concurrent metrics give the serial numbers, the sampled random DCR
baseline, and the NumPy fallback of the privacy preset."""

from __future__ import annotations

import json

import numpy as np
import pytest

import synthguard
from synthguard.engine.parallel import DEFAULT_JOBS, DEFAULT_JOBS_ROWS, default_jobs, resolve_jobs
from synthguard.metrics.disclosure.dcr_protection import dcr_baseline_protection
from synthguard.registry import Context
from synthguard.run.config import PRESETS

PRIVACY_TABULAR = [m for m in PRESETS["privacy"] if not m.startswith("text_")]


def _numbers(report) -> str:
    """The report's JSON without timings (the only thing allowed to differ between runs)."""
    def strip(o):  # timings at any depth (per metric, per attack)
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if k != "seconds"}
        if isinstance(o, list):
            return [strip(v) for v in o]
        return o

    return json.dumps(strip(report.to_dict()), sort_keys=True, default=str)


@pytest.fixture(scope="module")
def small(demo_data):
    # 300 rows: every metric of the privacy preset still runs (status ok), at half the time of 600
    sub = {k: v.iloc[:300].reset_index(drop=True) for k, v in demo_data.items()}
    return sub


@pytest.mark.slow
def test_concurrent_metrics_equal_serial(small, demo_metadata):
    kw = dict(control=small["control"], metadata=demo_metadata, metrics=PRIVACY_TABULAR, seed=3)
    serial = synthguard.evaluate(small["original"], small["leaky"], jobs=1, **kw)
    threaded = synthguard.evaluate(small["original"], small["leaky"], jobs=4, **kw)
    assert [serial.status(m) for m in serial.metrics] == [threaded.status(m) for m in threaded.metrics]
    assert serial.metrics == threaded.metrics  # the configured order, not the finishing order
    assert _numbers(serial) == _numbers(threaded)


def test_numpy_backend_gives_the_numba_numbers(small, demo_metadata):
    kw = dict(control=small["control"], metadata=demo_metadata, seed=1,
              metrics=["dcr", "nndr", "dcr_baseline_protection", "dcr_overfitting_protection"])
    a = synthguard.evaluate(small["original"], small["leaky"], backend="numba", **kw)
    b = synthguard.evaluate(small["original"], small["leaky"], backend="numpy", **kw)
    assert _numbers(a) == _numbers(b).replace('"backend": "numpy"', '"backend": "numba"')


def test_resolve_jobs():
    assert 1 <= resolve_jobs(None) <= min(DEFAULT_JOBS, default_jobs())
    assert resolve_jobs(0) == resolve_jobs(-1) == default_jobs()
    assert resolve_jobs(None, rows=DEFAULT_JOBS_ROWS + 1) == 1  # two working sets at once: too large
    assert resolve_jobs(None, rows=DEFAULT_JOBS_ROWS) == resolve_jobs(None)
    assert resolve_jobs(3) == 3
    with pytest.raises(synthguard.ConfigError):
        resolve_jobs("two")


def _ctx(n: int, seed: int = 0) -> Context:
    import importlib.util
    from pathlib import Path

    # tests/conftest.py's generator, loaded by path ("conftest" alone may name tests/integration/dask/conftest.py)
    spec = importlib.util.spec_from_file_location("_sg_root_conftest", Path(__file__).parents[1] / "conftest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return Context.from_frames(mod.mixed_frame(n, 1), mod.mixed_frame(n, 2), seed=seed)


def test_random_baseline_sampled_only_above_random_rows():
    full = dcr_baseline_protection(_ctx(1500), random_rows=None)
    same = dcr_baseline_protection(_ctx(1500), random_rows=1500)  # n_syn <= random_rows: full
    assert full.value == same.value and full.details == same.details
    assert full.details["n_random"] == 1500


def test_random_baseline_sample_and_its_interval():
    ctx = _ctx(3000)
    sampled = dcr_baseline_protection(ctx, random_rows=2000, random_precision=0.5)
    assert sampled.details["n_random"] == 1000  # the first batch was precise enough
    tight = dcr_baseline_protection(_ctx(3000), random_rows=2000, random_precision=1e-6)
    assert tight.details["n_random"] == 2000  # never more than random_rows
    full = dcr_baseline_protection(_ctx(3000), random_rows=None)
    assert full.details["n_random"] == 3000
    # the sampled median's reported 95 % interval covers the full computation's median here
    lo, hi = tight.details["median_ci"]["random_data_baseline"]
    assert lo <= full.details["median_DCR_to_real_data"]["random_data_baseline"] <= hi
    # the synthetic side is never sampled
    assert sampled.details["median_DCR_to_real_data"]["synthetic_data"] == \
        full.details["median_DCR_to_real_data"]["synthetic_data"]
    again = dcr_baseline_protection(_ctx(3000), random_rows=2000, random_precision=0.5)
    assert np.isclose(again.value, sampled.value, rtol=0, atol=0)


def test_percentile_ci_matches_the_resampling_bootstrap():
    """The order-statistic draw has the distribution of the classic resampling bootstrap."""
    from synthguard.stats import percentile_ci

    x = np.random.default_rng(5).gamma(2.0, size=3000).round(3)
    rng = np.random.default_rng(6)
    classic = np.percentile(x[rng.integers(0, x.size, size=(4000, x.size))], 5, axis=1)
    lo, hi = np.quantile(classic, [0.025, 0.975])
    ours = percentile_ci(x, 5, n_boot=4000, seed=1)
    assert ours[0] == pytest.approx(lo, abs=0.01) and ours[1] == pytest.approx(hi, abs=0.01)
    assert percentile_ci(x, 5, n_boot=300, seed=2) == percentile_ci(x[::-1], 5, n_boot=300, seed=2)


def test_dcr_protection_numbers_do_not_depend_on_sharing_dcrs_search(small, demo_metadata):
    """With dcr in the run, the DCR protection metrics reuse its k=2 searches: same numbers."""
    kw = dict(control=small["control"], metadata=demo_metadata, seed=2, jobs=1)
    alone = synthguard.evaluate(small["original"], small["leaky"],
                                metrics=["dcr_baseline_protection", "dcr_overfitting_protection"], **kw)
    shared = synthguard.evaluate(small["original"], small["leaky"],
                                 metrics=["dcr", "dcr_baseline_protection", "dcr_overfitting_protection"],
                                 **kw)
    for name in ("dcr_baseline_protection", "dcr_overfitting_protection"):
        assert alone.result(name).to_dict() == shared.result(name).to_dict()
