"""The :class:`Report` of one evaluation and its JSON contract.

JSON shape::

    {"synthguard_version", "seed", "inputs": {role: {"rows", "columns", "sha256"}},
     "inferred_metadata", "warnings": [str, ...] (questionable inputs: inf read as missing,
     surrogate identifiers, disjoint categories, a control overlapping the original...), "config",
     "verdict": {"level", "summary", "rule", "materiality", "alpha", "release_type", "drivers",
                 "detection_limit", "tests", "not_assessed", "risks": [{..., "coarsening": [{
                 "column", "coarsening", "level_before", "level_after", "effect_after", "text"}]
                 (only when re-tested, see synthguard.run.actions)}], ...}  (run.verdict),
     "records": [{"metric", "risk", "action", "release_row", "training_row", "reason", "rank",
                  "family", "tests", "round"}, ...]  (every release row behind a high or medium
                 finding, ranked: synthguard.run.drops; only when there is one),
     "actions": {"drop_retest": {"rows_dropped", "max_rounds", "rounds": [{"round",
                                 "rows_dropped", "levels_after", "still_high",
                                 "typed_otherwise" (only when the release without the rows
                                 types a column otherwise: a code shared only through the
                                 dropped copies reads as an identifier), "seconds"}],
                                 "metrics_rerun", "seconds", "cost"}  (only when a test named rows
                                 to drop; each alarming risk then has "drop_retest": {...,
                                 "text", "typed_otherwise" (the last round's, only when
                                 there is one)}),
                 "coarsen_retest": {"columns_retested", "metrics_rerun", "runs", "seconds",
                 "cost"}}  (only when singling out or inference alarmed and a column was re-tested),
     "metrics": {name: {"status": "ok" | "skipped" | "error", "reason", "params", "seconds",
                        "result": {...}, "cached": true (only when read from the cache)}}}
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..core.io import atomic_write_text
from ..core.report_model import MetricEntry, ReportModel
from ..core.results import MetricResult


class Report:
    """Results of one evaluation.

    ``report["dcr"]`` is the metric's JSON entry (status, reason, params, seconds, result);
    ``report.result("dcr")`` is its :class:`~synthguard.core.results.MetricResult`.
    """

    def __init__(self, header: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]],
                 results: Mapping[str, MetricResult], verdict: Any) -> None:
        # the verdict is decided by the run (synthguard.run.executor.build_report), never here
        self._header = dict(header)
        self._entries = {k: dict(v) for k, v in entries.items()}
        self._results = dict(results)
        self._verdict = verdict
        self._model = ReportModel(self._header, verdict, tuple(
            MetricEntry(name, e["status"], e.get("reason"), dict(e.get("params") or {}),
                        e.get("seconds"), self._results.get(name), bool(e.get("cached")),
                        e.get("unit"), e.get("metric"))
            for name, e in self._entries.items()))
        #: The release's organisational context for the dossier (release model, recipients,
        #: purpose, controller, signatory...): a :class:`~synthguard.report.context.DossierContext`
        #: set by ``evaluate(..., context=...)``; never part of the JSON.
        self.context: Any = None

    @property
    def model(self) -> ReportModel:
        """The typed report model (:class:`~synthguard.core.report_model.ReportModel`): header,
        verdict with its typed risk and test rows, and one :class:`MetricEntry` per metric."""
        return self._model

    @property
    def verdict(self) -> Any:
        """The :class:`~synthguard.run.verdict.Verdict`: one level, its drivers and evidence, and the
        detection limit of the run (its repr is one line: level and risks)."""
        return self._verdict

    def risks(self) -> list[Any]:
        """The decision block: the verdict's four risk rows (presence, singling out, linkability,
        inference; :class:`~synthguard.core.report_model.RiskRow`, read as dicts too) with their
        level, excess beyond the control and interval, detection limits and the verdict's
        summary. A verdict that states no risks (the reference rule) gives them as not assessed."""
        from .risks import risk_rows

        return risk_rows(self._model)

    def records(self, original: Any = None, synthetic: Any = None,
                metadata: Any = None) -> Any:
        """Every record behind the metrics, in one schema, as a pandas DataFrame.

        Columns: ``metric, risk, action ("drop" | "review" | "context"), release_row,
        training_row, reason`` (row numbers of the input files, from 0; missing when the metric
        does not name one), then ``rank, family, tests, round``. First come the run's own rows:
        every release row behind a high or medium finding, each with its training row, ranked so
        that the first rows remove most of the excess (:mod:`synthguard.run.drops`; ``round``: the
        drop-and-retest round that dropped it), then the training records a test flags without
        naming release rows, then the records a high or medium test of the release as a whole
        lists itself (marked so). Last, apart, action ``"context"``: the records the verdict's
        tests that read low, inconclusive or not meaningful list themselves (not findings, never
        counted as leaked rows). A metric that decides no level (informative only) lists nothing
        here: its records are on its card (``report.result(name).records``).

        Parameters
        ----------
        original, synthetic, metadata : DataFrame or path, optional
            The evaluation's inputs, read only for a report without the run's own rows (no
            control): *every* release row that is a verbatim training row is then listed.

        Examples
        --------
        >>> import pandas as pd, synthguard
        >>> o = pd.DataFrame({"a": range(50), "b": ["x", "y"] * 25})
        >>> rep = synthguard.evaluate(o, o.head(10), metrics=["exact_matches"])
        >>> int(rep.records(o, o.head(10))["release_row"].notna().sum())
        10
        """
        import pandas as pd

        from .records import COLUMNS, report_records

        rows = report_records(self._model, original, synthetic, metadata)
        frame = pd.DataFrame(rows, columns=list(COLUMNS))
        for col in ("release_row", "training_row", "rank", "round"):
            frame[col] = frame[col].astype("Int64")
        return frame

    def to_frame(self) -> Any:
        """One row per metric as a pandas DataFrame: ``metric, family, status, value, baseline,
        ci_low, ci_high, n, risk, note`` (CI as two numeric columns, ``n`` as an integer).

        Examples
        --------
        >>> import pandas as pd, synthguard
        >>> o = pd.DataFrame({"a": range(50), "b": ["x", "y"] * 25})
        >>> list(synthguard.evaluate(o, o, metrics=["exact_matches"]).to_frame().columns)[:4]
        ['metric', 'family', 'status', 'value']
        """
        import pandas as pd

        rows = []
        for r in self.summary_rows():
            ci = r["ci"] if isinstance(r["ci"], (list, tuple)) and len(r["ci"]) == 2 else (None, None)
            res = self._results.get(r["metric"])
            rows.append({"metric": r["metric"], "family": res.family if res is not None else None,
                         "status": r["status"], "value": _float(r["value"]),
                         "baseline": _float(r["baseline"]), "ci_low": _float(ci[0]),
                         "ci_high": _float(ci[1]), "risk": r["risk"], "note": r["note"]})
        columns = ["metric", "family", "status", "value", "baseline", "ci_low", "ci_high", "n",
                   "risk", "note"]
        frame = pd.DataFrame(rows, columns=[c for c in columns if c != "n"])
        for col in ("value", "baseline", "ci_low", "ci_high"):  # missing is NaN, never object
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
        # n from the rows themselves (never through a float column: NaN has no integer)
        counts = [r["n"] for r in self.summary_rows()]
        frame.insert(7, "n", pd.array([None if not _is_count(v) else int(v) for v in counts],
                                      dtype="Int64"))
        return frame

    def _repr_html_(self) -> str:
        """Notebook display: the decision block and what to do, its styles scoped to the block
        and its advice in the Python API's words."""
        from .html import decision_html

        return decision_html(self, standalone=True, how="api")

    def __getitem__(self, name: str) -> dict[str, Any]:
        if name not in self._entries:
            raise KeyError(f"metric {name!r} is not in this report; it has: {', '.join(self._entries)}")
        return self.to_dict()["metrics"][name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def metrics(self) -> list[str]:
        return list(self._entries)

    def result(self, name: str) -> MetricResult | None:
        """The :class:`MetricResult` of ``name`` (``None`` when it was skipped or failed)."""
        return self._results.get(name)

    def status(self, name: str) -> str:
        return self._entries[name]["status"]

    @property
    def header(self) -> dict[str, Any]:
        return dict(self._header)

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract as plain Python objects (:meth:`ReportModel.to_dict`)."""
        return self._model.to_dict()

    def to_json(self, path: str | Path | None = None, *, indent: int = 2) -> str:
        """Serialise to JSON; also write it to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        if path is not None:
            atomic_write_text(path, text + "\n")
        return text

    def to_html(self, path: str | Path | None = None, *, title: str = "synthguard report") -> str:
        """A self-contained HTML page (inline SVG charts, no JavaScript, no network).

        Parameters
        ----------
        path : str or Path, optional
            Also write the page here.
        title : str
            Page heading.

        Returns
        -------
        str
            The HTML text.
        """
        from .html import render_html

        text = render_html(self, title=title)
        if path is not None:
            atomic_write_text(path, text)
        return text

    def summary_rows(self) -> list[dict[str, Any]]:
        """One row per metric: name, status, value, baseline, CI, n, risk level, note."""
        rows = []
        for name, entry in self._entries.items():
            res = self._results.get(name)
            if res is None:
                rows.append({"metric": name, "status": entry["status"], "value": None, "baseline": None,
                             "ci": None, "n": None, "risk": "-", "note": entry.get("reason") or ""})
                continue
            rows.append({"metric": name, "status": entry["status"], "value": res.value,
                         "baseline": res.baseline.value if res.baseline else None,
                         "ci": res.ci, "n": res.n, "risk": res.risk_level,
                         "note": res.warning or (res.baseline.description if res.baseline else "")})
        return rows

    def to_dossier(self, path: str | Path | None = None, *, fmt: str | None = None,
                   context: Any = None) -> str:
        """The release dossier a privacy officer signs (Markdown, or print-ready HTML with
        ``fmt="html"`` or a path ending in ``.html``): see :mod:`synthguard.report.dossier`.

        Parameters
        ----------
        path : str or Path, optional
            Also write the dossier here.
        fmt : {"markdown", "html"}, optional
            Default: from the path's extension, else Markdown.
        context : path, mapping or DossierContext, optional
            The organisational fields (release model, recipients, purpose, controller,
            signatory, decision, review date...): a YAML file as documented in
            ``docs/dossier.md``; default the context given to ``evaluate``. Fields not given are
            left visibly blank.
        """
        from .context import load_context
        from .dossier import HTML_SUFFIXES, check_dossier_name, render_dossier

        if path is not None:
            check_dossier_name(path, "path")
        fmt = fmt or ("html" if path is not None and str(path).lower().endswith(HTML_SUFFIXES)
                      else "markdown")
        ctx = load_context(context) if context is not None else self.context
        text = render_dossier(self, fmt=fmt, context=ctx)
        if path is not None:
            atomic_write_text(path, text)
        return text

    def to_console(self, width: int | None = None) -> str:
        """The decision block, what to do, the metric table and the verdict, wrapped to ``width``
        (default: the terminal's width); no number or sentence is ever cut."""
        from .console import render_decision, render_table, render_verdict, terminal_width, wrap

        width = width or terminal_width()

        head = ""
        ent = self._header.get("entities")
        if ent:  # entity-level run: say what n counts
            counts = ", ".join(f"{r} {n}" for r, n in ent.get("n_entities", {}).items())
            head = (f"unit: entity (key {ent.get('entity_key')!r}"
                    + (f", order {ent['sequence_key']!r}" if ent.get("sequence_key") else "")
                    + f"): privacy metrics count entities ({counts}); fidelity metrics marked row count "
                    "events\n\n")
        head = "\n".join(wrap(head.strip(), width)) + "\n\n" if head else ""
        warns = "".join("\n".join(wrap(f"warning: {w}", width, "  ")) + "\n"
                        for w in self._header.get("warnings") or ())
        return (render_decision(self, width) + "\n\n" + head
                + render_table(self.summary_rows(), width=width) + "\n\n"
                + (warns + "\n" if warns else "") + render_verdict(self._verdict, width=width))

    def __repr__(self) -> str:
        ok = sum(1 for e in self._entries.values() if e["status"] == "ok")
        levels = ", ".join(f"{r['risk']} {r['level']}" for r in self.risks())
        return (f"<Report verdict {str(self._verdict.level).upper()} ({levels}); "
                f"{ok}/{len(self._entries)} metrics ok>")


def _is_count(x: Any) -> bool:
    try:
        return x is not None and not isinstance(x, bool) and float(x) == float(x)
    except (TypeError, ValueError):
        return False


def _float(x: Any) -> float | None:
    try:
        return None if x is None or isinstance(x, bool) else float(x)
    except (TypeError, ValueError):
        return None
