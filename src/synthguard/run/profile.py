"""The data owner's workflow: profile the original once, evaluate releases without its rows.

``synthguard profile original.csv -o stats.json`` (or :func:`profile`) stores the statistics the
fidelity metrics need -- never a raw row. ``synthguard evaluate --original-stats stats.json
--synthetic release.csv`` (or ``evaluate(None, release, original_stats="stats.json")``) then runs
every metric that can work from them and reports the rest skipped with the reason "needs the original
rows (not available with --original-stats)".

What a profile stores (see ``docs/user-guide.md``, section "Profiles"):

* ``schema``: column names, sdtypes and roles; ``fingerprint``: rows, columns, SHA-256 of the file;
* ``accuracy``: per column the bin edges (deciles of the original) or the ten most frequent
  categories, and the original's counts per bin, per pair of columns and per sampled column triple;
* ``quality`` (SDMetrics QualityReport): per numerical/datetime column its distinct values with their
  counts (the exact empirical distribution, which KS needs) and its 10 equal-width bin edges; per
  categorical column its category counts; per column pair the Pearson r or the binned joint counts
  and Cramer's V. ``exact_shapes=False`` replaces the distinct values by ``ecdf_points`` quantiles
  (KSComplement then approximate, marked so) and drops categories seen fewer than ``min_count``
  times from the labels (their mass kept as one unnamed bin; ``accuracy`` then never names them
  either, so its bins differ from a run with the rows).

Rows are never stored, but an extreme value seen once (a maximum, a rare category, a cell counted
once) can be: share a profile as you would share its published marginals.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.results import to_jsonable
from ..data.encoding import EncodedView
from ..data.loading import TableLike, load_table
from ..data.schema import Schema, infer_schema
from ..data.tables import Tables, _file_sha256, prepare_tables
from ..errors import InputError
from ..stats import make_rng

FORMAT = "synthguard-profile/1"

__all__ = ["OriginalStats", "profile", "load_original_stats", "tables_from_stats"]


@dataclass(frozen=True)
class OriginalStats:
    """The original's statistics (see the module docstring for what is stored).

    Attributes
    ----------
    schema : Schema
        Column sdtypes and roles.
    fingerprint : mapping
        ``{"rows", "columns", "sha256"}`` of the profiled table.
    seed : int
        Seed of the profile (it fixes the sampled column triples).
    accuracy : Reference or None
        Binned counts for the ``accuracy`` metric.
    quality : mapping or None
        Summaries for ``quality_report``.
    source : str
        Where the profile came from (for messages).
    """

    schema: Schema
    fingerprint: Mapping[str, Any]
    seed: int
    accuracy: Any = None
    quality: Any = None
    source: str = "original statistics"
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return int(self.fingerprint.get("rows", 0))

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (the file ``synthguard profile`` writes)."""
        from .._version import __version__

        return to_jsonable({
            "format": FORMAT, "synthguard_version": __version__, "seed": self.seed,
            "fingerprint": dict(self.fingerprint), "schema": self.schema.to_dict(),
            "stores": "binned counts, bin edges, category labels and counts, per-pair summaries "
                      "(see the 'Profiles' section of docs/user-guide.md); never a row",
            **dict(self.meta),
            "accuracy": self.accuracy.to_dict() if self.accuracy is not None else None,
            "quality": self.quality.to_dict() if self.quality is not None else None,
        })

    def save(self, path: str | Path) -> Path:
        """Write the profile as JSON to ``path``."""
        from ..core.io import atomic_write_text

        p = Path(path)
        atomic_write_text(p, json.dumps(self.to_dict(), separators=(",", ":"), allow_nan=False) + "\n")
        return p


