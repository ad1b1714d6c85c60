"""The contract every registered metric keeps (issue 24; scikit-learn's ``test_common.py`` is the model).

For EVERY metric of :func:`synthguard.registry.all_metrics` (a metric added tomorrow is checked
without editing this file), run through the public entry point :func:`synthguard.evaluate` on tiny
generated tables that fit it (mixed-type rows; events with an entity key and context tables for the
entity metrics; a text column for the text metrics):

* the same seed gives the same JSON report (timings aside);
* the order of the rows of original, synthetic and control does not change it (row numbers, which
  point at moved input rows, and timings aside; see ``test_determinism.py``);
* the order of the columns does not change it (byte for byte, timings aside);
* the caller's frames are not mutated (values, index, column order and dtypes);
* the :class:`~synthguard.core.results.MetricResult` survives ``to_dict`` -> JSON -> ``loads``;
* without an input it needs (a control table; the original's rows when only its statistics are
  given) the metric is skipped with a reason naming that input, and the direct registry path
  (:func:`synthguard.run.executor.run_metric`) refuses with the same kind of reason.

A metric that cannot run here (an optional extra not installed) is skipped with pytest's reason;
one that breaks an invariance is marked ``xfail`` below with the precise reason (``BROKEN``).
Parameters are the metric's own, made cheap only where the defaults are slow on any table
(``CHEAP``); every name in ``CHEAP`` must be a declared parameter.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pytest

import synthguard
from synthguard.errors import MetricError
from synthguard.registry import Context, MetricSpec, all_metrics
from synthguard.run.executor import run_metric

from ..conftest import mixed_frame
from ..unit.metrics.text.conftest import ORIGINAL_TEXTS, SYNTHETIC_TEXTS
from .test_determinism import _is_row_number, _normalise

SEED = 11
SPECS: dict[str, MetricSpec] = {s.name: s for s in all_metrics()}

#: Parameters that keep a metric's run under a second on the contract tables (the defaults are
#: sized for real data: hundreds of bootstrap resamples, 100 trees, 999 permutations).
CHEAP: dict[str, dict[str, Any]] = {
    "closest_distance_mia": {"n_boot": 50},
    "dcr": {"n_boot": 50},
    "nndr": {"n_boot": 50},
    "distinguishability": {"n_estimators": 10, "n_boot": 50, "n_jobs": 1},
    "membership_attacks": {"n_perm": 99},
    "ml_utility_classification": {"target": "cat", "n_estimators": 5},
    "ml_utility_regression": {"target": "num", "n_estimators": 5},
    "ml_utility_cluster": {"n_clusters": [2, 3]},
    # the rule-based recogniser needs no model download; no disk cache (the run's memo only)
    "text_entities": {"backend": "rules", "cache": False},
    "text_nominals": {"backend": "rules", "cache": False},
    "text_style_outliers": {"cache": False, "epochs": 2, "vector_size": 10},
}

#: Metrics that break an invariance today: {(metric, check): reason}. Each is a bug to fix, listed
#: with what differs; the test is xfail(strict=True), so a fix shows up as XPASS and must remove it.
BROKEN: dict[tuple[str, str], str] = {}

CHECKS = ("seed", "rows", "columns", "mutation", "json")


def _kind(spec: MetricSpec) -> str:
    if spec.func.__module__.startswith("synthguard.metrics.entity."):
        return "entity"
    if spec.family == "text":
        return "text"
    return "table"


# ------------------------------------------------------------------------------------------- inputs
#: the text-metric tests' texts (known entities and copies), plus new ones for the release and control
TEXTS = [*ORIGINAL_TEXTS, *(t for t in SYNTHETIC_TEXTS if t not in ORIGINAL_TEXTS and not t.endswith("really.")),
         "The cookies were soft and sweet, exactly like the ones from the bakery downtown."]


def _events(n_persons: int, seed: int, first_id: int) -> pd.DataFrame:
    """1 to 4 events per person (mixed-type columns), ``pid`` the entity key."""
    k = np.random.default_rng(seed).integers(1, 5, n_persons)
    df = mixed_frame(int(k.sum()), seed)
    df.insert(0, "pid", np.repeat(np.arange(first_id, first_id + n_persons), k))
    return df


def _persons(events: pd.DataFrame, seed: int) -> pd.DataFrame:
    ids = events["pid"].unique()
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"pid": ids, "region": rng.choice(list("xyz"), len(ids)),
                         "age": rng.integers(20, 80, len(ids))})


@dataclass
class Case:
    """One metric's inputs: frames by role (``None`` = not given) and the other ``evaluate`` keywords."""

    frames: dict[str, pd.DataFrame | None]
    metadata: dict[str, Any] | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)


