"""Running one metric in a test the way the package does: through the one executor.

Tests call a metric through :func:`run` (or build its context with :func:`context` and call
:func:`synthguard.run.executor.run_metric`), never by building a context by hand and calling the
metric's function: the executor gives the metric its random stream, thresholds, the missing-input
check and the parts of a composite metric, exactly as :func:`synthguard.evaluate` does, so a test
sees the numbers a user sees.

Examples
--------
>>> import pandas as pd
>>> o = pd.DataFrame({"a": range(40), "b": ["x", "y"] * 20})
>>> run("exact_matches", o, o.head(10)).value
1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synthguard.core.results import MetricResult
from synthguard.registry import Context, MetricSpec, get_metric
from synthguard.run.executor import run_metric

__all__ = ["context", "counted_row_hashes", "run"]


def context(original: Any, synthetic: Any, control: Any = None, metadata: Any = None, *,
            metric: Any = None, seed: int = 0, backend: str = "auto",
            strict_control: bool = True, canonical: bool = True, entity_key: str | None = None,
            sequence_key: str | None = None, original_context: Any = None,
            synthetic_context: Any = None, control_context: Any = None) -> Context:
    """The context a run gives ``metric`` on these inputs (tables in the canonical order a run
    uses; ``canonical=False`` keeps the input order, for per-record arrays read by input position).

    With ``entity_key`` (or entity metadata), the context is the entity run's: one row per entity
    for the metrics a run measures per entity (privacy families, entity-only metrics), the event
    tables for the others, as :func:`synthguard.run.runner.run_tables` does.
    """
    if entity_key is None and sequence_key is None and original_context is None:
        return Context.from_frames(original, synthetic, control, metadata, seed=seed,
                                   backend=backend, strict_control=strict_control,
                                   canonical=canonical)
    from dataclasses import replace

    from synthguard.data.encoding import EncodedView
    from synthguard.data.entities import build_entity_run, metric_unit, prepare_entities

    data = prepare_entities(original, synthetic, control, metadata, entity_key=entity_key,
                            sequence_key=sequence_key, original_context=original_context,
                            synthetic_context=synthetic_context, control_context=control_context)
    ent = build_entity_run(data)
    rows = ent.rows.in_canonical_order()  # as run_tables orders them
    ctx = Context(tables=rows, encoded=EncodedView(rows), seed=seed, backend=backend, entities=ent)
    spec = None if metric is None else _spec(metric)
    if spec is not None and metric_unit(spec) == "entity":
        ctx = replace(ctx, tables=ent.entities, encoded=EncodedView(ent.entities))
    return ctx


def run(metric: Any, original: Any = None, synthetic: Any = None, control: Any = None,
        metadata: Any = None, *, ctx: Context | None = None, seed: int = 0,
        thresholds: Mapping[str, float] | None = None, **params: Any) -> MetricResult:
    """``metric`` (a name, a card, or the registered function) run through the executor on the
    inputs, or on ``ctx`` (:func:`context`, or any context a test builds), with ``params``
    validated as a run validates them (unknown names are errors, defaults filled in).

    Returns its result (records pointing at the input rows), or raises what a run reports: the
    :class:`~synthguard.errors.MetricError` or ``ConfigError`` saying why it was skipped, or the
    exception it failed with. ``thresholds`` override the card's; a ``ctx`` already made for this
    metric (:meth:`Context.for_metric`) keeps its own.
    """
    spec = _spec(metric)
    if ctx is None:
        ctx = context(original, synthetic, control, metadata, metric=spec, seed=seed)
    if thresholds is not None:
        ctx = ctx.for_metric(spec, thresholds)
    return run_metric(spec, ctx, spec.resolve_params(params))


def _spec(metric: Any) -> MetricSpec:
    if isinstance(metric, MetricSpec):
        return metric
    if isinstance(metric, str):
        return get_metric(metric)
    spec = getattr(metric, "spec", None)
    if not isinstance(spec, MetricSpec):
        raise TypeError(f"not a registered metric: {metric!r}")
    return spec


def without_seconds(obj: Any) -> Any:
    """``obj`` without its ``seconds`` entries at any depth (wall times, never numbers of a result):
    two reports of the same run compared."""
    if isinstance(obj, dict):
        return {k: without_seconds(v) for k, v in obj.items() if k != "seconds"}
    if isinstance(obj, list):
        return [without_seconds(v) for v in obj]
    return obj


def unique_value_excess_by_definition(frames: Mapping[str, Any], column: str, *,
                                      missing_is_value: bool = False) -> float:
    """The unique-value excess of ``column`` written out on pandas frames (``{role: frame}``), as a
    test's reference: the share of training records whose value no other real (training or
    control) record holds and the release holds, minus that share of control records; missing is
    no value (``missing_is_value=True``: the wrong count that takes the missing values for one,
    for a test to show it would tell them apart). Values compare as the encoder's categories do
    (1 and 1.0 one value, ``"1"`` another)."""
    import pandas as pd

    from synthguard.data.coarsening import category_text

    def keys(s: pd.Series) -> pd.Series:
        # the text of a category (1 and 1.0 one text) tagged by its kind ("1" stays apart from 1)
        text = s.map(lambda v: None if pd.isna(v) else
                     ("s:" if isinstance(v, str) else "v:") + category_text(v))
        return text.fillna("<missing>") if missing_is_value else text

    o, c, s = (keys(frames[r][column].astype(object)) for r in ("original", "control", "synthetic"))
    pooled = pd.concat([o, c], ignore_index=True)
    counts = pooled.value_counts(dropna=True)
    hit = (pooled.map(counts).eq(1) & pooled.isin(set(s.dropna()))).to_numpy()
    return float(hit[:len(o)].mean() - hit[len(o):].mean())


#: The columns of :func:`excess_people`.
EXCESS_META = {"columns": {"x": {"sdtype": "numerical"}, "c": {"sdtype": "categorical"},
                           "k": {"sdtype": "categorical"}}}


def excess_people(r: Any, n: int) -> Any:
    """Rows with repeated and missing values: a numerical column, categories written as numbers
    (1 and 1.0 one category) and categories written as text ("1" among them); ``r`` a NumPy
    generator. The unique-value excess tests' tables (:data:`EXCESS_META`)."""
    import numpy as np
    import pandas as pd

    x = r.integers(0, 3 * n, n).astype(float)
    x[r.random(n) < 0.1] = np.nan
    x[r.random(n) < 0.05] = -0.0
    c = r.choice(np.array([1, 1.0, 2, 2.0, 3.5] + list(range(10, 10 + n)), dtype=object), n)
    c[r.random(n) < 0.1] = None
    k = r.choice(np.array(["1", "1.0", "b"] + [f"k{i}" for i in range(n)], dtype=object), n)
    k[r.random(n) < 0.1] = None
    return pd.DataFrame({"x": x, "c": pd.Series(c, dtype=object), "k": pd.Series(k, dtype=object)})


