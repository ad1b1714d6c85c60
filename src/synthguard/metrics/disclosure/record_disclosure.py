"""Disclosure measured on real records (synthpop's ``replicated.uniques`` and ``disclosure()``).

For a synthetic release, k-anonymity of synthetic classes says nothing about real people. These
metrics start from the real records instead, and ask what an intruder who knows a person's
quasi-identifiers (QIs) learns from the release:

* ``replicated_uniques`` (repU, identity disclosure): the share of original records that are
  unique on the QIs in the original and whose QI combination is unique in the synthetic data
  too (synthpop's variant, the headline), or merely present there (reported beside it): the
  intruder finds "their" synthetic record.
* ``disco`` (DiSCO, attribute disclosure, Raab, Nowok and Dibben 2024): the share of original
  records whose synthetic QI cell is *disclosive* (every synthetic record sharing their QIs
  carries one sensitive value, in a cell of at least ``denom_lim`` synthetic records) and
  *correct* (that value is the record's true one). DiSDiO (the original cell is disclosive
  too) and DiS (disclosive in synthetic, right or wrong) are reported beside it.

Both are group-bys on integer codes of the QIs (exact values, missing a category of its own).
Numerical and datetime QIs with more than 100 distinct values (near-continuous: incomes,
measurements, timestamps) are cut into ``num_discrete_bins`` quantile bins of the original by
default: their exact values make almost every record unique and never replicated by chance.
Discrete-like QIs (age in years, codes) stay exact, as an intruder knows them; exact keys are
what lets the metrics see copied records. ``continuous_column_names`` overrides the choice
(``[]`` = every QI exact).

With a control table (real records never trained on), each metric states its evidence for the
calibrated verdict: the same statistic on the control records against the same synthetic data.
See ``docs/disclosure.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import ConfigError
from ...registry import Context, Param, register
from ...results import Baseline, Evidence, MetricResult, level_from_thresholds
from ...stats import wilson_interval
from ._common import (
    BINNINGS,
    check_non_negative_int,
    check_positive_int,
    column_codes,
    columns_to_bin,
    has_control,
    joint_ids,
    resolve_fields,
    thresholds,
)

__all__ = ["replicated_uniques", "disco", "replicated_unique_flags", "disco_flags", "AUTO_BIN_DISTINCT"]

AUTO_BIN_DISTINCT = 100  # numeric QIs with more distinct values are binned by default


def _binning(v: Any) -> str | None:
    return None if v in BINNINGS else f"must be one of {list(BINNINGS)}"


def _params() -> list[Param]:
    return [
        Param("quasi_identifiers", None, "columns the intruder knows (default: the metadata's "
              "quasi_identifiers)", (list, tuple)),
        Param("continuous_column_names", None, "columns to bin; None = every numerical/datetime "
              f"column used with more than {AUTO_BIN_DISTINCT} distinct original values; [] = none",
              (list, tuple)),
        Param("num_discrete_bins", 10, "number of bins of the binned columns", int,
              check=check_positive_int),
        Param("binning", "quantile", "bin edges from the original: quantile or equal_width", str,
              check=_binning),
        Param("max_records", 100, "how many exposed original rows to list (0 = none)", int,
              check=check_non_negative_int),
    ]


def _to_bin(ctx: Context, name: str, value: Any, used: list[str]) -> list[str]:
    if value is None:
        return columns_to_bin(ctx, used, AUTO_BIN_DISTINCT)
    cont = [str(c) for c in ([value] if isinstance(value, str) else value)]
    bad = [c for c in cont if c not in ctx.tables.schema.columns]
    if bad:
        raise ConfigError(f"metric {name!r}: continuous_column_names names column(s) {bad} that the data "
                          "does not have")
    return [c for c in cont if c in used]


def _roles(ctx: Context) -> tuple[str, ...]:
    return ("original", "synthetic", "control") if has_control(ctx) else ("original", "synthetic")


# ---------------------------------------------------------------- replicated uniques
def replicated_unique_flags(real: np.ndarray, syn: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per real record: unique on the QIs in ``real``; unique there and present in ``syn``;
    unique there and unique in ``syn`` (synthpop's replicated unique).

    Parameters
    ----------
    real, syn : ndarray of int64, shape (n, q) / (m, q)
        QI codes from shared vocabularies.
    """
    ir, is_ = joint_ids(real, syn)
    n_ids = int(max(ir.max(initial=-1), is_.max(initial=-1))) + 1
    size_r = np.bincount(ir, minlength=n_ids)
    size_s = np.bincount(is_, minlength=n_ids)
    unique = size_r[ir] == 1
    return unique, unique & (size_s[ir] >= 1), unique & (size_s[ir] == 1)


