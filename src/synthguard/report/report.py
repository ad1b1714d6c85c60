"""The :class:`Report` of one evaluation and its JSON contract.

JSON shape::

    {"synthguard_version", "seed", "inputs": {role: {"rows", "columns", "sha256"}},
     "inferred_metadata", "warnings": [str, ...] (questionable inputs: inf read as missing,
     surrogate identifiers, disjoint categories, a control overlapping the original...), "config",
     "verdict": {"level", "summary", "rule", "materiality", "alpha", "release_type", "drivers",
                 "detection_limit", "tests", "not_assessed", ...}  (see synthguard.verdict),
     "metrics": {name: {"status": "ok" | "skipped" | "error", "reason", "params", "seconds",
                        "result": {...}, "cached": true (only when read from the cache)}}}
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .._io import atomic_write_text
from ..results import MetricResult, to_jsonable


class Report:
    """Results of one evaluation.

    ``report["dcr"]`` is the metric's JSON entry (status, reason, params, seconds, result);
    ``report.result("dcr")`` is its :class:`~synthguard.results.MetricResult`.
    """

    def __init__(self, header: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]],
                 results: Mapping[str, MetricResult], verdict: Any = None) -> None:
        self._header = dict(header)
        self._entries = {k: dict(v) for k, v in entries.items()}
        if verdict is None:
            from ..verdict import assess

            results, verdict = assess(results)
        self._results = dict(results)
        self._verdict = verdict

    @property
    def verdict(self) -> Any:
        """The :class:`~synthguard.verdict.Verdict`: one level, its drivers and evidence, and the
        detection limit of the run."""
        return self._verdict

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
        """The JSON contract as plain Python objects."""
        metrics = {}
        for name, entry in self._entries.items():
            res = self._results.get(name)
            metrics[name] = {
                "status": entry["status"],
                "reason": entry.get("reason"),
                "params": to_jsonable(entry.get("params", {})),
                "seconds": to_jsonable(entry.get("seconds")),
                "result": res.to_dict() if res is not None else None,
            }
            if entry.get("cached"):
                metrics[name]["cached"] = True
            if entry.get("unit"):
                metrics[name]["unit"] = entry["unit"]
            if entry.get("metric"):  # a named run: the registered metric it ran
                metrics[name]["metric"] = entry["metric"]
        out = to_jsonable(self._header)
        out["verdict"] = self._verdict.to_dict()
        out["metrics"] = metrics
        return out

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

    def to_console(self, width: int = 120) -> str:
        from .console import render_table, render_verdict

        head = ""
        ent = self._header.get("entities")
        if ent:  # entity-level run: say what n counts
            counts = ", ".join(f"{r} {n}" for r, n in ent.get("n_entities", {}).items())
            head = (f"unit: entity (key {ent.get('entity_key')!r}"
                    + (f", order {ent['sequence_key']!r}" if ent.get("sequence_key") else "")
                    + f"): privacy metrics count entities ({counts}); fidelity metrics marked row count "
                    "events\n\n")
        warns = "".join(f"warning: {w}\n" for w in self._header.get("warnings") or ())
        return (head + render_table(self.summary_rows(), width=width) + "\n\n"
                + (warns + "\n" if warns else "") + render_verdict(self._verdict))

    def __repr__(self) -> str:
        ok = sum(1 for e in self._entries.values() if e["status"] == "ok")
        return f"<Report {ok}/{len(self._entries)} metrics ok>"
