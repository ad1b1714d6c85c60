"""What the report draws for ``accuracy``: its headline, per-column overlay charts, the association
heatmap and worst-first tables, as typed :class:`~synthguard.core.results.Section` data built from
the numbers the metric puts in its ``details`` (the report itself never reads ``details``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...core.results import REAL_HOLDOUT, Chart, Headline, Section

#: Caps that keep a 100-column report fast to open (everything else stays in the JSON).
MAX_COLUMN_CHARTS = 24
MAX_PAIR_ROWS = 100
MAX_TRIPLE_ROWS = 50
LEVELS = ("univariate", "bivariate", "trivariate")


def shortfall(row: Mapping[str, Any]) -> float:
    """How far a column, pair or triple falls short: ceiling - accuracy (1 - accuracy without a
    ceiling)."""
    acc = row.get("accuracy")
    ceil = row.get("control_accuracy")
    return (float(ceil) if ceil is not None else 1.0) - (0.0 if acc is None else float(acc))


def worst_first(rows: Sequence[Any], name: Any) -> list[Mapping[str, Any]]:
    """``rows`` sorted by their shortfall from the ceiling, largest first (ties by name)."""
    ok = [r for r in rows if isinstance(r, Mapping)]
    return sorted(ok, key=lambda r: (-shortfall(r), str(name(r))))


def _minus_ceiling(row: Mapping[str, Any]) -> float | None:
    return -shortfall(row) if row.get("control_accuracy") is not None else None


def accuracy_headline(value_at_n: float, ceiling: float | None, reading: str) -> Headline:
    """The release's accuracy at the control's size against the control's (the ceiling)."""
    return Headline(value_at_n, ceiling, "accuracy", REAL_HOLDOUT, reading)


def accuracy_sections(details: Mapping[str, Any]) -> tuple[Section, ...]:
    """The accuracy metric's sections: levels, column charts, association heatmap, tables.

    Examples
    --------
    >>> det = {"univariate": {"synthetic": 0.9, "control": 0.95, "count": 1},
    ...        "columns": [{"column": "a", "sdtype": "numerical", "accuracy": 0.9,
    ...                     "control_accuracy": 0.95, "bins": ["(0, 1]"], "original": [3],
    ...                     "synthetic": [3], "control": [3]}], "pairs": [], "triples": []}
    >>> [s.title for s in accuracy_sections(det)]  # doctest: +NORMALIZE_WHITESPACE
    ['accuracy by level', 'Columns, original vs synthetic vs control (the 1 furthest from their
      ceiling)', 'Columns (1), worst first']
    """
    out: list[Section] = []
    levels = [(lvl, details[lvl]) for lvl in LEVELS if isinstance(details.get(lvl), Mapping)]
    if levels:
        out.append(Section("accuracy by level", ("level", "synthetic", "ceiling (control)", "scored"),
                           [(lvl, d.get("synthetic"), d.get("control"), str(d.get("count")))
                            for lvl, d in levels]))
    columns = worst_first(details.get("columns") or [], lambda r: r.get("column"))
    charts = []
    for r in columns[:MAX_COLUMN_CHARTS]:
        series = {k: r.get(k) for k in ("original", "synthetic", "control") if r.get(k) is not None}
        title = (f"{r.get('column')}: accuracy {_f(r.get('accuracy'))}"
                 + (f" (ceiling {_f(r.get('control_accuracy'))})"
                    if r.get("control_accuracy") is not None else ""))
        charts.append(Chart("overlay", title, "share of rows",
                            {"bins": list(r.get("bins") or []), "series": series}))
    if charts:
        more = len(columns) - len(charts)
        out.append(Section(f"Columns, original vs synthetic vs control (the {len(charts)} furthest "
                           "from their ceiling)",
                           note=f"{more} more column(s) in the table below and in the JSON."
                           if more > 0 else "", charts=tuple(charts), folded=True))
    pairs = [r for r in details.get("pairs") or [] if isinstance(r, Mapping)]
    names = [str(r.get("column")) for r in details.get("columns") or [] if isinstance(r, Mapping)]
    if pairs and len(names) >= 2:
        pos = {n: i for i, n in enumerate(names)}
        cells = []
        for r in pairs:
            i, j = pos.get(str(r.get("column_1"))), pos.get(str(r.get("column_2")))
            a, b = r.get("association_original"), r.get("association_synthetic")
            if i is None or j is None:
                continue
            cells.append([j, i, None if a is None or b is None else abs(float(b) - float(a))])
        if cells:
            out.append(Section(
                "Association difference between column pairs",
                note="How far Cramer's V of each binned column pair in the synthetic table is from "
                     "the same in the original, |V(synthetic) - V(original)| (0 = the dependence "
                     "is reproduced; grey = undefined).",
                charts=(Chart("heatmap", "association difference |V(synthetic) - V(original)|",
                              "|diff. Cramer's V|", {"labels": names, "cells": cells}, max=0.5),),
                folded=True))
    rows = [(str(r.get("column")), str(r.get("sdtype", "")), r.get("accuracy"),
             r.get("control_accuracy"), _minus_ceiling(r)) for r in columns]
    if rows:
        out.append(Section(
            f"Columns ({len(rows)}), worst first",
            ("column", "sdtype", "synthetic", "ceiling (control)", "synthetic - ceiling"), rows,
            note="Sorted by the shortfall from the ceiling (ceiling - synthetic); a positive "
                 "difference means the release is closer to the original than real held-out data "
                 "is.", folded=True))
    if pairs:
        worst = worst_first(pairs, lambda r: (r.get("column_1"), r.get("column_2")))[:MAX_PAIR_ROWS]
        out.append(Section(
            f"Pairs ({len(pairs)}; the {len(worst)} worst shown)",
            ("pair", "synthetic", "ceiling (control)", "synthetic - ceiling", "V original",
             "V synthetic"),
            [(f"{r.get('column_1')} x {r.get('column_2')}", r.get("accuracy"),
              r.get("control_accuracy"), _minus_ceiling(r), r.get("association_original"),
              r.get("association_synthetic")) for r in worst], folded=True))
    triples = [r for r in details.get("triples") or [] if isinstance(r, Mapping)]
    if triples:
        worst = worst_first(triples, lambda r: tuple(r.get("columns") or ()))[:MAX_TRIPLE_ROWS]
        scored = int((details.get("trivariate") or {}).get("count") or len(triples))
        every = math.comb(len(details.get("columns") or []), 3)
        which = (f"every one of the {scored}" if scored >= every
                 else f"a seeded sample of {scored} of {every}")
        listed = "" if len(triples) == scored else f", the {len(triples)} lowest listed"
        out.append(Section(
            f"Triples ({which}{listed}; the {len(worst)} worst shown)",
            ("triple", "synthetic", "ceiling (control)", "synthetic - ceiling"),
            [(" x ".join(map(str, r.get("columns") or [])), r.get("accuracy"),
              r.get("control_accuracy"), _minus_ceiling(r)) for r in worst], folded=True))
    return tuple(out)


def _f(x: Any) -> str:
    try:
        return f"{float(x):.3f}"
    except (TypeError, ValueError):
        return "-"
