"""``--preset privacy`` on a Dask cluster gives one process's verdict on calibration releases
(issue #31): the same risk levels, bounds, intervals and detection limits, every tabular metric of
the preset equal entry by entry (singling out's two attacks included: their queries are generated
and counted through the backend's questions), on a small real table of the calibration suite with
a leaking release."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from synthguard import evaluate
from synthguard.calibration import PUBLIC_TABLE_METADATA, family_release, sized_split
from synthguard.registry import get_metric
from synthguard.run.cluster import distributed_metrics
from synthguard.run.config import PRESETS

from ...helpers import without_seconds
from .test_distributed_equality import NAMED_RUNS

pytest.importorskip("dask.dataframe", reason="dask is not installed: pip install 'synthguard[dask]'")
pytest.importorskip("distributed", reason="distributed is not installed: pip install 'synthguard[dask]'")

#: the privacy preset's tabular metrics of synthguard itself (the text metrics need a text column,
#: these tables have none; a plugin's metric is its author's)
PRESET = tuple(m for m in PRESETS["privacy"] if not m.startswith("text_")
               and get_metric(m).func.__module__.startswith("synthguard."))
#: the preset's metrics that run in one process only: none since singling out runs distributed
LOCAL_ONLY: set[str] = set()
META = PUBLIC_TABLE_METADATA["acs12"]
#: small enough for CI: the forest of ``distinguishability`` and the attacks on a few hundred rows
PARAMS = {"distinguishability": {"n_estimators": 10, "n_permutations": 1, "n_boot": 20, "n_jobs": 1},
          "membership_attacks": {"n_perm": 99}}


def _release(shared_data) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """acs12 (13 columns), 300 training and 300 control records; a release of 300 fresh rows with
    20 % of the training records copied into it."""
    parts = sized_split(pd.read_csv(shared_data / "acs12.csv"), 0, 300)
    parts = {**parts, "fresh": parts["fresh"].iloc[:300]}
    return parts, family_release("exact", parts, 0.2, 0, metadata=META).release


def _dumps(value) -> str:
    return json.dumps(without_seconds(value), sort_keys=True, default=str)


def test_every_tabular_metric_of_the_privacy_preset_runs_distributed():
    assert set(PRESET) - set(distributed_metrics()) == LOCAL_ONLY
    assert {"singling_out_univariate", "singling_out_multivariate"} <= set(PRESET)


def test_every_metric_the_dask_backend_supports_is_compared_with_one_process():
    """The preset's test below and the named runs of test_distributed_equality.py between them run
    every metric with a distributed form (each also has a test of its own there)."""
    named = {m["metric"] for m in NAMED_RUNS}
    assert (set(PRESET) - LOCAL_ONLY) | named == set(distributed_metrics())


def test_privacy_preset_on_dask_gives_one_processs_verdict_on_a_calibration_release(dask_client, shared_data):
    """Every metric of the preset that runs distributed, one process against a cluster: each entry
    equal, and the whole verdict (levels, bounds, detection limits, the joint test, what is not
    assessed, every risk's drop-and-retest) and the records export (the release rows behind the
    findings). About four minutes on two cores (the drop-and-retest runs the preset's tests a
    second time): a cluster's graphs cost seconds per metric at any size (the null releases of the
    calibration suite run in benchmarks/calibration.py)."""
    parts, release = _release(shared_data)
    metrics = {m: PARAMS.get(m, {}) for m in PRESET if m not in LOCAL_ONLY}
    single = evaluate(parts["original"], release, parts["control"], META, metrics=metrics, seed=3)
    dist = evaluate(parts["original"], release, parts["control"], META, metrics=metrics, seed=3,
                    client=dask_client)
    one, many = single.to_dict(), dist.to_dict()
    assert {n: e["status"] for n, e in many["metrics"].items()} == {n: "ok" for n in metrics}
    for name in metrics:
        assert _dumps(one["metrics"][name]) == _dumps(many["metrics"][name]), name
    # the whole verdict: levels, bounds, detection limits, the joint test, what is not assessed,
    # and the drop-and-retest (the release rows behind the findings listed on the driver, the
    # release without those to drop re-tested on the cluster)
    assert any(r.get("drop_retest") for r in one["verdict"]["risks"])
    assert _dumps(one["verdict"]) == _dumps(many["verdict"])
    assert _dumps(one["records"]) == _dumps(many["records"])
    assert _dumps(one["actions"]["drop_retest"]) == _dumps(many["actions"]["drop_retest"])
    assert all(r["level"] != "not assessed" for r in many["verdict"]["risks"])  # every criterion
    risk = next(r for r in many["verdict"]["risks"] if r["risk"] == "singling_out")
    assert {"singling_out_univariate", "singling_out_multivariate"} <= set(risk["tests"])  # its attacks
    assert dist.verdict.level == "high"