def _case(spec: MetricSpec) -> Case:
    kind = _kind(spec)
    if kind == "entity":
        o = _events(20, 0, 0)
        s = pd.concat([o.iloc[:15], _events(15, 1, 100)], ignore_index=True)  # 15 copied events
        c = _events(20, 2, 200)
        return Case({"original": o, "synthetic": s, "control": c,
                     "original_context": _persons(o, 3), "synthetic_context": _persons(s, 4),
                     "control_context": _persons(c, 5)},
                    kwargs={"entity_key": "pid", "sequence_key": "when"})
    if kind == "text":
        def with_text(texts: list[str], seed: int) -> pd.DataFrame:
            return mixed_frame(len(texts), seed).assign(note=texts)
        o = with_text(TEXTS[:8], 0)
        s = pd.concat([o.iloc[[0, 6]], with_text(TEXTS[8:], 1)], ignore_index=True)  # two copies
        c = with_text(TEXTS[4:10], 2)
        return Case({"original": o, "synthetic": s, "control": c}, {"text_columns": ["note"]})
    o = mixed_frame(60, 0)
    s = pd.concat([o.iloc[:12], mixed_frame(48, 1)], ignore_index=True)  # 12 exact copies
    c = mixed_frame(60, 2)
    return Case({"original": o, "synthetic": s, "control": c},
                {"quasi_identifiers": ["cat", "flag"], "sensitive": ["int"]})


def _params(spec: MetricSpec) -> dict[str, Any]:
    params = dict(CHEAP.get(spec.name, {}))
    declared = {p.name for p in spec.params}
    assert set(params) <= declared, f"CHEAP names undeclared parameters of {spec.name}"
    return params


def _evaluate(spec: MetricSpec, case: Case, frames: dict[str, pd.DataFrame | None] | None = None,
              **extra: Any) -> synthguard.Report:
    frames = case.frames if frames is None else frames
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return synthguard.evaluate(**frames, metadata=case.metadata, metrics={spec.name: _params(spec)},
                                   seed=SEED, **case.kwargs, **extra)


def _shuffled(df: pd.DataFrame | None, seed: int) -> pd.DataFrame | None:
    return None if df is None else df.sample(frac=1, random_state=seed).reset_index(drop=True)


def _reversed(df: pd.DataFrame | None) -> pd.DataFrame | None:
    return None if df is None else df[df.columns[::-1]]


# ------------------------------------------------------------------------------------ JSON forms
def _without(obj: Any, drop: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _without(v, drop) for k, v in obj.items() if not drop(k)}
    if isinstance(obj, list):
        return [_without(v, drop) for v in obj]
    return obj


def _report_json(rep: synthguard.Report) -> dict[str, Any]:
    """The report's JSON without the timings and the input fingerprints (a frame's hash covers its
    row and column order; the labels name the frames)."""
    d = json.loads(rep.to_json())
    d.pop("inputs", None)
    return _without(d, lambda k: k == "seconds")


def _first_difference(a: Any, b: Any, path: str = "$") -> str | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{path}.{k} only in {'the first' if k in a else 'the second'}"
            got = _first_difference(a[k], b[k], f"{path}.{k}")
            if got:
                return got
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            got = _first_difference(x, y, f"{path}[{i}]")
            if got:
                return got
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def _assert_same(a: dict[str, Any], b: dict[str, Any], what: str) -> None:
    if json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True):
        pytest.fail(f"{what} changed the JSON, first at {_first_difference(a, b)}")


# -------------------------------------------------------------------------------- the base runs
@dataclass
class Base:
    case: Case
    pristine: dict[str, pd.DataFrame | None]
    report: synthguard.Report