REPU_STATISTIC = ("share of real records unique on the quasi-identifiers in their own table (training "
                  "and control subsampled to the same size) whose combination is unique in the "
                  "synthetic data too (synthpop's replicated uniques)")


@register("replicated_uniques", family="disclosure", direction="lower is safer", params=_params(),
          thresholds={"medium": 0.01, "high": 0.05}, aliases=("repu", "replicated_unique"),
          description="share of original records unique on the quasi-identifiers whose combination is "
                      "unique in the synthetic data too (synthpop's repU); identity disclosure on real "
                      "records, tested against control records")
def replicated_uniques(ctx: Context, *, quasi_identifiers: Any = None, continuous_column_names: Any = None,
                       num_discrete_bins: int = 10, binning: str = "quantile",
                       max_records: int = 100) -> MetricResult:
    """synthpop's replicated uniques (repU) on the original records.

    Parameters
    ----------
    ctx : Context
        Evaluation context.
    quasi_identifiers : list of str, optional
        Default: the metadata's ``quasi_identifiers`` (skipped with a reason when none).
    continuous_column_names : list of str, optional
        QIs to bin (default: numerical/datetime QIs with more than 100 distinct original values).
    num_discrete_bins : int
        Number of bins.
    binning : {"quantile", "equal_width"}
        Bin edges from the original table.
    max_records : int
        Replicated original rows listed in ``records``.

    Notes
    -----
    The value is synthpop's: replicated uniques over **all** original records. The evidence
    compares training with control records; uniqueness depends on the table size, so both are
    measured in equal-size samples (the larger table subsampled by row content with the run's
    seed, so the same rows whatever their order).
    """
    name = "replicated_uniques"
    qis, _ = resolve_fields(ctx, name, "quasi_identifiers", quasi_identifiers, None, None)
    cont = _to_bin(ctx, name, continuous_column_names, qis)
    roles = _roles(ctx)
    codes = column_codes(ctx, qis, roles, continuous=cont, bins=num_discrete_bins, binning=binning)
    unique, rep_any, rep_u = replicated_unique_flags(codes["original"], codes["synthetic"])
    n = int(unique.size)
    k_u, k_any, k_rep = int(unique.sum()), int(rep_any.sum()), int(rep_u.sum())
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
                      "data (synthpop); replicated_any: unique in the original and present in the synthetic",
    }
    evidence = None
    if "control" in roles:
        evidence, sub = _repu_evidence(ctx, qis, codes)
        details["evidence_rows_per_side"] = sub
    level = level_from_thresholds(value, thresholds(ctx, name), "lower is safer")
    rows = np.flatnonzero(rep_u)[:max_records]
    recs = [{"original_row": int(i)} for i in rows]
    warning = None
    if k_rep:
        warning = (f"{k_rep} original records are unique on {qis} and their combination is unique in the "
                   "synthetic data too: an intruder knowing their quasi-identifiers finds one record")
    return MetricResult(name=name, family="disclosure", value=value, direction="lower is safer",
                        baseline=Baseline(evidence.non_member if evidence else None,
                                          "the same share for control records (equal-size samples)"
                                          if evidence else "no baseline: no control given"),
                        ci=ci, n=n, risk_level=level, warning=warning, details=details, records=recs,
                        evidence=evidence)


