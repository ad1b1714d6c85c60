"""``benchmarks/calibration.py --workers N``: calibration releases in one process and on a cluster,
side by side (issue 31). The whole nhefs comparison is the benchmark's; here two releases of a small
table, and the table's reading of differences."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench(shared_data):
    spec = importlib.util.spec_from_file_location("calibration_bench", ROOT / "benchmarks" / "calibration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.DATA = shared_data
    return module


def _run(verdict="high", level="high", bound=0.05, limit=0.012, tests=("exact_matches",), **extra):
    risk = {"level": level, "bound": bound, "bound_by": "exact", "unassessed": [], "tests": list(tests)}
    return {"dataset": "t", "split": "standard", "seed": 0, "kind": "exact@0.01", "materiality": 0.01,
            "verdict": verdict, "risks": {"presence": risk}, "limits": {"exact": limit},
            "limit_k": {"exact": 3}, "levels": {"exact_matches": level},
            "statuses": {"exact_matches": "ok"}, "local_only": [], **extra}


def test_differences_and_differences_by_design(bench):
    same, _ = bench.compare_runs(_run(), _run())
    assert same == []
    differs, _ = bench.compare_runs(_run(), _run(verdict="inconclusive", level="inconclusive", bound=None))
    assert any(d.startswith("verdict") for d in differs) and any("risk presence: level" in d for d in differs)
    differs, _ = bench.compare_runs(_run(), _run(limit=0.013))
    assert differs == ["limits exact: 0.012 vs 0.013"]
    # a test skipped on a cluster by design, and what it changes in one process: not a failure
    local = _run(limit=0.02)
    local["levels"]["rare_qi_echo"], local["statuses"]["rare_qi_echo"] = "high", "ok"
    cluster = _run(local_only=["rare_qi_echo"])
    cluster["statuses"]["rare_qi_echo"] = "skipped"
    differs, by_design = bench.compare_runs(local, cluster, _run())
    assert differs == []
    assert by_design == ["rare_qi_echo (one process only)",
                         "limits exact: 0.02 vs 0.012 (without the one-process tests)"]
    differs, _ = bench.compare_runs(local, cluster, _run(verdict="low"))  # the cluster must equal it
    assert differs == ["verdict low vs high"]
    refused = {"verdict": None, "refused": "evaluate(client=...) cannot take entity_key='p': ..."}
    assert bench.compare_runs(_run(), refused)[0] == []  # by design, not a difference
    text, n_diff = bench.comparison_table([(_run(), _run(), None), (local, cluster, _run()),
                                           (_run(), _run(limit=0.5), None)])
    assert n_diff == 1 and "2 of 3 releases agree (1 of them only after the differences by design" in text


@pytest.mark.metric_on_dask
def test_two_releases_agree_on_a_cluster(bench):
    """diabetes: the null and 1 % exact copies, each in one process and on two workers; a person
    panel's run, which a cluster refuses (entity runs run in one process)."""
    tasks = bench.plan(["diabetes_raw"], 1, ("0.01",), ["fresh", "exact@0.01", "person"],
                       ["exact_matches", "near_copies", "rare_qi_echo"], False)
    pairs = bench.execute_compare(tasks, 2, None, processes=False)
    text, n_diff = bench.comparison_table(pairs)
    assert n_diff == 0, text
    assert [p[0]["kind"] for p in pairs] == ["fresh", "person", "exact@0.01"]  # the nulls first
    person = pairs.pop(1)
    assert person[1]["verdict"] is None and "entity" in person[1]["refused"]  # refused by design
    assert all(p[1]["local_only"] == ["rare_qi_echo"] for p in pairs)  # by design, not a difference
    assert [p[2]["limits"] for p in pairs] == [p[1]["limits"] for p in pairs]  # without rare_qi_echo