def one_real_missing(original: Any, control: Any, synthetic: Any, at: tuple[str, int]) -> None:
    """Every real record holds each value but one (role and row ``at``), missing them all; the
    release's first row misses them too."""
    import numpy as np

    fill = {"x": -1.0, "c": 99, "k": "filled"}
    for f in (original, control):
        for col, v in fill.items():
            f[col] = f[col].where(f[col].notna(), v)
    frame = original if at[0] == "original" else control
    frame.loc[at[1], list(fill)] = [np.nan, None, None]
    synthetic.loc[0, list(fill)] = [np.nan, None, None]


def counted_row_hashes(monkeypatch: Any, *modules: Any) -> list[int]:
    """Count the calls of :func:`synthguard.data.hashing.row_hashes` made through ``modules``
    (each module's own name for it, replaced for the test; a module that does not import it gets
    the name, so a later import of it there is counted too): the returned list gets each call's
    row count."""
    from synthguard.data import hashing

    calls: list[int] = []
    real = hashing.row_hashes

    def row_hashes(frame: Any) -> Any:
        calls.append(len(frame))
        return real(frame)

    for module in modules:
        monkeypatch.setattr(module, "row_hashes", row_hashes, raising=False)
    return calls


def coded_table(keys: range, rng: Any, *, x_values: int = 4, noise: bool = True) -> Any:
    """A table whose ``code`` is a whole number unique per row (``7 * key + 3``: no row numbers),
    with ``x`` (``x_values`` integers), ``y`` (three labels) and, with ``noise``, ``z`` (a rounded
    normal): the re-test's identifier cases (a code shared only through copied rows)."""
    import pandas as pd

    n = len(keys)
    out = {"code": [7 * i + 3 for i in keys], "x": rng.integers(0, x_values, n), "y": rng.choice(list("abc"), n)}
    if noise:
        out["z"] = rng.normal(size=n).round(1)
    return pd.DataFrame(out)


def coded_copies(seed: int = 1, n: int = 300, copies: int = 40) -> tuple[Any, Any, Any]:
    """``(original, release, control)`` of :func:`coded_table` rows without noise: ``n`` training
    and ``n`` control records, a release of ``n`` fresh rows and the first ``copies`` training
    rows copied verbatim. The code is shared with the training table only through the copies: the
    run compares it, the release without the copies reads it as a surrogate identifier."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    original = coded_table(range(n), rng, noise=False)
    control = coded_table(range(1000, 1000 + n), rng, noise=False)
    release = pd.concat([coded_table(range(2000, 2000 + n), rng, noise=False),
                         original.iloc[:copies]], ignore_index=True)
    return original, release, control