_BASE: dict[str, Base] = {}


def _base(name: str) -> Base:
    """The metric's run on its contract inputs (once per session), or a skip with the reason."""
    spec = SPECS[name]
    if name not in _BASE:
        case = _case(spec)
        pristine = {k: None if v is None else v.copy(deep=True) for k, v in case.frames.items()}
        _BASE[name] = Base(case, pristine, _evaluate(spec, case))
    base = _BASE[name]
    entry = base.report.to_dict()["metrics"][name]
    if entry["status"] != "ok":
        reason = entry.get("reason") or entry.get("error") or ""
        if entry["status"] == "skipped" and ("install" in reason or "pip " in reason):
            pytest.skip(f"{name}: {reason}")  # an optional extra this environment lacks
        pytest.fail(f"{name} does not run on its contract inputs: {entry['status']}: {reason}")
    return base


def _param(check: str) -> list[Any]:
    out = []
    for name in SPECS:
        reason = BROKEN.get((name, check))
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        out.append(pytest.param(name, id=name, marks=marks))
    return out


# ------------------------------------------------------------------------------------ the contract
@pytest.mark.parametrize("name", _param("seed"))
def test_same_seed_gives_the_same_json(name):
    base = _base(name)
    again = _evaluate(SPECS[name], base.case)
    _assert_same(_report_json(base.report), _report_json(again), "a second run with the same seed")


@pytest.mark.parametrize("name", _param("rows"))
def test_row_order_of_every_input_does_not_change_the_json(name):
    base = _base(name)
    shuffled = {k: _shuffled(v, i + 1) for i, (k, v) in enumerate(base.case.frames.items())}
    rep = _evaluate(SPECS[name], base.case, shuffled)
    a = _normalise(_without(_report_json(base.report), _is_row_number))
    b = _normalise(_without(_report_json(rep), _is_row_number))
    _assert_same(a, b, "shuffling the rows of every input")


@pytest.mark.parametrize("name", _param("columns"))
def test_column_order_does_not_change_the_json(name):
    base = _base(name)
    rev = {k: _reversed(v) for k, v in base.case.frames.items()}
    rep = _evaluate(SPECS[name], base.case, rev)
    _assert_same(_report_json(base.report), _report_json(rep), "reversing the columns of every input")


@pytest.mark.parametrize("name", _param("mutation"))
def test_inputs_are_not_mutated(name):
    base = _base(name)
    for role, before in base.pristine.items():
        after = base.case.frames[role]
        if before is None:
            continue
        assert list(after.columns) == list(before.columns), f"{name} reordered the columns of {role}"
        assert after.dtypes.to_dict() == before.dtypes.to_dict(), f"{name} changed dtypes of {role}"
        pd.testing.assert_frame_equal(after, before, check_exact=True, obj=f"{name}: {role}")


@pytest.mark.parametrize("name", _param("json"))
def test_result_survives_a_json_round_trip(name):
    res = _base(name).report.result(name)
    assert res is not None
    d = res.to_dict()
    text = json.dumps(d, allow_nan=False)  # strict JSON: no NaN/Infinity, no numpy scalars
    assert json.loads(text) == d
    assert json.dumps(json.loads(text), sort_keys=True) == json.dumps(d, sort_keys=True)


# ----------------------------------------------------------------- missing inputs: skipped, with why
def _missing_case(spec: MetricSpec) -> tuple[str, str] | None:
    """(input to leave out, word its reason must contain) for ``spec``, or None."""
    if "control" in spec.needs:
        return "control", "control"
    if not spec.from_stats and _kind(spec) == "table":
        return "original", "original rows"
    return None


def _missing_params() -> list[Any]:
    out = []
    for name, spec in SPECS.items():
        if _missing_case(spec) is None:
            why = ("also runs from the original's statistics" if spec.from_stats else
                   f"its {'events' if _kind(spec) == 'entity' else 'text'} tables have no "
                   "statistics-only form")
            reason = f"{name} needs no control and {why}: no input can be left out"
            out.append(pytest.param(name, id=name, marks=pytest.mark.skip(reason=reason)))
        else:
            out.append(pytest.param(name, id=name))
    return out