def profile(original: TableLike, metadata: Any = None, *, seed: int = 0, max_bins: int = 10,
            max_categories: int = 10, n_triples: int = 10_000, exact_shapes: bool = True,
            ecdf_points: int = 1001, min_count: int = 1) -> OriginalStats:
    """Profile the original table: the statistics every fidelity metric needs, no rows.

    Parameters
    ----------
    original : DataFrame or path
        The real rows the generator was trained on.
    metadata : mapping or path, optional
        SynEval-style metadata (as for :func:`synthguard.evaluate`).
    seed : int
        Seed of the run (fixes the sampled column triples of ``accuracy``; evaluate with the same
        seed to get the same numbers as with the original rows).
    max_bins, max_categories, n_triples : int
        Parameters of the ``accuracy`` metric (its defaults).
    exact_shapes : bool
        ``True``: store each numerical column's distinct values with counts, so ``quality_report``'s
        KSComplement is exact. ``False``: store ``ecdf_points`` quantiles instead (approximate KS)
        and leave out categories seen fewer than ``min_count`` times.
    ecdf_points, min_count : int
        See ``exact_shapes``.

    Returns
    -------
    OriginalStats
        Save it with :meth:`OriginalStats.save`.
    """
    from ..metrics.fidelity._binning import build_reference
    from ..metrics.fidelity._summary import summarise_real

    # canonical content order, as evaluate() uses: the same statistics whatever the row order
    tables = prepare_tables(original, original, None, metadata).in_canonical_order()
    view = EncodedView(tables)
    cols = tables.schema.tabular_columns()
    acc = None
    if cols:
        acc = build_reference(view.block("original", cols), view.encoder, cols, max_bins=max_bins,
                              max_categories=max_categories, n_triples=n_triples,
                              rng=make_rng(seed, "accuracy", "triples"),
                              min_count=1 if exact_shapes else min_count)
    quality = summarise_real(tables.original, tables.schema, exact_shapes=exact_shapes,
                             ecdf_points=ecdf_points, min_count=min_count)
    fp = dict(tables.fingerprints["original"])
    return OriginalStats(tables.schema, fp, int(seed), acc, quality, tables.labels["original"],
                         {"options": {"exact_shapes": exact_shapes, "ecdf_points": ecdf_points,
                                      "min_count": min_count}})


def load_original_stats(source: OriginalStats | Mapping[str, Any] | str | Path) -> OriginalStats:
    """Read a profile written by :func:`profile` / ``synthguard profile``.

    Raises
    ------
    InputError
        The file is missing, is not JSON or is not a synthguard profile.
    """
    from ..metrics.fidelity._binning import Reference
    from ..metrics.fidelity._summary import RealSummary

    if isinstance(source, OriginalStats):
        return source
    label = "original statistics"
    if isinstance(source, (str, Path)):
        path = Path(source)
        label = str(path)
        if not path.is_file():
            raise InputError(f"original statistics file {label} does not exist: create it with "
                             "'synthguard profile ORIGINAL.csv -o stats.json'")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"original statistics file {label} is not JSON ({exc}): give the file "
                             "'synthguard profile' wrote") from None
    elif isinstance(source, Mapping):
        data = dict(source)
    else:
        raise InputError(f"original_stats: expected a path or a mapping, got {type(source).__name__}")
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise InputError(f"{label} is not a synthguard profile (format {FORMAT!r} expected): "
                         "create it with 'synthguard profile ORIGINAL.csv -o stats.json'")
    import pandas as pd

    names = list(data["schema"]["columns"])
    schema = infer_schema(pd.DataFrame({c: [] for c in names}), data["schema"], label=label)
    acc = Reference.from_dict(data["accuracy"]) if data.get("accuracy") else None
    quality = RealSummary.from_dict(data["quality"]) if data.get("quality") else None
    meta = {k: data[k] for k in ("options",) if k in data}
    return OriginalStats(schema, dict(data.get("fingerprint") or {}), int(data.get("seed", 0)), acc,
                         quality, label, meta)


def tables_from_stats(original_stats: Any, synthetic: TableLike, control: TableLike | None = None,
                      metadata: Any = None) -> Tables:
    """Validated tables whose original is given by its statistics (``original`` is ``None``).

    Raises
    ------
    InputError
        The release lacks or adds columns, or metadata is given (the profile carries the schema).
    """
    stats = load_original_stats(original_stats)
    if metadata is not None:
        raise InputError("metadata cannot be combined with original statistics: the profile carries "
                         "the schema it was made with (profile again with --metadata to change it)")
    frame, label = load_table(synthetic, "synthetic")
    names = list(stats.schema.columns)
    missing = [c for c in names if c not in set(map(str, frame.columns))]
    extra = [str(c) for c in frame.columns if str(c) not in set(names)]
    if missing or extra:
        what = (f"is missing column(s) {', '.join(map(repr, missing))}" if missing else
                f"has column(s) {', '.join(map(repr, extra))}")
        raise InputError(f"{label} {what} that the profiled original ({stats.source}) "
                         f"{'has' if missing else 'lacks'}: make the release's columns match")
    tables = prepare_tables(frame, frame, control, stats.schema,
                            labels={"original": stats.source, "synthetic": label})
    prints = {k: v for k, v in tables.fingerprints.items() if k != "original"}
    if isinstance(synthetic, (str, Path)):
        prints["synthetic"] = dict(prints["synthetic"], sha256=_file_sha256(Path(synthetic)))
    prints["original"] = dict(stats.fingerprint)
    return replace(tables, original=None, original_stats=stats,
                   labels=dict(tables.labels, original=stats.source), fingerprints=prints)
