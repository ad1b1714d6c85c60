"""Linkability (anonymeter semantics): can the synthetic data link two halves of a person's record?

The attacker holds two datasets about the same people with different columns (``aux_cols`` = the
two column lists). For each target row, it looks up the ``n_neighbors`` nearest synthetic rows on
each half; the target is linked when the two neighbour sets share a synthetic row. The naive
baseline draws both neighbour sets at random; the control attack runs on real held-out rows.
Distances are anonymeter's: Gower terms scaled by the ranges over the targets and the synthetic
rows, summed, one-sided missing numeric value = infinitely far.

The headline numbers keep anonymeter's ``n_attacks`` semantics (sampled targets). The evidence that
drives the verdict attacks every training and every control record (see :func:`link_flags`).

Every table question goes to the backend (``ctx.data``): the canonical rows
(``Backend.distinct_order``), the ranges and the neighbours of the sampled targets and of every
record (``Backend.value_bounds``, ``Backend.kneighbors_among``) and the encoded cells read
(``Backend.encoded_rows``), so the attack runs on the Dask backend with the JSON of one process.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.format import fmt_number
from ...core.results import Evidence, MetricResult, RecordFlags
from ...errors import ConfigError
from ...registry import Context, Param, RecordsCard, register
from ._common import (
    DIRECTION,
    FAMILY,
    THRESHOLDS,
    Outcome,
    build_result,
    canonical,
    check_columns,
    common_params,
    memoised,
    pooled_neighbours,
    release_ties,
    resolve_n_attacks,
    summarise,
    tabular_columns,
    target_neighbours,
)


def default_split(ctx: Context) -> tuple[list[str], list[str]]:
    """The documented default ``aux_cols``, in the tables' canonical column order (by name: a run's
    and :meth:`Context.from_frames`' order, whatever the input's).

    With declared quasi-identifiers: the quasi-identifiers (what a register or another release
    holds about a person) against every other tabular column (the rest of the person's record), so
    the attack asks whether the release links a person's identifying columns to the rest of their
    record; when every tabular column is a quasi-identifier they are split into halves. Without
    roles: every tabular column split into a first half of ``ceil(p / 2)`` columns and the rest.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [30, 40], "sex": ["F", "M"], "job": ["a", "b"], "pay": [1, 2]})
    >>> default_split(Context.from_frames(df, df, None, {"quasi_identifiers": ["pay", "age"]}))
    (['age', 'pay'], ['job', 'sex'])
    >>> default_split(Context.from_frames(df, df))
    (['age', 'job'], ['pay', 'sex'])
    """
    tab = tabular_columns(ctx)
    declared = set(ctx.tables.schema.quasi_identifiers)
    qis = [c for c in tab if c in declared]
    rest = [c for c in tab if c not in declared]
    if qis and rest:
        return qis, rest
    cols = qis or tab
    if len(cols) < 2:
        raise ConfigError("linkability needs at least two tabular columns to split into aux_cols: "
                          "pass aux_cols=[[...], [...]] or add columns")
    h = (len(cols) + 1) // 2
    return cols[:h], cols[h:]


def _check_aux(ctx: Context, aux_cols: Any) -> tuple[list[str], list[str]]:
    if (not isinstance(aux_cols, (list, tuple)) or len(aux_cols) != 2
            or not all(isinstance(h, (list, tuple)) and len(h) > 0 for h in aux_cols)):
        raise ConfigError("parameter 'aux_cols' must be two non-empty lists of columns, e.g. "
                          "[['age', 'zip'], ['income', 'job']]")
    return (check_columns(ctx, aux_cols[0], "aux_cols[0]"), check_columns(ctx, aux_cols[1], "aux_cols[1]"))


def random_links(n_syn: int, n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Naive attacker: two independent random ``k``-subsets of the synthetic rows per target;
    returns whether each pair of subsets intersects."""
    def subsets() -> np.ndarray:
        out = rng.integers(0, n_syn, (n, k))
        for _ in range(1000):  # redraw rows holding a repeated index (rare; vectorised per round)
            s = np.sort(out, axis=1)
            bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1)) if k > 1 else np.zeros(0, int)
            if bad.size == 0:
                break
            out[bad] = rng.integers(0, n_syn, (bad.size, k))
        return out

    a, b = subsets(), subsets()
    return _intersects(a, b)