@pytest.mark.parametrize("name", _missing_params())
def test_skipped_with_a_reason_when_an_input_is_missing(name):
    spec = SPECS[name]
    role, word = _missing_case(spec)
    case = _case(spec)
    frames = dict(case.frames)
    extra: dict[str, Any] = {}
    if role == "control":
        frames["control"] = None
        frames.pop("control_context", None)
    else:
        from synthguard.run.profile import profile

        extra["original_stats"] = profile(frames["original"], case.metadata, seed=SEED)
        frames["original"] = None
        case = Case(frames, None, case.kwargs)  # the profile carries the schema and metadata
    entry = _evaluate(spec, case, frames, **extra).to_dict()["metrics"][name]
    assert entry["status"] == "skipped", entry
    assert word in entry["reason"], entry["reason"]
    if role == "control":  # the direct path (facades, the PETsARD evaluator) says the same
        ctx = Context.from_frames(frames["original"], frames["synthetic"], None, case.metadata,
                                  seed=SEED).for_metric(spec)
        with pytest.raises(MetricError, match="control"):
            run_metric(spec, ctx, spec.resolve_params(_params(spec)))


def test_every_check_lists_every_metric():
    """The parametrisation follows the registry: no metric can be left out by a list here."""
    assert len(SPECS) >= 40
    assert set(CHEAP) <= set(SPECS), sorted(set(CHEAP) - set(SPECS))
    assert {m for m, _ in BROKEN} <= set(SPECS) and {c for _, c in BROKEN} <= set(CHECKS)


@pytest.mark.parametrize("name", list(SPECS))
def test_evidence_keeps_to_what_the_card_declares(name):
    """The test a metric states answers the risk its card names and sees no leak type its card does
    not declare; a privacy card names its risk; a metric without a risk states no evidence."""
    spec = SPECS[name]
    res = _base(name).report.result(name)
    ev = res.evidence
    if ev is None:
        return
    assert spec.risk is not None, f"{name} states evidence but its card names no risk"
    assert set(ev.sees) <= set(spec.sees), f"{name} claims to see {ev.sees}, its card {spec.sees}"
    if ev.risk is not None and spec.risk != "informative":
        assert ev.risk == spec.risk, f"{name}: evidence answers {ev.risk}, its card {spec.risk}"


@pytest.mark.parametrize("name", list(SPECS))
def test_a_value_lies_in_the_interval_printed_beside_it(name):
    """The interval the metric table prints beside a value is that value's (``MetricResult.ci``),
    and the evidence's interval is its excess's: a reader never sees a value outside its own
    interval (before: near_copies, close_neighbours and qi_linkage printed the training share
    beside the interval of its excess over the control)."""
    res = _base(name).report.result(name)
    value = res.value if isinstance(res.value, (int, float)) else None
    if res.ci is not None and value is not None and np.isfinite(value) and None not in res.ci:
        lo, hi = (float(x) for x in res.ci)
        assert lo - 1e-12 <= value <= hi + 1e-12, f"{name}: value {value} outside its interval {res.ci}"
    ev = res.evidence
    if ev is not None and np.isfinite(ev.effect) and ev.effect_ci and np.isfinite(ev.effect_ci).all():
        assert ev.effect_ci[0] - 1e-12 <= ev.effect <= ev.effect_ci[1] + 1e-12, (name, ev.effect, ev.effect_ci)


@pytest.mark.parametrize("name", list(SPECS))
def test_report_model_reads_back_its_own_json(name):
    """The typed report model round-trips: every risk, test and detection limit of the verdict
    reads back from its JSON to the same JSON."""
    from synthguard.core.report_model import HeadlineLimit, LeakLimit, RiskRow, TestRow

    v = _base(name).report.to_dict()["verdict"]
    for row in v["risks"]:
        assert RiskRow.from_dict(row).to_dict() == row
    for row in v["tests"]:
        assert TestRow.from_dict(row).to_dict() == row
    for row in v["detection_limits"].values():
        assert LeakLimit.from_dict(row).to_dict() == row
    if v["detection_limit"] is not None:
        assert HeadlineLimit.from_dict(v["detection_limit"]).to_dict() == v["detection_limit"]