def _repu_evidence(ctx: Context, qis: list[str], codes: dict[str, np.ndarray]) -> tuple[Evidence, int]:
    from ..distance import balanced_rows

    m = min(len(ctx.tables.original), len(ctx.tables.control))
    counts = []
    for role in ("original", "control"):  # two sides
        table = ctx.tables.get(role)
        rows = balanced_rows(table[qis], m, ctx.seed, f"replicated_uniques.{role}")
        _, _, rep = replicated_unique_flags(codes[role][rows], codes["synthetic"])
        counts.append(int(rep.sum()))
    ev = Evidence.from_counts(REPU_STATISTIC, counts[0], m, counts[1], m,
                              baseline="control records (never trained on), uniqueness in an "
                                       "equal-size sample, against the same synthetic data")
    return ev, m


# ---------------------------------------------------------------- DiSCO
def disco_flags(real_keys: np.ndarray, real_target: np.ndarray, syn_keys: np.ndarray,
                syn_target: np.ndarray, denom_lim: int = 5) -> dict[str, np.ndarray]:
    """Per real record: ``dis`` (its synthetic QI cell holds at least ``denom_lim`` records, all
    with one target value), ``disco`` (``dis`` and that value is the record's), ``dio`` (every
    record of ``real`` sharing its QIs has its target value) and ``disdio`` (``disco`` and ``dio``).

    Parameters
    ----------
    real_keys, syn_keys : ndarray of int64, shape (n, q) / (m, q)
        QI codes (shared vocabularies).
    real_target, syn_target : ndarray of int64, shape (n,) / (m,)
        Target codes (shared vocabulary).
    denom_lim : int
        Smallest synthetic cell that counts as disclosive.
    """
    kr, ks = joint_ids(real_keys, syn_keys)
    tr, ts = joint_ids(real_target.reshape(-1, 1), syn_target.reshape(-1, 1))
    n_keys = int(max(kr.max(initial=-1), ks.max(initial=-1))) + 1
    n_t = int(max(tr.max(initial=-1), ts.max(initial=-1))) + 1

    def cells(keys: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        size = np.bincount(keys, minlength=n_keys)
        pairs = np.unique(keys * n_t + target)
        distinct = np.bincount(pairs // n_t, minlength=n_keys)
        value = np.full(n_keys, -1, dtype=np.int64)
        value[pairs // n_t] = pairs % n_t  # the value of single-valued cells
        return size, distinct, value

    size_s, dist_s, val_s = cells(ks, ts)
    _, dist_r, _ = cells(kr, tr)
    dis = (size_s[kr] >= denom_lim) & (dist_s[kr] == 1)
    disco = dis & (val_s[kr] == tr)
    dio = dist_r[kr] == 1
    return {"dis": dis, "disco": disco, "dio": dio, "disdio": disco & dio}


DISCO_STATISTIC = ("share of real records whose sensitive value is disclosed correctly (DiSCO) on at "
                   "least one sensitive column: every synthetic record sharing their quasi-identifiers "
                   "(a cell of at least denom_lim records) carries their true value")


@register("disco", family="disclosure", direction="lower is safer",
          params=[*_params(),
                  Param("sensitive", None, "sensitive (target) columns (default: the metadata's sensitive)",
                        (list, tuple)),
                  Param("denom_lim", 5, "smallest synthetic cell that counts as disclosive (synthpop's "
                        "denom_lim)", int, check=check_positive_int)],
          thresholds={"medium": 0.01, "high": 0.05}, aliases=("disco_disclosure",),
          description="share of original records whose sensitive value every synthetic record with their "
                      "quasi-identifiers carries (disclosive in synthetic, correct in original: DiSCO, "
                      "Raab et al. 2024), any sensitive column; tested against control records")
def disco(ctx: Context, *, quasi_identifiers: Any = None, continuous_column_names: Any = None,
          num_discrete_bins: int = 10, binning: str = "quantile", max_records: int = 100,
          sensitive: Any = None, denom_lim: int = 5) -> MetricResult:
    """DiSCO (and DiSDiO, DiS) of the original records, per sensitive column and for any of them.

    Parameters
    ----------
    sensitive : list of str, optional
        Target columns (default: the metadata's ``sensitive``); numerical/datetime targets with
        more than 100 distinct values are binned like the QIs unless ``continuous_column_names``
        is given.
    denom_lim : int
        Synthetic cells with fewer records are never disclosive (synthpop's default 5).

    See :func:`replicated_uniques` for the other parameters.

    Notes
    -----
    The value is the share of original records that are DiSCO on at least one sensitive column
    (with one sensitive column, synthpop's DiSCO); ``per_target`` gives DiSCO, DiSDiO and DiS
    per column and ``max_disco`` the largest. The evidence compares the same share for training
    and control records attacked with the same synthetic data (per-record, so size-free; all
    records of both tables count).
    """
    name = "disco"
    qis, sens = resolve_fields(ctx, name, "quasi_identifiers", quasi_identifiers, "sensitive", sensitive)
    cont = _to_bin(ctx, name, continuous_column_names, qis + sens)
    roles = _roles(ctx)
    codes = column_codes(ctx, qis + sens, roles, continuous=cont, bins=num_discrete_bins, binning=binning)
    q = len(qis)
    syn = codes["synthetic"]
    any_disco: dict[str, np.ndarray] = {}
    per_target: dict[str, dict[str, Any]] = {}
    for role in [r for r in roles if r != "synthetic"]:  # original, control
        real = codes[role]
        hit = np.zeros(real.shape[0], dtype=bool)
        for j, col in enumerate(sens):  # loop over sensitive columns
            f = disco_flags(real[:, :q], real[:, q + j], syn[:, :q], syn[:, q + j], int(denom_lim))
            hit |= f["disco"]
            if role == "original":
                n = max(int(real.shape[0]), 1)
                per_target[col] = {key: float(f[key].sum()) / n for key in ("disco", "disdio", "dis", "dio")}
                per_target[col]["n_disco"] = int(f["disco"].sum())
        any_disco[role] = hit
    hit = any_disco["original"]
    n = int(hit.size)
    k = int(hit.sum())
    value = k / n if n else float("nan")
    details: dict[str, Any] = {
        "quasi_identifiers": qis, "sensitive": sens, "continuous_column_names": cont,
        "num_discrete_bins": num_discrete_bins, "binning": binning, "denom_lim": int(denom_lim),
        "n_original": n, "n_disco_any": k, "per_target": per_target,
        "max_disco": max((t["disco"] for t in per_target.values()), default=None),
        "definition": "DiSCO: the synthetic records sharing the record's QIs (at least denom_lim of them) "
                      "all carry one value of the target, and it is the record's true value; DiSDiO: "
                      "DiSCO and the original records sharing its QIs all carry that value too; DiS: the "
                      "synthetic cell is disclosive, right or wrong; DiO: the original cell is",
    }
    evidence = None
    if "control" in any_disco:
        c = any_disco["control"]
        evidence = Evidence.from_counts(DISCO_STATISTIC, k, n, int(c.sum()), int(c.size),
                                        baseline="control records (never trained on) against the same "
                                                 "synthetic data")
    level = level_from_thresholds(value, thresholds(ctx, name), "lower is safer")
    recs = [{"original_row": int(i)} for i in np.flatnonzero(hit)[:max_records]]
    warning = None
    if k:
        warning = (f"{k} original records have a sensitive value that every synthetic record with their "
                   f"quasi-identifiers carries (cells of at least {denom_lim})")
    return MetricResult(name=name, family="disclosure", value=value, direction="lower is safer",
                        baseline=Baseline(evidence.non_member if evidence else None,
                                          "the same share for control records against the same synthetic "
                                          "data" if evidence else "no baseline: no control given"),
                        ci=wilson_interval(k, n) if n else None, n=n, risk_level=level, warning=warning,
                        details=details, records=recs, evidence=evidence)
