"""The memory savings of issue 15 change no number (docs/performance.md, "Memory").

* ``evaluate`` reorders the tables itself and hands them to ``run_tables(canonical=True)``: the same
  report as ``run_tables`` reordering them;
* ``release_free_memory`` (called after each metric) frees nothing in use;
* the anonymeter trio's blocks are sliced, then reordered: the same values as the reordered copy of
  the whole table they replace.
"""

from __future__ import annotations

import json

import numpy as np

import synthguard
from synthguard.api import report_of
from synthguard.data.tables import prepare_tables
from synthguard.engine.memory import release_free_memory
from synthguard.metrics.anonymeter._common import block_of, canonical
from synthguard.registry import Context
from synthguard.run.config import build_config
from synthguard.run.options import EvaluateOptions
from synthguard.run.runner import run_tables


def _json(rep) -> str:
    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if k != "seconds"}
        if isinstance(o, list):
            return [strip(v) for v in o]
        return o
    return json.dumps(strip(rep.to_dict()), sort_keys=True)


def test_evaluate_equals_run_tables_reordering_itself(demo_data, demo_metadata):
    small = {k: v.iloc[:120].iloc[::-1].reset_index(drop=True) for k, v in demo_data.items()}
    args = (small["original"], small["leaky"], small["control"])
    metrics = ["exact_matches", "dcr", "singling_out_univariate", "linkability"]
    a = synthguard.evaluate(*args, metadata=demo_metadata, metrics=metrics, seed=3)
    tables = prepare_tables(*args, demo_metadata)
    b = report_of(run_tables(tables, build_config(metrics, None, None), EvaluateOptions(seed=3)))  # reorders
    assert _json(a) == _json(b)
    assert a.to_dict()["metrics"]["exact_matches"]["result"]["value"] > 0  # the leaky release copies rows


def test_release_free_memory_keeps_live_data():
    x = np.arange(3_000_000, dtype=np.float64)  # 24 MB: above malloc's mmap threshold
    y = [np.full(1000, i, dtype=np.int64) for i in range(200)]  # small heap blocks
    del y[::2]
    release_free_memory()
    release_free_memory()  # idempotent
    assert x.sum() == 3_000_000 * 2_999_999 / 2
    assert [int(v[0]) for v in y[:3]] == [1, 3, 5]


def test_trio_block_is_the_reordered_slice(demo_data, demo_metadata):
    ctx = Context.from_frames(demo_data["original"].iloc[:200], demo_data["leaky"].iloc[:200],
                              demo_data["control"].iloc[:100], demo_metadata)
    cols = list(ctx.tables.schema.tabular_columns())
    pick = cols[::-2]  # reversed order, numeric and categorical mixed
    for role in ctx.tables.roles:
        canon = canonical(ctx, role, cols)
        got = block_of(ctx, role, pick, canon)
        want = ctx.encoded.block(role).take(canon.rows).select(pick)  # the copy it replaces
        assert got.num_columns == want.num_columns and got.cat_columns == want.cat_columns
        np.testing.assert_array_equal(got.num, want.num)
        np.testing.assert_array_equal(got.cat, want.cat)



def test_a_run_asks_no_huge_pages_and_gives_the_callers_setting_back(demo_data, demo_metadata, monkeypatch):
    """``evaluate`` runs with NumPy's huge-page advice off (less page zeroing; only the time
    changes) and restores the caller's setting after, whatever it was."""
    from synthguard.engine import memory
    from synthguard.run import runner

    switch = memory._hugepage_switch()
    assert switch is not None  # NumPy 1.24 and 2.x both have it
    during = []
    real_run_tables = runner.run_tables

    def watched(*args, **kwargs):
        now = switch(False)  # reads the setting (and leaves it off, as it is during a run)
        switch(now)
        during.append(bool(now))
        return real_run_tables(*args, **kwargs)

    monkeypatch.setattr(runner, "run_tables", watched)
    small = {k: v.iloc[:80] for k, v in demo_data.items()}
    before = switch(True)
    try:
        for caller in (True, False):
            switch(caller)
            synthguard.evaluate(small["original"], small["leaky"], small["control"],
                                metadata=demo_metadata, metrics=["exact_matches"], progress=False)
            assert bool(switch(caller)) is caller  # the caller's setting is back
    finally:
        switch(before)
    assert during == [False, False]
