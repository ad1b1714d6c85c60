"""Distributed forms of the exact-row and neighbour metrics.

Each computes, with group-bys and joins over partitions (or the partitioned neighbour search), the
counts / arrays the single-process metric derives from its inputs, then hands them to the SAME
result builder the single-process metric uses (``exact_matches_result``, ``ims_result``, the
``dcr`` function itself, ``cap_result``, ``k_anonymity_result``), so thresholds, intervals, warnings
and JSON layout cannot drift apart.

The members-vs-controls evidence carries the single-process per-record flags (every training and
every control record, in canonical order): each flag is computed on the workers by joining the
record's hash with the grouped tables and gathered with :func:`~._tables.gather_flags` (one byte per
record on the client, placed by the record's canonical position), then the single-process builders
(``copy_record_flags``, ``ims_flags``, ``cap_evidence_from_flags``) make the evidence. ``dcr`` /
``nndr`` get the label-free nearest release rows their evidence reads from the partitioned search.

Row identities are 128-bit content hashes (:func:`synthguard.data.encoding.row_hash128`); the single
process uses exact identities. Two different rows share a hash with probability about 2**-128.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core.results import MetricResult
from ..data.encoding import Encoder
from ..errors import MetricError
from ..registry import Context
from ._knn import kneighbors_distributed
from ._tables import DistTables, gather_flags, row_hashes

_HASH_META = pd.DataFrame({"h1": pd.Series([], dtype="uint64"), "h2": pd.Series([], dtype="uint64"),
                           "pos": pd.Series([], dtype="int64")})


def _hash_frame(encoder: Encoder, frame: pd.DataFrame, positions: np.ndarray,
                columns: tuple[str, ...]) -> pd.DataFrame:
    h = row_hashes(encoder, frame, columns)
    return pd.DataFrame({"h1": h[:, 0], "h2": h[:, 1], "pos": np.asarray(positions, dtype=np.int64)})


def hashed(dt: DistTables, role: str, columns: Sequence[str]) -> Any:
    """A dask DataFrame ``(h1, h2, pos)``: the 128-bit identity and canonical position of every row."""
    import dask.dataframe as dd

    return dd.from_delayed(dt.map(role, _hash_frame, tuple(columns), ordered=False), meta=_HASH_META,
                           verify_meta=False)


def _split(dt: DistTables, role: str) -> int:
    return dt.split_out(role)


def _matching_columns(dt: DistTables) -> list[str]:
    cols = [c for c, s in dt.schema.columns.items() if s.sdtype != "id"]
    if not cols:
        raise MetricError("every column is an id column, so rows cannot be compared; "
                          "mark at least one column as non-id in the metadata")
    return cols


def _top_copied(frame: pd.DataFrame, top_n: int) -> pd.DataFrame:
    """Most-copied first, then the lower first original position (``pos`` = synthetic copies,
    ``min`` = first original position, ``count`` = original duplicates)."""
    return frame.sort_values(["pos", "min"], ascending=[False, True], kind="mergesort").head(top_n)


def exact_matches(dt: DistTables, thresholds: Mapping[str, float], *, top_n: int = 20,
                  confidence_level: float = 0.95) -> MetricResult:
    """:func:`synthguard.metrics.privacy.matching.exact_matches` as group-bys and joins over partitions."""
    from ..metrics.privacy.matching import (
        _check,
        _confidence,
        _positive_int,
        copy_counts,
        copy_record_flags,
        exact_matches_result,
    )

    _check("exact_matches", {"top_n": top_n, "confidence_level": confidence_level},
           {"top_n": _positive_int, "confidence_level": _confidence})
    cols = _matching_columns(dt)
    keys = ["h1", "h2"]
    # (column renames after a split_out group-by trip dask-expr; the plain names are kept instead)
    orig = hashed(dt, "original", cols)
    og = orig.groupby(keys).pos.agg(["min", "count"], split_out=_split(dt, "original")).reset_index()
    syn = hashed(dt, "synthetic", cols)
    sg = syn.groupby(keys).pos.count(split_out=_split(dt, "synthetic")).reset_index()  # pos = copies
    joined = sg.merge(og, on=keys, how="inner")
    tasks = [joined.pos.sum(), og["count"].where(og["count"] > 1, 0).sum(),
             joined.map_partitions(_top_copied, top_n)]
    ctl = None
    if dt.has_control:
        ctl = hashed(dt, "control", cols)
        cg = ctl.groupby(keys).pos.count(split_out=_split(dt, "control")).reset_index()
        tasks.append(cg.merge(og[keys], on=keys, how="inner").pos.sum())
    out = dt.compute(tasks)
    top = _top_copied(out[2], top_n)
    records = [{"original_row": int(a), "synthetic_copies": int(b), "original_duplicates": int(c)}
               for a, b, c in zip(top["min"], top["pos"], top["count"], strict=True)]
    control = (int(out[3]), dt.control.n_rows) if dt.has_control else None
    evidence = flags = None
    if dt.has_control and dt.control.n_rows:
        # the copy evidence: per real record (training and control), is its row unique in the pooled
        # real data, and does the release hold it? (count = in original, pos = in control)
        pooled = og[keys + ["count"]].merge(cg, on=keys, how="outer")
        sd = syn[keys].drop_duplicates(split_out=_split(dt, "synthetic"))
        sd = sd.map_partitions(lambda f: f.assign(hit=np.int64(1)))
        pooled = pooled.merge(sd, on=keys, how="left")
        meta = pd.DataFrame({"h1": pd.Series([], dtype="uint64"), "h2": pd.Series([], dtype="uint64"),
                             "unique": pd.Series([], dtype=bool), "hit": pd.Series([], dtype=bool)})
        info = pooled.map_partitions(_copy_info, meta=meta)
        got = {}
        for role, rows in (("original", orig), ("control", ctl)):
            per_row = rows[keys + ["pos"]].merge(info, on=keys, how="left")
            got[role] = gather_flags(dt, role, per_row, ("unique", "hit"))
        per_record = (got["original"]["unique"], got["original"]["hit"], got["control"]["unique"],
                      got["control"]["hit"])
        evidence, flags = copy_counts(*per_record), copy_record_flags(*per_record)
    return exact_matches_result(thresholds, cols, k=int(out[0]), n_synthetic=dt.synthetic.n_rows,
                                n_duplicated=int(out[1]), n_original=dt.original.n_rows, control=control,
                                records=records, evidence_counts=evidence, confidence_level=confidence_level,
                                flags=flags)


def _copy_info(f: pd.DataFrame) -> pd.DataFrame:
    """Per distinct real row: unique in the pooled real data (one training or control record), and
    held by the release."""
    n_o = f["count"].fillna(0).to_numpy(np.int64)
    n_c = f["pos"].fillna(0).to_numpy(np.int64)
    return pd.DataFrame({"h1": f["h1"].to_numpy(np.uint64), "h2": f["h2"].to_numpy(np.uint64),
                         "unique": (n_o + n_c) == 1, "hit": f["hit"].fillna(0).to_numpy(np.int64) > 0})


def ims(dt: DistTables, thresholds: Mapping[str, float], *, confidence_level: float = 0.95) -> MetricResult:
    """:func:`synthguard.metrics.privacy.matching.ims` as distinct counts and joins over partitions."""
    from ..metrics.privacy.matching import _check, _confidence, ims_flags, ims_result

    _check("ims", {"confidence_level": confidence_level}, {"confidence_level": _confidence})
    cols = _matching_columns(dt)
    keys = ["h1", "h2"]
    og = hashed(dt, "original", cols)[keys].drop_duplicates(split_out=_split(dt, "original"))
    syn = hashed(dt, "synthetic", cols)
    sg = syn.groupby(keys).pos.count(split_out=_split(dt, "synthetic")).reset_index()  # pos = rows
    sj = sg.merge(og, on=keys, how="inner")
    tasks = [sg.shape[0], sj.shape[0], sj.pos.sum()]
    if dt.has_control:
        cg = hashed(dt, "control", cols).groupby(keys).pos.count(split_out=_split(dt, "control")).reset_index()
        cj = cg.merge(og, on=keys, how="inner")
        tasks += [cg.shape[0], cj.shape[0], cj.pos.sum()]
    out = [int(v) for v in dt.compute(tasks)]
    control = flags = None
    if dt.has_control and dt.control.n_rows:
        control = (out[4], out[3], out[2], dt.synthetic.n_rows, out[5], dt.control.n_rows)
        # per training and control record: does the release hold a verbatim copy of it?
        sd = syn[keys].drop_duplicates(split_out=_split(dt, "synthetic"))
        sd = sd.map_partitions(lambda f: f.assign(hit=True))
        hit = {}
        for role in ("original", "control"):
            per_row = hashed(dt, role, cols).merge(sd, on=keys, how="left")
            per_row = per_row.map_partitions(lambda f: f.assign(hit=f["hit"].notna().to_numpy()))
            hit[role] = gather_flags(dt, role, per_row, ("hit",))["hit"]
        flags = ims_flags(hit["original"], hit["control"])
    return ims_result(thresholds, k=out[1], n_distinct=out[0], control=control,
                      confidence_level=confidence_level, flags=flags)


# --- neighbours -------------------------------------------------------------------------------------

def _balanced_part(frame: pd.DataFrame, positions: np.ndarray, columns: tuple[str, ...], n: int, seed: int,
                   label: str) -> tuple[np.ndarray, np.ndarray]:
    from ..metrics.privacy.distance import balanced_keys

    keys = balanced_keys(frame[list(columns)], seed, label)
    pos = np.asarray(positions, dtype=np.int64)
    order = np.lexsort((pos, keys))[:n]
    return keys[order], pos[order]


def balanced_rows(dt: DistTables, role: str, columns: Sequence[str], n: int, seed: int) -> np.ndarray:
    """:func:`synthguard.metrics.privacy.distance.balanced_rows` over partitions: the ``n`` smallest seeded
    content keys (ties by canonical position), as sorted canonical positions."""
    if n >= dt.get(role).n_rows:
        return np.arange(dt.get(role).n_rows)
    parts = dt.compute(dt.map(role, _balanced_part, tuple(columns), n, seed, role, with_encoder=False,
                              ordered=False))
    keys = np.concatenate([p[0] for p in parts])
    pos = np.concatenate([p[1] for p in parts])
    return np.sort(pos[np.lexsort((pos, keys))[:n]])


def neighbour_context(dt: DistTables, name: str, thresholds: Mapping[str, float], seed: int,
                      backend: str, k: int, confidence_level: float = 0.95) -> Context:
    """A metric context whose neighbour searches (the ``distance.*`` entries of ``ctx.cache`` that
    ``dcr`` / ``nndr`` memoise) were computed by the partitioned engine; the metric function then
    runs unchanged on it and never touches the rows."""
    from ..engine.neighbors import gower
    from ..metrics.privacy.distance import closer_share_from

    cols = dt.schema.tabular_columns()
    if not cols:
        raise MetricError("no tabular column to measure distances on (only text/id columns); "
                          "use the text metrics instead")
    metric = gower(dt.ranges(cols, ("original",)), clip=True, normalise=True)
    ctx = Context(tables=dt, encoded=None, seed=seed, thresholds=dict(thresholds), metric=name,  # type: ignore[arg-type]
                  backend=backend, release_type=dt.release_type)
    ctx.cache["distance.setup"] = (cols, metric)
    pairs = [("synthetic", "original"), ("original", "original")]
    if dt.has_control:
        pairs.append(("control", "original"))
    for q, r in pairs:
        ctx.cache[f"distance.knn2.{q}.{r}"] = kneighbors_distributed(dt, q, r, cols, metric, k,
                                                                     backend=backend)
    if dt.has_control and dt.control.n_rows and dt.synthetic.n_rows >= 2:
        # the members-vs-controls evidence: every real record's two nearest release rows under the
        # label-free ranges (original AND control), as ``distance._labelfree_neighbours`` memoises them
        labelfree = gower(dt.ranges(cols, ("original", "control")), clip=True, normalise=True)
        for q in ("original", "control"):
            ctx.cache[f"distance.labelfree.knn2.{q}"] = kneighbors_distributed(
                dt, q, "synthetic", cols, labelfree, 2, backend=backend)[0]
    if dt.original.n_rows < k + 1:
        raise MetricError(f"the original table has {dt.original.n_rows} row(s); this metric needs at "
                          f"least {k + 1}")
    if dt.has_control and name == "dcr":
        n = min(dt.original.n_rows, dt.control.n_rows)
        dist = {}
        for role in ("original", "control"):
            if n >= dt.get(role).n_rows:
                key = f"distance.knn2.synthetic.{role}"
                if key not in ctx.cache:
                    ctx.cache[key] = kneighbors_distributed(dt, "synthetic", role, cols, metric, 1,
                                                            backend=backend)
                dist[role] = ctx.cache[key][0][:, 0]
            else:
                rows = balanced_rows(dt, role, cols, n, seed)
                dist[role] = kneighbors_distributed(dt, "synthetic", role, cols, metric, 1, backend=backend,
                                                    reference_rows=rows)[0][:, 0]
        ctx.cache["distance.closer"] = closer_share_from(dist["original"], dist["control"], n,
                                                         float(confidence_level))
    return ctx


def dcr(dt: DistTables, thresholds: Mapping[str, float], *, seed: int = 0, backend: str = "auto",
        **params: Any) -> MetricResult:
    """:func:`synthguard.metrics.privacy.distance.dcr` with its searches run over partitions."""
    from ..metrics.privacy.distance import dcr as dcr_metric

    ctx = neighbour_context(dt, "dcr", thresholds, seed, backend, 1,
                            float(params.get("confidence_level", 0.95)))
    return dcr_metric(ctx, **params)


def nndr(dt: DistTables, thresholds: Mapping[str, float], *, seed: int = 0, backend: str = "auto",
         **params: Any) -> MetricResult:
    """:func:`synthguard.metrics.privacy.distance.nndr` with its k=2 searches run over partitions."""
    from ..metrics.privacy.distance import nndr as nndr_metric

    ctx = neighbour_context(dt, "nndr", thresholds, seed, backend, 2,
                            float(params.get("confidence_level", 0.95)))
    return nndr_metric(ctx, **params)


# --- sample-based metrics ---------------------------------------------------------------------------

def _rows_at(frame: pd.DataFrame, local: np.ndarray) -> pd.DataFrame:
    return frame.iloc[local]


def fetch_rows(dt: DistTables, role: str, rows: np.ndarray) -> pd.DataFrame:
    """The typed rows of ``role`` at canonical positions ``rows`` (in that order), fetched from the
    partitions that hold them (in input order: the canonical position's input row, from
    :attr:`DistTables.row_numbers`, says where); only those rows travel to the caller."""
    from dask import delayed

    rows = np.asarray(rows, dtype=np.int64)
    uniq = np.unique(rows)
    table = dt.get(role)
    if uniq.size and (uniq[0] < 0 or uniq[-1] >= table.n_rows):
        raise MetricError(f"row {int(uniq[-1] if uniq[-1] >= table.n_rows else uniq[0])} is outside the "
                          f"{role} table ({table.n_rows} rows)")
    nums = dt.row_numbers.get(role)
    inputs = uniq if nums is None else np.asarray(nums)[uniq]  # input row of each canonical row
    by_input = np.argsort(inputs, kind="stable")
    bounds = np.searchsorted(inputs[by_input], np.concatenate([table.offsets, [table.n_rows]]))
    tasks, order = [], []
    for j, frame in enumerate(table.part_args(ordered=False)):
        sel = by_input[bounds[j]:bounds[j + 1]]
        if sel.size:
            tasks.append(delayed(_rows_at, pure=True)(frame, inputs[sel] - table.offsets[j]))
            order.append(sel)
    if not tasks:
        raise MetricError(f"no rows requested from the {role} table")
    got = pd.concat(dt.compute(tasks), ignore_index=True)
    at = np.empty(len(uniq), dtype=np.int64)  # row of ``got`` holding each of ``uniq``
    at[np.concatenate(order)] = np.arange(len(uniq), dtype=np.int64)
    return got.iloc[at[np.searchsorted(uniq, rows)]].reset_index(drop=True)


class _SampledBlock:
    """``ctx.encoded.block(role, cols)`` for a sample-based metric: ``take(rows)`` fetches and encodes
    only those rows, with the global vocabularies."""

    def __init__(self, dt: DistTables, role: str, columns: Sequence[str]) -> None:
        self.dt, self.role, self.columns = dt, role, list(columns)
        schema = dt.schema
        self.num_columns = tuple(c for c in self.columns if schema.columns[c].is_numeric)
        self.cat_columns = tuple(c for c in self.columns if c not in self.num_columns)

    def take(self, rows: np.ndarray) -> Any:
        return self.dt.encoder.encode(fetch_rows(self.dt, self.role, rows), self.columns)


class _SampledView:
    def __init__(self, dt: DistTables) -> None:
        self.dt = dt

    def block(self, role: str, columns: Sequence[str] | None = None, *, categorical_only: bool = False) -> Any:
        if categorical_only:
            raise MetricError("this metric needs categorical-only blocks, which a distributed run "
                              "does not sample")
        return _SampledBlock(self.dt, role, columns if columns is not None else
                             self.dt.schema.tabular_columns())


class _SampledColumn:
    def __init__(self, dt: DistTables, role: str, column: str) -> None:
        self.dt, self.role, self.column = dt, role, column

    @property
    def iloc(self) -> _SampledColumn:
        return self

    def __getitem__(self, rows: np.ndarray) -> pd.Series:
        return fetch_rows(self.dt, self.role, rows)[self.column]


class _SampledFrame:
    def __init__(self, dt: DistTables, role: str) -> None:
        self.dt, self.role = dt, role

    def __getitem__(self, column: str) -> _SampledColumn:
        return _SampledColumn(self.dt, self.role, column)

    def __len__(self) -> int:
        return self.dt.get(self.role).n_rows


class _SampledTables:
    """``ctx.tables`` of a sample-based metric: lengths and schema from the cluster; rows on demand."""

    def __init__(self, dt: DistTables) -> None:
        self.dt = dt
        self.schema = dt.schema
        self.roles = dt.roles
        self.has_control = dt.has_control

    def get(self, role: str) -> _SampledFrame:
        return _SampledFrame(self.dt, role)

    @property
    def original(self) -> _SampledFrame:
        return self.get("original")

    @property
    def synthetic(self) -> _SampledFrame:
        return self.get("synthetic")

    @property
    def control(self) -> _SampledFrame | None:
        return self.get("control") if self.dt.has_control else None


def _first_of(frame: pd.DataFrame, role_offset: int) -> pd.DataFrame:
    return pd.DataFrame({"h1": frame["h1"], "h2": frame["h2"], "g": frame["pos"] + role_offset})


def first_positions(dt: DistTables, columns: Sequence[str]) -> dict[str, np.ndarray]:
    """Per role and row, the first position (over original, synthetic, control concatenated) of a
    row with the same content: ids in the same order as the single process's dense exact-row ids
    (:func:`synthguard.data.encoding.row_identities`), so group-wise splits come out the same."""
    import dask.dataframe as dd

    keys = ["h1", "h2"]
    start, frames = 0, {}
    for role in dt.roles:
        frames[role] = hashed(dt, role, columns).map_partitions(_first_of, start)
        start += dt.get(role).n_rows
    everything = dd.concat(list(frames.values()))
    n_all = start
    split = 1 if n_all < 1_000_000 else max(1, sum(len(dt.get(r).parts) for r in dt.roles))
    first = everything.groupby(keys).g.min(split_out=split).reset_index()
    first = first.map_partitions(lambda f: f.rename(columns={"g": "first"}))
    tasks = [frames[r].merge(first, on=keys, how="left")[["g", "first"]] for r in dt.roles]
    out, start = {}, 0
    for role, got in zip(dt.roles, dt.compute(tasks), strict=True):
        ids = np.empty(dt.get(role).n_rows, dtype=np.int64)
        ids[got["g"].to_numpy() - start] = got["first"].to_numpy()
        out[role] = ids
        start += dt.get(role).n_rows
    return out


def distinguishability(dt: DistTables, thresholds: Mapping[str, float], *, seed: int = 0,
                       backend: str = "auto", **params: Any) -> MetricResult:
    """:func:`synthguard.metrics.privacy.distinguish.distinguishability` on its seeded sample: the metric runs
    unchanged; the rows its sampler picks are fetched from the partitions (encoded with the global
    vocabularies), and the exact-row ids it groups by come from a distributed first-position join."""
    from ..metrics.privacy.distinguish import distinguishability as metric
    from ..metrics.privacy.matching import matching_columns

    ctx = Context(tables=_SampledTables(dt), encoded=_SampledView(dt), seed=seed,  # type: ignore[arg-type]
                  thresholds=dict(thresholds), metric="distinguishability", backend=backend,
                  release_type=dt.release_type)
    ctx.cache["matching.row_ids"] = first_positions(dt, matching_columns(ctx))
    return metric(ctx, **params)