def _intersects(a: np.ndarray, b: np.ndarray, chunk: int = 65_536) -> np.ndarray:
    """Row-wise: do index sets ``a[i]`` and ``b[i]`` share a valid (>= 0) index? (In chunks of
    rows: at most ``chunk * k * k`` booleans at a time.)"""
    out = np.zeros(a.shape[0], dtype=bool)
    for start in range(0, a.shape[0], chunk):  # loop over chunks of rows
        x, y = a[start:start + chunk], b[start:start + chunk]
        eq = (x[:, :, None] == y[:, None, :]) & (x[:, :, None] >= 0)
        out[start:start + chunk] = eq.any(axis=(1, 2))
    return out


def link_flags(ctx: Context, cols_a: list[str], cols_b: list[str], k: int) -> RecordFlags:
    """Per training and per control record (every one, duplicates kept): do its two halves share
    one of their ``k`` nearest synthetic rows? Decided without the labels (one neighbour search per
    half over the pooled real records, :func:`._common.pooled_neighbours`)."""
    a, b = pooled_neighbours(ctx, cols_a, k), pooled_neighbours(ctx, cols_b, k)
    linked = _intersects(a, b)
    n_o = ctx.data.n_rows("original")
    rec, row = _shared(a, b, np.flatnonzero(linked))
    pairs = release_ties(ctx, tabular_columns(ctx), rec, row,
                         "among the nearest release rows of both halves of the record")
    return RecordFlags(linked[:n_o], linked[n_o:], pairs=pairs)


def _shared(a: np.ndarray, b: np.ndarray, at: np.ndarray, chunk: int = 65_536
            ) -> tuple[np.ndarray, np.ndarray]:
    """For the rows ``at``: every (row, index) with the valid index in both ``a[row]`` and
    ``b[row]`` (in chunks of rows, as :func:`_intersects`)."""
    recs, idx = [], []
    for start in range(0, at.size, chunk):  # loop over chunks of rows
        r = at[start:start + chunk]
        x, y = a[r], b[r]
        both = ((x[:, :, None] == y[:, None, :]) & (x[:, :, None] >= 0)).any(axis=2)
        i, j = np.nonzero(both)
        recs.append(r[i])
        idx.append(x[i, j])
    if not recs:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(recs).astype(np.int64), np.concatenate(idx).astype(np.int64)


def _link_reason(rec: Any) -> str:
    """Why a linkability record is listed (its card's reason)."""
    return f"linked to its release row at distance {fmt_number(rec.get('distance'))}"


@register("linkability", family=FAMILY, direction=DIRECTION,
          params=[*common_params(2000),
                  Param("aux_cols", None, "two lists of columns, the two datasets the attacker links "
                        "(default: the declared quasi-identifiers against every other column; without "
                        "them all tabular columns split into halves)",
                        kind=(list, tuple)),
                  Param("n_neighbors", 1, "synthetic neighbours looked up per half (PETsARD uses 10)",
                        kind="positive int")],
          thresholds=THRESHOLDS, optional_needs=("control",), aliases=("anonymeter_linkability",),
          description="linkability risk (anonymeter): share of original rows whose two halves of "
                      "columns share a nearest synthetic neighbour, beyond control",
          risk='linkability',
          knowledge=("two separate sets of a person's columns (e.g. two data sets); links them through "
                     'the release'),
          presets=('privacy', 'full'),
          order=130,
          backend='any',
          records=RecordsCard(reason=_link_reason, meaning="a training record linked to its release row"),
          warmup=True,
          explainer=("anonymeter's linkability attack: an attacker who holds two parts of a person's "
                     'record links them through their closest release rows; successes on training '
                     'records against held-out people.'))
