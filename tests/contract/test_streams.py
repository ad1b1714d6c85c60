"""One random stream per metric, however it is called (issue 32): for EVERY registered metric, on its
contract inputs and the same seed, ``synthguard.evaluate``, a named run of it, the executor's
library path (:func:`synthguard.run.executor.run_metric`, what the facades use) and a direct call of
the registered function (``metric(ctx, **params)``) give the same numbers.

Compared: the result's JSON without what only a run decides (the risk level and reason: the verdict
sets them from all the tests) and without row numbers and the listing order of equally-ranked
records (the direct call's tables are in input order, a run's in canonical order; see
``test_determinism.py``). A composite metric (one that runs others, e.g. ``anonymeter``) refuses the
direct call with a reason naming the executor, and is compared on the other three paths.
"""

from __future__ import annotations

import importlib
import json
import warnings
from typing import Any

import pytest

import synthguard
from synthguard.core.results import MetricResult
from synthguard.errors import MetricError
from synthguard.run.executor import run_metric

from ..helpers import context
from .test_determinism import _normalise
from .test_metric_contract import SEED, SPECS, _base, _params

RUN_ONLY = ("risk_level", "risk_reason", "reference_level", "name")


#: What the verdict sets on a result's evidence from all the tests of a run (level, adjusted p-value).
RUN_ONLY_EVIDENCE = ("level", "p_adjusted")


def _numbers(res: MetricResult) -> dict[str, Any]:
    d = json.loads(json.dumps(res.to_dict(), default=str))
    for key in RUN_ONLY:
        d.pop(key, None)
    for key in RUN_ONLY_EVIDENCE:
        (d.get("evidence") or {}).pop(key, None)
    return _normalise(d)


def _registered(name: str):
    """The function the metric's module exports (what a user imports and calls)."""
    spec = SPECS[name]
    fn = getattr(importlib.import_module(spec.func.__module__), spec.func.__name__)
    assert getattr(fn, "spec", None) is spec, f"{name}: the module does not export its registered function"
    return fn


def _first_difference(a: Any, b: Any, path: str = "$") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{path}.{k} only on one side"
            if a[k] != b[k]:
                return _first_difference(a[k], b[k], f"{path}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path}: {a!r} vs {b!r}"


def _same(want: dict[str, Any], got: dict[str, Any], path: str, name: str) -> None:
    if json.dumps(want, sort_keys=True) != json.dumps(got, sort_keys=True):
        pytest.fail(f"{name}: {path} draws other numbers than evaluate, first at "
                    f"{_first_difference(want, got)}")


@pytest.mark.parametrize("name", list(SPECS))
def test_every_way_of_calling_a_metric_draws_the_same_numbers(name):
    spec = SPECS[name]
    base = _base(name)  # synthguard.evaluate (skips when an optional extra is missing)
    want = _numbers(base.report.result(name))
    params = _params(spec)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        named = synthguard.evaluate(**base.case.frames, metadata=base.case.metadata, seed=SEED,
                                    metrics=[{"name": "again", "metric": name, **params}],
                                    **base.case.kwargs).result("again")
    assert named is not None, f"{name}: the named run did not run"
    _same(want, _numbers(named), "a named run", name)

    frames = base.case.frames
    entity = {k: v for k, v in base.case.kwargs.items()}
    for role in ("original_context", "synthetic_context", "control_context"):
        if frames.get(role) is not None:
            entity[role] = frames[role]
    ctx = context(frames["original"], frames["synthetic"], frames.get("control"), base.case.metadata,
                  metric=spec, seed=SEED, **entity)
    library = run_metric(spec, ctx.for_metric(spec), spec.resolve_params(params))
    _same(want, _numbers(library), "the executor's library path (run_metric, the facades)", name)

    try:
        direct = _registered(name)(ctx, **params)
    except MetricError as exc:  # a composite metric runs its parts through the executor only
        assert "run it through synthguard.evaluate" in str(exc), exc
        return
    _same(want, _numbers(direct), "a direct call of the registered function", name)


def test_a_direct_call_reads_its_stream_from_the_metric_name_not_from_the_context():
    """The regression behind the test above: a context built by hand has no metric name; the
    registered function gives the call its metric's stream (closest_distance_mia, seed 0: the
    same interval directly and through evaluate)."""
    from synthguard.metrics.privacy.closest_distance_mia import closest_distance_mia

    from .test_metric_contract import _case

    spec = SPECS["closest_distance_mia"]
    case = _case(spec)
    f = case.frames
    ctx = context(f["original"], f["synthetic"], f["control"], case.metadata, seed=0)
    assert ctx.metric == ""
    direct = closest_distance_mia(ctx, n_boot=50)
    run = synthguard.evaluate(f["original"], f["synthetic"], f["control"], case.metadata,
                              metrics={"closest_distance_mia": {"n_boot": 50}}, seed=0)
    assert direct.ci == run.result("closest_distance_mia").ci
