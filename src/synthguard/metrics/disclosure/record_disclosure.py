"""Disclosure measured on real records (synthpop 1.9-2's ``disclosure()``: ``repU`` and ``DiSCO``).

For a synthetic release, k-anonymity of synthetic classes says nothing about real people. These
metrics start from the real records instead, and ask what an intruder who knows a person's
quasi-identifiers (QIs) learns from the release:

* ``replicated_uniques`` (repU, identity disclosure): the share of original records that are
  unique on the QIs in the original and whose QI combination is unique in the synthetic data
  too (synthpop's ``repU``, the headline), or merely present there (synthpop's ``UiOiS``,
  reported beside it): the intruder finds "their" synthetic record.
* ``disco`` (DiSCO, attribute disclosure, Raab, Nowok and Dibben 2024): the share of original
  records whose synthetic QI cell is *disclosive* (every synthetic record sharing their QIs
  carries one sensitive value; at synthpop's defaults one-record cells count) and *correct*
  (that value is the record's true one). DiSDiO (the original cell is disclosive too), DiS
  (disclosive in synthetic, right or wrong) and DiO are reported beside it. synthpop's
  ``exclude_ov_denom_lim`` (off by default) drops records whose key x target cell holds more than
  ``denom_lim`` records; ``min_cell`` (synthguard's own, off by default) ignores synthetic cells
  of fewer records (the rule of synthguard < 0.x, not synthpop's).

Both are group-bys on integer codes of the QIs (exact values, missing a category of its own), as
synthpop's default (``ngroups_keys = NULL``: every numeric key a factor of its exact values).
``continuous_column_names`` names QIs to cut into ``num_discrete_bins`` bins whose edges come from
the original AND control records pooled (label-free).

With a control table (real records never trained on), each metric states its evidence for the
calibrated verdict: per-record flags over every training and every control record against the
same synthetic data (:class:`~synthguard.core.results.RecordFlags`). See ``docs/disclosure.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...core.results import Baseline, Evidence, MetricResult, RecordFlags, RowPairs
from ...engine.backend import LocalRelation
from ...errors import ConfigError
from ...registry import LEVEL_FROM_THRESHOLDS, Context, Param, RecordsCard, register
from ...stats import wilson_interval
from ._common import (
    BINNINGS,
    backend_bins,
    evidence_roles,
    has_control,
    joint_ids,
    resolve_fields,
)

__all__ = ["replicated_uniques", "disco", "replicated_unique_flags", "disco_flags"]


def _params() -> list[Param]:
    return [
        Param("quasi_identifiers", None, "columns the intruder knows (default: the metadata's "
              "quasi_identifiers)", (list, tuple)),
        Param("continuous_column_names", None, "columns to bin (edges from original and control "
              "pooled); None = every QI exact, as synthpop's default", (list, tuple)),
        Param("num_discrete_bins", 10, "number of bins of the binned columns", "positive int"),
        Param("binning", "quantile", "bin edges from the real records (original and control "
              "pooled): quantile or equal_width", str, choices=BINNINGS),
        Param("max_records", 100, "how many exposed original rows to list (0 = none)", "non-negative int"),
    ]


def _to_bin(ctx: Context, name: str, value: Any, used: list[str]) -> list[str]:
    if value is None:
        return []
    cont = [str(c) for c in ([value] if isinstance(value, str) else value)]
    bad = [c for c in cont if c not in ctx.tables.schema.columns]
    if bad:
        raise ConfigError(f"metric {name!r}: continuous_column_names names column(s) {bad} that the data "
                          "does not have")
    return [c for c in cont if c in used]


def _roles(ctx: Context) -> tuple[str, ...]:
    return ("original", "synthetic", "control") if has_control(ctx) else ("original", "synthetic")


def _bins(ctx: Context, cont: list[str], bins: int, binning: str) -> dict[str, np.ndarray]:
    """The bin edges of ``cont`` (from the real records pooled, :func:`~._common.evidence_roles`),
    from the backend (one process or a cluster); :func:`~._common.column_codes` cuts at the same."""
    return backend_bins(ctx.data, cont, bins, binning, evidence_roles(ctx))


def _key_pairs(ctx: Context, qis: list[str], bins: dict[str, np.ndarray], tie: str) -> RowPairs | None:
    """The release rows behind the flags: each release row ties to the real records (training,
    then control) with its quasi-identifiers, cut at the ``bins`` the flags were counted with (the
    backend's own key ids, one number per row; on a cluster too)."""
    ids = ctx.data.key_ids(qis, ("original", "control", "synthetic"), bins=bins)
    return RowPairs.groups(np.r_[ids["original"], ids["control"]], ids["synthetic"], tie=tie, action="review")


# ---------------------------------------------------------------- replicated uniques
def replicated_unique_flags(real: np.ndarray, syn: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per real record: unique on the QIs in ``real`` (synthpop's UiO); unique there and present
    in ``syn`` (UiOiS); unique there and unique in ``syn`` (synthpop's replicated unique, repU).

    The rules are :func:`replicated_uniques`' own (:data:`_REPU_TABLES`), applied to the key
    lookup of ``real`` built from the codes (the metric asks its backend for the same lookup).

    Parameters
    ----------
    real, syn : ndarray of int64, shape (n, q) / (m, q)
        QI codes from shared vocabularies.

    Examples
    --------
    >>> import numpy as np
    >>> real = np.array([[0], [1], [1], [2]])
    >>> syn = np.array([[0], [2], [2]])
    >>> [f.tolist() for f in replicated_unique_flags(real, syn)]
    [[True, False, False, True], [True, False, False, True], [True, False, False, False]]
    """
    ir, is_ = joint_ids(real, syn)
    rows = LocalRelation(pd.DataFrame({"o": _cell_count(ir, ir), "s": _cell_count(ir, is_)}))
    got = rows.flags(**dict(zip(("uio", "uiois", "repu"), _REPU_TABLES, strict=True)))
    return got["uio"], got["uiois"], got["repu"]


def _cell_count(ids: np.ndarray, *counted: np.ndarray) -> np.ndarray:
    """Per row of dense key ids ``ids``: the rows of the tables ``counted`` (ids of the same
    vocabulary) with its key (a key lookup of :meth:`Backend.key_rows
    <synthguard.engine.backend.Backend.key_rows>`, from codes)."""
    n_ids = max(int(i.max(initial=-1)) for i in (ids, *counted)) + 1
    count = np.zeros(n_ids, dtype=np.int64)
    for c in counted:  # loop over tables
        count += np.bincount(c, minlength=n_ids)
    return count[ids]


REPU_STATISTIC = ("share of real records whose quasi-identifier combination is unique in the pooled real "
                  "data (training and control together) and unique in the synthetic data too "
                  "(synthpop's replicated uniques, judged without the labels)")


@register("replicated_uniques", family="disclosure", direction="lower is safer", params=_params(),
          thresholds={"medium": 0.01, "high": 0.05}, aliases=("repu", "replicated_unique"),
          description="share of original records unique on the quasi-identifiers whose combination is "
                      "unique in the synthetic data too (synthpop's repU); identity disclosure on real "
                      "records, tested against control records",
          risk='singling_out',
          knowledge='the release only; takes rows unique in the release as real people',
          sees=('exact', 'rare'),
          presets=('privacy', 'full'),
          order=210,
          backend='any',
          records=RecordsCard(reason=lambda rec: "unique training row replicated in the release", meaning="a training row unique among real people whose combination the release replicates"),
          explainer=("synthpop's repU: records unique on the quasi-identifiers among real people whose "
                     'combination the release replicates, training against held-out people.'))
def replicated_uniques(ctx: Context, *, quasi_identifiers: Any = None, continuous_column_names: Any = None,
                       num_discrete_bins: int = 10, binning: str = "quantile",
                       max_records: int = 100) -> MetricResult:
    """synthpop's replicated uniques (``disclosure()``'s ``repU``) on the original records.

    Parameters
    ----------
    ctx : Context
        Evaluation context.
    quasi_identifiers : list of str, optional
        Default: the metadata's ``quasi_identifiers`` (skipped with a reason when none).
    continuous_column_names : list of str, optional
        QIs to bin (default: none, every QI exact, as synthpop's default).
    num_discrete_bins : int
        Number of bins.
    binning : {"quantile", "equal_width"}
        Bin edges from the original and control records pooled.
    max_records : int
        Replicated original rows listed in ``records``.

    Notes
    -----
    The value is synthpop 1.9-2's ``repU`` (at ``exclude_ov_denom_lim = FALSE``, its default):
    replicated uniques over **all** original records. The evidence compares training with control
    records: a record is flagged when its combination is unique among the real records pooled
    (training and control, label-free) and unique in the synthetic data; every training and every
    control record carries a flag.

    Every count is a key lookup of the run's backend (``ctx.data``), so the metric runs unchanged
    on the Dask backend, bins included (:func:`~._common.backend_bins`).

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context
    >>> o = pd.DataFrame({"a": [1, 2, 2, 3]})
    >>> s = pd.DataFrame({"a": [1, 3, 3]})
    >>> replicated_uniques(Context.from_frames(o, s), quasi_identifiers=["a"]).value
    0.25
    """
    name = "replicated_uniques"
    qis, _ = resolve_fields(ctx, name, "quasi_identifiers", quasi_identifiers, None, None)
    cont = _to_bin(ctx, name, continuous_column_names, qis)
    roles = _roles(ctx)
    data = ctx.data
    bins = _bins(ctx, cont, num_discrete_bins, binning)
    # per original record: original and synthetic records with its quasi-identifiers
    rows = data.key_rows("original", {"o": (qis, ("original",)), "s": (qis, ("synthetic",))}, bins=bins)
    k_u, k_any, k_rep = rows.sums(*_REPU_TABLES)
    n = data.n_rows("original")
    value = k_rep / n if n else float("nan")
    ci = wilson_interval(k_rep, n) if n else None
    details: dict[str, Any] = {
        "quasi_identifiers": qis, "continuous_column_names": cont,
        "num_discrete_bins": num_discrete_bins, "binning": binning,
        "n_original": n, "n_unique_original": k_u, "share_unique_original": k_u / n if n else None,
        "n_replicated_uniques": k_rep, "share_replicated_uniques": value,
        "n_replicated_any": k_any, "share_replicated_any": k_any / n if n else None,
        "replicated_share_of_uniques": k_rep / k_u if k_u else None,
        "definition": "replicated unique: unique on the QIs in the original and unique in the synthetic "
                      "data (synthpop 1.9-2 disclosure(): repU); replicated_any: unique in the original "
                      "and present in the synthetic (synthpop's UiOiS)",
    }
    evidence = None
    if "control" in roles:
        evidence, sub = _repu_evidence(ctx, qis, bins)
        details["evidence_rows_per_side"] = sub
    level = LEVEL_FROM_THRESHOLDS
    top = rows.top(max_records, ["pos"], [True], where=_replicated)
    recs = [{"original_row": int(i)} for i in top["pos"]]
    warning = None
    if k_rep:
        warning = (f"{k_rep} original records are unique on {qis} and their combination is unique in the "
                   "synthetic data too: an intruder knowing their quasi-identifiers finds one record")
    return MetricResult(name=name, family="disclosure", value=value, direction="lower is safer",
                        baseline=Baseline(evidence.non_member if evidence else None,
                                          "the same share for control records (uniqueness at equal "
                                          "table sizes)" if evidence else "no baseline: no control given"),
                        ci=ci, n=n, risk_level=level, warning=warning, details=details, records=recs,
                        evidence=evidence)


def _unique_original(f: Any) -> Any:
    """synthpop's UiO per original record of a key lookup: unique in the original."""
    return f["o"] == 1


def _replicated_any(f: Any) -> Any:
    """synthpop's UiOiS: unique in the original, present in the release."""
    return _unique_original(f) & (f["s"] >= 1)


def _replicated(f: Any) -> Any:
    """repU per original record of a key lookup: unique in the original, unique in the release."""
    return _unique_original(f) & (f["s"] == 1)


#: UiO, UiOiS and repU as functions of a key lookup's frame (``o`` / ``s``: original / synthetic
#: records with the record's quasi-identifiers): :func:`replicated_uniques` and
#: :func:`replicated_unique_flags` both count with these
_REPU_TABLES = (_unique_original, _replicated_any, _replicated)


def _repu_evidence(ctx: Context, qis: list[str], bins: dict[str, np.ndarray]) -> tuple[Evidence, int]:
    """Per-record repU flags of every training and every control record, with the records a copy
    would flag.

    A record is flagged when its key is unique in the *pooled* real data (training and control
    together) and unique in the synthetic data. Uniqueness is judged without the labels, so the
    flags do not move when training and control labels are exchanged and the test stays exact
    (uniqueness within each record's own table would change with the labels: the flags would be
    functions of which records are members). The headline value stays synthpop's repU. The flags
    are key lookups of the backend (one byte per record back from a cluster).
    """
    data = ctx.data
    lookups = {"r": (qis, ("original", "control")), "s": (qis, ("synthetic",))}
    flag = lambda f: (f["r"] == 1) & (f["s"] == 1)  # noqa: E731
    # an exact copy of a training record in the release sets its flag when its key is unique in the
    # pooled real data and absent from the release (one synthetic record afterwards); such a key is
    # rare (unique among the real records pooled) by construction
    o = data.key_rows("original", lookups, bins=bins).flags(flag=flag,
                                                           exact=lambda f: (f["r"] == 1) & (f["s"] == 0))
    c = data.key_rows("control", lookups, bins=bins).flags(flag=flag)
    # the release row behind a flag: the one release row with its quasi-identifiers
    pairs = _key_pairs(ctx, qis, bins, "the only release row with its quasi-identifiers")
    rf = RecordFlags(o["flag"], c["flag"], {"exact": o["exact"], "rare": o["exact"]}, pairs=pairs)
    ev = Evidence.from_flags(REPU_STATISTIC, rf, sees=("exact", "rare"), risk="singling_out",
                             baseline="control records (never trained on) against the same synthetic "
                                      "data, uniqueness judged in the pooled real data")
    return ev, int(min(o["flag"].size, c["flag"].size))


# ---------------------------------------------------------------- DiSCO
def disco_flags(real_keys: np.ndarray, real_target: np.ndarray, syn_keys: np.ndarray,
                syn_target: np.ndarray, *, denom_lim: int = 5, exclude_ov_denom_lim: bool = False,
                min_cell: int | None = None, cell_count: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per real record, synthpop 1.9-2's ``disclosure()`` cell rules for one target.

    * ``iS``: its key occurs in the synthetic data;
    * ``dis`` (DiS): the synthetic records sharing its key all carry one target value (any size,
      one-record cells included);
    * ``disco`` (DiSCO): ``dis`` and that value is the record's own;
    * ``dio`` (DiO): the real records (of ``real``) sharing its key all carry its target value;
    * ``disdio`` (DiSDiO): ``disco`` and ``dio``;
    * ``responds``: ``disco`` would hold after an exact copy of the record is added to the
      synthetic data (its key absent there, or its synthetic cell single-valued with its value).

    With ``exclude_ov_denom_lim`` every flag is cleared for records whose key x target cell holds
    more than ``denom_lim`` records (``cell_count``, default: counted in ``real``, as synthpop
    counts the original's cells). ``min_cell`` (not synthpop's) requires at least that many
    synthetic records in the key cell.

    The rules are :func:`disco`'s own (:class:`_DiscoCells`), applied to the key lookup of
    ``real`` built from the codes (the metric asks its backend for the same lookup): ``s`` / ``o``
    records with the record's key, ``st0`` / ``ot0`` with its key and target, ``ds0`` distinct
    targets in its synthetic key cell, ``pt0`` the exclusion's cell size.

    Parameters
    ----------
    real_keys, syn_keys : ndarray of int64, shape (n, q) / (m, q)
        QI codes (shared vocabularies).
    real_target, syn_target : ndarray of int64, shape (n,) / (m,)
        Target codes (shared vocabulary).
    denom_lim : int
        synthpop's ``denom_lim`` (acts only with ``exclude_ov_denom_lim``).
    exclude_ov_denom_lim : bool
        synthpop's ``exclude_ov_denom_lim``.
    min_cell : int, optional
        Smallest synthetic key cell that can be disclosive (None = any).
    cell_count : ndarray of int, shape (n,), optional
        Key x target cell size per real record for the exclusion.

    Examples
    --------
    >>> import numpy as np
    >>> rk, rt = np.array([[0], [0], [1]]), np.array([5, 6, 7])
    >>> sk, st = np.array([[0], [1]]), np.array([5, 7])
    >>> disco_flags(rk, rt, sk, st)["disco"].tolist()
    [True, False, True]
    """
    kr, ks = joint_ids(real_keys, syn_keys)
    # key x target cells: pair ids of the keys with the target (shared vocabularies)
    pr, ps = joint_ids(np.column_stack([real_keys, real_target]), np.column_stack([syn_keys, syn_target]))
    first = np.unique(ps, return_index=True)[1]  # one synthetic row per key x target cell
    f = pd.DataFrame({"s": _cell_count(kr, ks), "o": _cell_count(kr, kr),
                      "st0": _cell_count(pr, ps), "ot0": _cell_count(pr, pr),
                      "ds0": _cell_count(kr, ks[first])})
    # the exclusion's cell sizes: ``cell_count``, else counted in ``real`` as synthpop does
    f["pt0"] = f["ot0"] if cell_count is None else np.asarray(cell_count, dtype=np.int64)
    cells = _DiscoCells(1, int(denom_lim), bool(exclude_ov_denom_lim), None if min_cell is None else int(min_cell))
    rows = LocalRelation(f)
    disco, disdio, dis, dio = cells.tables(0, pooled=True)
    return rows.flags(iS=lambda f: (f["s"] >= 1) & cells._keep(f, 0, True), dis=dis, disco=disco, dio=dio, disdio=disdio,
                      responds=cells.responds)


class _DiscoCells:
    """synthpop's cell rules (DiSCO, DiSDiO, DiS, DiO; :func:`disco` and :func:`disco_flags`) as
    functions of a key lookup's frame (:meth:`Backend.key_rows
    <synthguard.engine.backend.Backend.key_rows>`), one set of cell counts per record:

    * ``s`` / ``o``: synthetic / original records with its quasi-identifiers (its key cell);
    * ``st{j}`` / ``ot{j}``: of them, those with its value of sensitive column ``j``;
    * ``ds{j}``: distinct values of column ``j`` in its synthetic key cell;
    * ``pt{j}``: original and control records with its key and value (the label-free exclusion);
    * ``r``: original and control records with its key (rare: one).

    DiSCO: the synthetic key cell (at least ``min_cell`` records, one by default) holds only the
    record's value, ``st == s``; DiS: it holds one value, ``ds == 1``; DiO: the original key cell
    holds only its value, ``ot == o``; a copy responds when the cell is absent or holds only its
    value and would reach ``min_cell``. ``exclude_ov_denom_lim`` keeps records whose key x target
    cell holds at most ``denom_lim`` records (original: ``ot``; the evidence: ``pt``).
    """

    def __init__(self, n_sens: int, denom_lim: int, exclude: bool, min_cell: int | None) -> None:
        self.n_sens, self.denom_lim, self.exclude, self.min_cell = n_sens, denom_lim, exclude, min_cell
        self.floor = min_cell or 1

    def lookups(self, qis: list[str], sens: list[str], role: str, control: bool) -> dict[str, tuple]:
        out: dict[str, tuple] = {"s": (qis, ("synthetic",))}
        if role == "original":
            out["o"] = (qis, ("original",))
        for j, t in enumerate(sens):  # loop over sensitive columns
            out[f"st{j}"] = (qis + [t], ("synthetic",))
            if role == "original":
                out[f"ot{j}"] = (qis + [t], ("original",))
                out[f"ds{j}"] = (qis, ("synthetic",), [t])
            if control and self.exclude:
                out[f"pt{j}"] = (qis + [t], ("original", "control"))
        if role == "original" and control:
            out["r"] = (qis, ("original", "control"))
        return out

    def _keep(self, f: Any, j: int, pooled: bool) -> Any:
        return f[f"{'pt' if pooled else 'ot'}{j}"] <= self.denom_lim if self.exclude else True

    def _disco(self, f: Any, j: int) -> Any:
        return (f["s"] >= self.floor) & (f[f"st{j}"] == f["s"])

    def tables(self, j: int, pooled: bool = False) -> list[Any]:
        """DiSCO, DiSDiO, DiS and DiO of column ``j`` (cells over denom_lim counted in the original,
        or with ``pooled`` in ``pt``: :func:`disco_flags`' ``cell_count``)."""
        def keep(f: Any) -> Any:
            return self._keep(f, j, pooled)

        def dio(f: Any) -> Any:
            return f[f"ot{j}"] == f["o"]

        return [lambda f: self._disco(f, j) & keep(f),
                lambda f: self._disco(f, j) & dio(f) & keep(f),
                lambda f: (f["s"] >= self.floor) & (f[f"ds{j}"] == 1) & keep(f),
                lambda f: dio(f) & keep(f)]

    def hit(self, f: Any) -> Any:
        """DiSCO on any sensitive column (the headline; cells counted in the original)."""
        out = np.zeros(len(f), dtype=bool)
        for j in range(self.n_sens):  # loop over sensitive columns, vectorised over records
            out |= np.asarray(self._disco(f, j) & self._keep(f, j, False), dtype=bool)
        return out

    def flag(self, f: Any) -> Any:
        """The evidence's flag: DiSCO on any column, cells over denom_lim counted pooled."""
        out = np.zeros(len(f), dtype=bool)
        for j in range(self.n_sens):  # loop over sensitive columns
            out |= np.asarray(self._disco(f, j) & self._keep(f, j, True), dtype=bool)
        return out

    def responds(self, f: Any) -> Any:
        """An exact copy of the record in the release would make it DiSCO on some column."""
        out = np.zeros(len(f), dtype=bool)
        for j in range(self.n_sens):  # loop over sensitive columns
            out |= np.asarray((f[f"st{j}"] == f["s"]) & (f["s"] + 1 >= self.floor) & self._keep(f, j, True),
                              dtype=bool)
        return out


DISCO_STATISTIC = ("share of real records whose sensitive value is disclosed correctly (DiSCO) on at "
                   "least one sensitive column: every synthetic record sharing their quasi-identifiers "
                   "carries their true value")


@register("disco", family="disclosure", direction="lower is safer",
          params=[*_params(),
                  Param("sensitive", None, "sensitive (target) columns (default: the metadata's sensitive)",
                        (list, tuple)),
                  Param("denom_lim", 5, "synthpop's denom_lim: with exclude_ov_denom_lim, key x target "
                        "cells of more records are excluded", "positive int"),
                  Param("exclude_ov_denom_lim", False, "synthpop's exclude_ov_denom_lim: drop records "
                        "whose key x target cell holds more than denom_lim records", bool),
                  Param("min_cell", None, "not synthpop's: synthetic key cells of fewer records are "
                        "never disclosive (5 = synthguard's old rule); None = every cell counts", "positive int")],
          thresholds={"medium": 0.01, "high": 0.05}, aliases=("disco_disclosure",),
          description="share of original records whose sensitive value every synthetic record with their "
                      "quasi-identifiers carries (disclosive in synthetic, correct in original: DiSCO, "
                      "Raab et al. 2024), any sensitive column; tested against control records",
          risk='inference',
          knowledge="a person's key columns; guesses the sensitive column when the release agrees",
          sees=('exact', 'rare'),
          presets=('privacy', 'full'),
          order=220,
          backend='any',
          explainer=("synthpop's DiSCO: records whose sensitive value the release discloses with "
                     'certainty from the quasi-identifiers, training against held-out people.'))
def disco(ctx: Context, *, quasi_identifiers: Any = None, continuous_column_names: Any = None,
          num_discrete_bins: int = 10, binning: str = "quantile", max_records: int = 100,
          sensitive: Any = None, denom_lim: int = 5, exclude_ov_denom_lim: bool = False,
          min_cell: int | None = None) -> MetricResult:
    """DiSCO (and DiSDiO, DiS, DiO) of the original records, per sensitive column and for any of them.

    Parameters
    ----------
    sensitive : list of str, optional
        Target columns (default: the metadata's ``sensitive``); exact values unless named in
        ``continuous_column_names``.
    denom_lim : int
        synthpop's ``denom_lim`` (default 5); acts only with ``exclude_ov_denom_lim``.
    exclude_ov_denom_lim : bool
        synthpop's option (default False): records whose key x target cell holds more than
        ``denom_lim`` original records are not counted (synthpop zeroes those cells).
    min_cell : int, optional
        Not synthpop's: synthetic key cells of fewer records are never disclosive (``5``
        reproduces synthguard's earlier rule). Default None: every cell counts, as synthpop.

    See :func:`replicated_uniques` for the other parameters.

    Notes
    -----
    The value is the share of original records that are DiSCO on at least one sensitive column
    (with one sensitive column, synthpop 1.9-2's ``DiSCO`` at the same options); ``per_target``
    gives DiSCO, DiSDiO, DiS and DiO per column and ``max_disco`` the largest. The evidence flags
    every training and every control record attacked with the same synthetic data (size-free:
    a record's flag depends on its own values and the release; with ``exclude_ov_denom_lim`` the
    cell sizes are counted over the original and control records pooled, so the exclusion is
    label-free).

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.registry import Context
    >>> o = pd.DataFrame({"a": [1, 1, 2], "t": ["x", "y", "z"]})
    >>> s = pd.DataFrame({"a": [1, 2], "t": ["x", "z"]})
    >>> disco(Context.from_frames(o, s), quasi_identifiers=["a"], sensitive=["t"]).value
    0.6666666666666666
    """
    name = "disco"
    qis, sens = resolve_fields(ctx, name, "quasi_identifiers", quasi_identifiers, "sensitive", sensitive)
    cont = _to_bin(ctx, name, continuous_column_names, qis + sens)
    control = "control" in _roles(ctx)
    data = ctx.data
    bins = _bins(ctx, cont, num_discrete_bins, binning)
    cells = _DiscoCells(len(sens), int(denom_lim), bool(exclude_ov_denom_lim),
                        None if min_cell is None else int(min_cell))
    rows = data.key_rows("original", cells.lookups(qis, sens, "original", control), bins=bins)
    # per sensitive column DiSCO, DiSDiO, DiS and DiO of the original records (synthpop's tables,
    # cells over denom_lim counted in the original), then DiSCO on any column
    fns = [fn for j in range(len(sens)) for fn in cells.tables(j)]
    *counts, k = rows.sums(*fns, cells.hit)
    n = data.n_rows("original")
    per_target: dict[str, dict[str, Any]] = {}
    for j, col in enumerate(sens):  # loop over sensitive columns
        got = dict(zip(("disco", "disdio", "dis", "dio"), counts[4 * j:4 * j + 4], strict=True))
        per_target[col] = {key: float(v) / max(n, 1) for key, v in got.items()}
        per_target[col]["n_disco"] = int(got["disco"])
    value = k / n if n else float("nan")
    details: dict[str, Any] = {
        "quasi_identifiers": qis, "sensitive": sens, "continuous_column_names": cont,
        "num_discrete_bins": num_discrete_bins, "binning": binning, "denom_lim": int(denom_lim),
        "exclude_ov_denom_lim": bool(exclude_ov_denom_lim), "min_cell": cells.min_cell,
        "n_original": n, "n_disco_any": k, "per_target": per_target,
        "max_disco": max((t["disco"] for t in per_target.values()), default=None),
        "definition": "DiSCO (synthpop 1.9-2 disclosure()): the synthetic records sharing the record's "
                      "QIs (any number, one included) all carry one value of the target, and it is the "
                      "record's true value; DiSDiO: DiSCO and the original records sharing its QIs all "
                      "carry that value too; DiS: the synthetic cell is disclosive, right or wrong; DiO: "
                      "the original cell is. exclude_ov_denom_lim drops records whose key x target cell "
                      "holds more than denom_lim original records; min_cell (not synthpop's) needs that "
                      "many synthetic records in the key cell",
    }
    evidence = None
    if control:
        o = rows.flags(flag=cells.flag, exact=cells.responds, rare=lambda f: f["r"] == 1)
        c = data.key_rows("control", cells.lookups(qis, sens, "control", control), bins=bins).flags(
            flag=cells.flag)
        # the release rows behind a flag: every release row with its quasi-identifiers
        pairs = _key_pairs(ctx, qis, bins, "a release row with its quasi-identifiers (every such row "
                           "carries its sensitive value)")
        rf = RecordFlags(o["flag"], c["flag"], {"exact": o["exact"], "rare": o["exact"] & o["rare"]},
                         pairs=pairs)
        evidence = Evidence.from_flags(
            DISCO_STATISTIC, rf, sees=("exact", "rare"), risk="inference",
            baseline="control records (never trained on) against the same synthetic data",
            note=("cells over denom_lim counted over original and control records pooled"
                  if exclude_ov_denom_lim else None))
    level = LEVEL_FROM_THRESHOLDS
    top = rows.top(max_records, ["pos"], [True], where=cells.hit)
    recs = [{"original_row": int(i)} for i in top["pos"]]
    warning = None
    if k:
        warning = (f"{k} original records have a sensitive value that every synthetic record with their "
                   "quasi-identifiers carries")
    return MetricResult(name=name, family="disclosure", value=value, direction="lower is safer",
                        baseline=Baseline(evidence.non_member if evidence else None,
                                          "the same share for control records against the same synthetic "
                                          "data" if evidence else "no baseline: no control given"),
                        ci=wilson_interval(k, n) if n else None, n=n, risk_level=level, warning=warning,
                        details=details, records=recs, evidence=evidence)