@memoised('linkability')
def linkability(ctx: Context, *, aux_cols: Any = None, n_neighbors: int = 1, n_attacks: int = 2000,
                max_n_attacks: bool = False, confidence_level: float = 0.95,
                n_records: int = 20) -> MetricResult:
    """Linkability attack: link the two halves of a target's columns through the synthetic data."""
    cols_a, cols_b = default_split(ctx) if aux_cols is None else _check_aux(ctx, aux_cols)
    tab = tabular_columns(ctx)
    canon = {r: canonical(ctx, r, tab) for r in ctx.tables.roles}
    avail = {"original": canon["original"].n}
    if ctx.tables.has_control:
        avail["control"] = canon["control"].n
    n, note = resolve_n_attacks(n_attacks, max_n_attacks, avail, ctx.metric)
    notes: list[str] = []
    info = [note] if note else []
    n_syn = canon["synthetic"].n
    k = n_neighbors
    if k > n_syn:
        notes.append(f"n_neighbors={n_neighbors} exceeds the {n_syn} distinct synthetic rows: used {n_syn}")
        k = n_syn
    rng = ctx.rng("targets")
    t_ori = np.sort(rng.choice(canon["original"].n, n, replace=False))
    t_ctl = np.sort(rng.choice(canon["control"].n, n, replace=False)) if ctx.tables.has_control else None

    queries = [("original", canon["original"].rows[t_ori])]
    if t_ctl is not None:
        queries.append(("control", canon["control"].rows[t_ctl]))
    idx, dist = [], []
    evidenced = ctx.tables.has_control and ctx.evidence  # every record's search: the targets' answers
    for half in (cols_a, cols_b):  # both target sets (original + control) in one k-NN call per half
        d, i = target_neighbours(ctx, queries, half, k, pooled=evidenced)
        idx.append(i)
        dist.append(d)
    linked = _intersects(idx[0], idx[1])
    n_succ = int(linked[:n].sum())
    n_ctl = int(linked[n:].sum()) if t_ctl is not None else None
    base = random_links(n_syn, n, k, ctx.rng("baseline"))

    out = Outcome(n, n_succ, n, int(base.sum()), n if t_ctl is not None else None, n_ctl)
    d, _att, base_rate, _ctl, warning = summarise(out, confidence_level)
    d.update(aux_cols=[list(cols_a), list(cols_b)], n_neighbors=k, notes=info)
    records = None
    if n_records:
        records = _records(canon, t_ori, idx, dist, linked[:n], n_records)
    text = (f"naive attacker: two random sets of {k} synthetic row(s) per target (baseline_rate); "
            "the risk itself is " + d["relative_to"])
    evidence = None
    if evidenced:  # the verdict's evidence: every training and every
        # control record
        evidence = Evidence.from_flags(
            f"share of records whose two halves of columns share one of their {k} nearest release "
            "row(s) (every training and every control record attacked)",
            link_flags(ctx, list(cols_a), list(cols_b), k), risk="linkability",
            baseline="control records attacked with the same release", confidence_level=confidence_level,
            note=f"halves {list(cols_a)} and {list(cols_b)}")
    return build_result(ctx, ctx.metric or "linkability", d, base_rate, warning, notes, records, text,
                        evidence)


def _records(canon: dict, t_ori: np.ndarray, idx: list[np.ndarray], dist: list[np.ndarray],
             linked: np.ndarray, n_records: int) -> list[dict[str, Any]]:
    """Linked original rows, closest links first (smallest summed distance of a shared neighbour)."""
    rows = np.flatnonzero(linked)
    if rows.size == 0:
        return []
    a, b = idx[0][rows], idx[1][rows]
    da, db = dist[0][rows], dist[1][rows]
    eq = (a[:, :, None] == b[:, None, :]) & (a[:, :, None] >= 0)
    total = np.where(eq, da[:, :, None] + db[:, None, :], np.inf)
    flat = total.reshape(rows.size, -1)
    best = flat.argmin(axis=1)
    score = flat[np.arange(rows.size), best]
    shared = a[np.arange(rows.size), best // a.shape[1]]
    order = np.lexsort((canon["original"].rows[t_ori[rows]], score))[:n_records]
    syn_rows = canon["synthetic"].rows
    return [{"row": int(canon["original"].rows[t_ori[rows[i]]]),
             "synthetic_row": int(syn_rows[shared[i]]), "distance": float(score[i])} for i in order]
