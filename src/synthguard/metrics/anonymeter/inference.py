"""Inference (anonymeter semantics, 1.0.0 baseline): can the synthetic data reveal a secret column?

For each target, the attacker finds the nearest synthetic row on the auxiliary columns and guesses
its secret. A guess is correct when it equals the secret (both missing counts as equal) or, for a
regression secret, when ``|guess - secret| <= tolerance * |guess|``. The naive baseline guesses the
secret of a random synthetic row (positionally paired with the targets, as in anonymeter 1.0.0;
1.1.0 aligns by index label and loses about 98 % of the guesses). The control attack runs on real
held-out rows. Without ``secret``, the declared ``sensitive`` columns are the secrets (never a
declared quasi-identifier); without them every column that is not a declared quasi-identifier; without
any roles every tabular column in turn (as SynEval does). The result says which were tried.

The headline numbers keep anonymeter's ``n_attacks`` semantics (sampled targets). The evidence that
drives the verdict attacks every training and every control record (see :func:`secret_flags`).

Every table question goes to the backend (``ctx.data``): the canonical rows
(``Backend.distinct_order``), the ranges and the neighbours of the sampled targets and of every
record (``Backend.value_bounds``, ``Backend.kneighbors_among``) and the encoded cells read
(``Backend.encoded_rows``), so the attack runs on the Dask backend with the JSON of one process.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...core.results import Evidence, MetricResult, RecordFlags, RowPairs, level_from_thresholds
from ...data.encoding import Block
from ...errors import ConfigError, MetricError
from ...registry import Context, Param, register
from ._common import (
    DIRECTION,
    FAMILY,
    NOT_MEANINGFUL,
    THRESHOLDS,
    Outcome,
    build_result,
    canonical,
    check_columns,
    common_params,
    encoded_cells,
    memoised,
    pooled_neighbours,
    release_ties,
    resolve_n_attacks,
    summarise,
    tabular_columns,
    target_neighbours,
)

REGRESSION = ("auto", "true", "false")


def correct_guesses(guess: np.ndarray, secret: np.ndarray, regression: bool, tolerance: float) -> np.ndarray:
    """Which guesses are right: equal values (missing == missing), or for regression
    ``|guess - secret| <= tolerance * |guess|`` (anonymeter's tolerance relative to the guess, with
    the absolute value so that a negative guess is not always right)."""
    g = np.asarray(guess, dtype=float)
    s = np.asarray(secret, dtype=float)
    both_nan = np.isnan(g) & np.isnan(s)
    with np.errstate(invalid="ignore"):
        ok = g == s
        if regression:
            ok |= np.abs(g - s) <= tolerance * np.abs(g)
    return ok | both_nan


def default_aux(ctx: Context, secret: str) -> list[str]:
    """Auxiliary columns when none are given: the declared quasi-identifiers other than the secret,
    else every other tabular column."""
    tab = tabular_columns(ctx)
    qis = [c for c in ctx.tables.schema.quasi_identifiers if c in tab and c != secret]
    return qis if qis else [c for c in tab if c != secret]


def _secret_values(blk: Block, column: str) -> np.ndarray:
    """Secret values as floats (numeric values, or categorical codes with missing = NaN)."""
    if column in blk.num_columns:
        return blk.num[:, blk.num_columns.index(column)]
    codes = blk.cat[:, blk.cat_columns.index(column)].astype(float)
    codes[codes < 0] = np.nan
    return codes


def synthetic_secrets(ctx: Context, secret: str, at: np.ndarray) -> np.ndarray:
    """The secret values of the canonical synthetic rows ``at`` (NaN where ``at`` is -1, no
    neighbour): only the distinct rows asked are read (from the backend on a cluster)."""
    at = np.asarray(at, dtype=np.int64)
    rows = np.unique(at[at >= 0])
    out = np.full(at.size, np.nan)
    if rows.size:
        canon = canonical(ctx, "synthetic", tabular_columns(ctx))
        vals = _secret_values(encoded_cells(ctx, "synthetic", [secret], canon.rows[rows]), secret)
        ok = at >= 0
        out[ok] = vals[np.searchsorted(rows, at[ok])]
    return out


def _regression(ctx: Context, secret: str, regression: str) -> bool:
    if regression == "auto":
        return ctx.tables.schema.columns[secret].sdtype == "numerical"
    return regression == "true"


def attack_secret(ctx: Context, secret: str, aux: list[str], n: int, t_ori: np.ndarray,
                  t_ctl: np.ndarray | None, regression: bool, tolerance: float, confidence_level: float,
                  rng: np.random.Generator) -> tuple[dict[str, Any], list[dict[str, Any]], str | None]:
    """One secret column: the contract dict, the correctly inferred targets and the warning."""
    tab = tabular_columns(ctx)
    canon = {r: canonical(ctx, r, tab) for r in ctx.tables.roles}
    queries = [("original", canon["original"].rows[t_ori])]
    if t_ctl is not None:
        queries.append(("control", canon["control"].rows[t_ctl]))
    truth = np.concatenate([_secret_values(encoded_cells(ctx, r, [secret], rows), secret) for r, rows in queries])
    # the targets' answers from every record's search when the verdict's evidence runs it anyway
    dist, idx = target_neighbours(ctx, queries, aux, 1, pooled=ctx.tables.has_control and ctx.evidence)
    nn = idx[:, 0]
    n_syn = canon["synthetic"].n
    drawn = rng.choice(n_syn, n, replace=n > n_syn)
    syn_secret = synthetic_secrets(ctx, secret, np.concatenate([nn, drawn]))
    guess = syn_secret[:nn.size]
    ok = correct_guesses(guess, truth, regression, tolerance) & (nn >= 0)
    naive = syn_secret[nn.size:]
    base_ok = correct_guesses(naive, truth[:n], regression, tolerance)
    out = Outcome(n, int(ok[:n].sum()), n, int(base_ok.sum()),
                  n if t_ctl is not None else None, int(ok[n:].sum()) if t_ctl is not None else None)
    d, _att, _base, _ctl, warning = summarise(out, confidence_level)
    d = {"secret_column": secret, **d, "regression": regression, "aux_cols": list(aux)}
    d["risk_level"] = NOT_MEANINGFUL if warning else level_from_thresholds(d["risk"], ctx.thresholds,
                                                                           DIRECTION)
    d["warning"] = warning
    hits = np.flatnonzero(ok[:n])
    recs = [{"row": int(canon["original"].rows[t_ori[i]]), "secret_column": secret,
             "distance": float(dist[i, 0])} for i in hits]
    return d, recs, warning


def secrets_of(ctx: Context, secret: str | None) -> tuple[list[str], str, list[str]]:
    """The secret columns to attack, where they come from, and notes on declared columns left out.

    ``secret`` given: that column. Otherwise what the owner declared: the ``sensitive`` columns
    (tabular, never a declared quasi-identifier), else every tabular column that is not a declared
    quasi-identifier, else (no roles) every tabular column, in table order.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [30, 40, 50], "sex": ["F", "M", "F"], "hiv": [0, 1, 0]})
    >>> ctx = Context.from_frames(df, df, None, {"quasi_identifiers": ["age", "sex"],
    ...                                          "sensitive": ["hiv"]})
    >>> secrets_of(ctx, None)[:2]
    (['hiv'], 'the declared sensitive columns')
    """
    if secret is not None:
        return check_columns(ctx, [secret], "secret"), "the parameter 'secret'", []
    tab = tabular_columns(ctx)
    schema = ctx.tables.schema
    qis = set(schema.quasi_identifiers)
    notes: list[str] = []
    if schema.sensitive:
        declared = set(schema.sensitive)
        both = sorted(c for c in declared if c in qis)
        if both:
            notes.append(f"column(s) {both} are declared both quasi-identifier and sensitive: a "
                         "quasi-identifier is what an attacker knows, never a secret, so they are not "
                         "attacked")
        other = sorted(c for c in declared if c not in qis and c not in tab)
        if other:
            notes.append(f"declared sensitive column(s) {other} are not tabular (text or id): not attacked")
        cols = [c for c in tab if c in declared and c not in qis]
        if not cols:
            raise MetricError("no declared sensitive column can be attacked (each is a declared "
                              "quasi-identifier or not tabular): fix 'sensitive' in the metadata or pass "
                              "secret")
        return cols, "the declared sensitive columns", notes
    if qis:
        cols = [c for c in tab if c not in qis]
        if not cols:
            raise MetricError("every tabular column is a declared quasi-identifier: nothing is left to "
                              "infer; declare 'sensitive' columns in the metadata or pass secret")
        return cols, ("every tabular column that is not a declared quasi-identifier (no sensitive "
                      "column declared)"), notes
    return tab, "every tabular column (no quasi-identifiers or sensitive columns declared)", notes


def secret_flags(ctx: Context, secret: str, aux: list[str], regression: bool,
                 tolerance: float) -> RecordFlags:
    """Per training and per control record (every one, duplicates kept): does the attack guess its
    ``secret`` right from the nearest synthetic row on ``aux``? Decided without the labels (one
    neighbour search over the pooled real records, :func:`._common.pooled_neighbours`). On a
    cluster the records' secret values come from the backend (one encoded column, 8 bytes a
    record, as the neighbour indices) and only the release rows that are someone's neighbour."""
    nn = pooled_neighbours(ctx, aux, 1)[:, 0]
    guess = synthetic_secrets(ctx, secret, nn)
    roles = ("original", "control") if ctx.tables.has_control else ("original",)
    truth = np.concatenate([_secret_values(encoded_cells(ctx, r, [secret], None), secret) for r in roles])
    ok = correct_guesses(guess, truth, regression, tolerance) & (nn >= 0)
    n_o = ctx.data.n_rows("original")
    hit = np.flatnonzero(ok)
    pairs = release_ties(ctx, tabular_columns(ctx), hit, nn[hit],
                         f"the release row nearest to it on the other columns carries its {secret}")
    return RecordFlags(ok[:n_o], ok[n_o:], pairs=pairs)


@register("inference", family=FAMILY, direction=DIRECTION,
          params=[*common_params(2000),
                  Param("secret", None, "the column to infer (default: the declared sensitive columns; "
                        "else every column that is not a declared quasi-identifier; without roles "
                        "every tabular column, each in turn)", kind=str),
                  Param("aux_cols", None, "columns the attacker knows (default: quasi-identifiers, "
                        "else every other tabular column)", kind=list),
                  Param("regression", "auto", "how guesses are scored: 'auto' (numerical secret -> "
                        "relative tolerance, else exact), 'true', 'false'", kind=(str, bool)),
                  Param("tolerance", 0.05, "relative tolerance of a correct regression guess",
                        kind="non-negative float")],
          thresholds=THRESHOLDS, optional_needs=("control",), aliases=("anonymeter_inference",),
          description="inference risk (anonymeter): share of original rows whose secret column the "
                      "nearest synthetic row reveals, beyond control; the maximum over secrets",
          per_column="secret",
          risk='inference',
          knowledge="a person's other columns; guesses the secret column from the closest release row",
          presets=('privacy', 'full'),
          order=140,
          backend='any',
          warmup=True,
          explainer=("anonymeter's inference attack: guesses a secret column of a person from the "
                     'closest release row on the other columns; successes on training records against '
                     'held-out people, per secret.'))
@memoised('inference')
def inference(ctx: Context, *, secret: str | None = None, aux_cols: list[str] | None = None,
              regression: str | bool = "auto", tolerance: float = 0.05, n_attacks: int = 2000,
              max_n_attacks: bool = False, confidence_level: float = 0.95,
              n_records: int = 20) -> MetricResult:
    """Inference attack on ``secret`` (or on every declared secret in turn); value = the largest risk."""
    reg = str(regression).strip().lower() if not isinstance(regression, bool) else str(regression).lower()
    if reg not in REGRESSION:
        raise ConfigError(f"parameter 'regression' must be one of {list(REGRESSION)}, got {regression!r}")
    tab = tabular_columns(ctx)
    secrets, source, secret_notes = secrets_of(ctx, secret)
    aux_given = check_columns(ctx, aux_cols, "aux_cols") if aux_cols else None
    if aux_given is not None and secret is not None and secret in aux_given:
        raise ConfigError(f"parameter 'aux_cols' contains the secret {secret!r}: remove it from aux_cols")
    canon = {r: canonical(ctx, r, tab) for r in ctx.tables.roles}
    avail = {"original": canon["original"].n}
    if ctx.tables.has_control:
        avail["control"] = canon["control"].n
    n, note = resolve_n_attacks(n_attacks, max_n_attacks, avail, ctx.metric)
    notes: list[str] = []
    info = ([note] if note else []) + secret_notes
    rng = ctx.rng("targets")
    t_ori = np.sort(rng.choice(canon["original"].n, n, replace=False))
    t_ctl = np.sort(rng.choice(canon["control"].n, n, replace=False)) if ctx.tables.has_control else None

    per_secret, records, evs = [], [], []
    for s in secrets:  # loop over secret columns
        aux = [c for c in aux_given if c != s] if aux_given is not None else default_aux(ctx, s)
        if not aux:
            raise MetricError(f"no auxiliary column is left for secret {s!r}: pass aux_cols")
        is_reg = _regression(ctx, s, reg)
        d, recs, _w = attack_secret(ctx, s, aux, n, t_ori, t_ctl, is_reg, tolerance,
                                    confidence_level, ctx.rng("baseline", s))
        if ctx.tables.has_control and ctx.evidence:  # the verdict's evidence: every training and
            # every control record
            ev = Evidence.from_flags(_statistic(s), secret_flags(ctx, s, aux, is_reg, tolerance),
                                     risk="inference", baseline=EVIDENCE_BASELINE,
                                     confidence_level=confidence_level)
            d["evidence"] = {k: v for k, v in ev.to_dict().items() if k in EVIDENCE_KEYS}
            evs.append(ev)
        per_secret.append(d)
        records.extend(recs)
    worst = max(per_secret, key=lambda d: (d["risk"], d["meaningful"]))
    meaningful = [d for d in per_secret if d["meaningful"]]
    top = max(meaningful, key=lambda d: d["risk"]) if meaningful else worst
    details = {k: v for k, v in top.items() if k not in ("risk_level", "warning", "evidence")}
    details.update(per_secret=per_secret, max_risk=top["risk"], max_risk_any=worst["risk"],
                   secret_column=top["secret_column"], secrets_tried=list(secrets), secrets_from=source,
                   notes=info)
    warning = top["warning"]
    if len(per_secret) > 1 and meaningful and len(meaningful) < len(per_secret):
        skipped = [d["secret_column"] for d in per_secret if not d["meaningful"]]
        notes.append(f"attack no better than its baseline for secret(s) {skipped}: their risks are "
                     "not meaningful and do not count towards the headline value")
    records.sort(key=lambda r: (r["distance"], r["secret_column"], r["row"]))
    base_text = ("naive attacker: the secret of a random synthetic row (baseline_rate); the risk itself is "
                 + top["relative_to"])
    from ...stats import wilson_rate

    base = wilson_rate(top["n_baseline"], top["n_baseline_attacks"], confidence_level)
    evidence = _evidence(evs, secrets, source) if evs else None
    return build_result(ctx, ctx.metric or "inference", details, base, warning, notes,
                        records[:n_records] if n_records else None, base_text, evidence)


EVIDENCE_BASELINE = "control records attacked with the same release"
#: the per-secret evidence numbers kept in ``details["per_secret"][i]["evidence"]``
EVIDENCE_KEYS = ("member", "non_member", "n_member", "n_non_member", "k_member", "k_non_member",
                 "effect", "effect_ci", "effect_upper", "p_value", "confidence_level")


def _statistic(secret: str) -> str:
    return (f"share of records whose {secret!r} the inference attack guesses right (every training "
            "and every control record attacked)")


def upper_bound(ev: Evidence) -> float:
    """The one-sided upper bound of an evidence's effect (``effect_upper`` when the evidence states
    it, else the upper end of its interval, the same bound for the evidence's constructors); NaN
    sorts lowest."""
    up = getattr(ev, "effect_upper", None)
    if up is None:
        up = ev.effect_ci[1]
    up = float(up)
    return -np.inf if np.isnan(up) else up


def _evidence(evs: list[Evidence], secrets: list[str], source: str) -> Evidence:
    """The verdict's inference test: the maximum over the secrets attacked, adjusted for them only.

    One secret: its evidence, flags included (the verdict tests them jointly with the other
    per-record tests). ``S`` secrets: the alarm is the smallest p-value of the ``S``,
    Bonferroni-adjusted (x ``S``); the effect, its interval and upper bound are those of the secret
    whose upper bound is the largest. With probability at least the confidence level the largest
    excess over the secrets lies below that bound (the secret with the largest excess has its own
    bound below the largest one), so a ``low`` reading rests on every secret, not on the luckiest.
    The per-record flags are left out: the verdict would re-test one secret's flags without the
    adjustment for having chosen it among ``S``.
    """
    names = ", ".join(secrets)
    if len(evs) == 1:
        return replace(evs[0], note=f"secret {secrets[0]!r} ({source})")
    s = len(evs)
    alarm = min(range(s), key=lambda i: (evs[i].p_value, -evs[i].effect, i))
    bound = max(range(s), key=lambda i: (upper_bound(evs[i]), -i))
    p = min(1.0, float(evs[alarm].p_value) * s)
    same = ("the same secret" if alarm == bound else f"{secrets[bound]!r}, the secret with the largest "
            "upper bound")
    note = (f"maximum over {s} secret columns ({source}: {names}); p-value: {secrets[alarm]!r}'s, the "
            f"smallest of the {s}, Bonferroni-adjusted (x{s}); effect, interval and bound: {same} (the "
            "largest excess over the secrets lies below it at the stated level)")
    return replace(evs[bound], p_value=p, flags=None, ties=_ties(evs, secrets), note=note,
                   test=f"Fisher exact, one-sided; smallest of {s} secrets, Bonferroni-adjusted")


def _ties(evs: list[Evidence], secrets: list[str]) -> RecordFlags | None:
    """The records and release rows behind the combined test, for the records export only
    (:attr:`~synthguard.core.results.Evidence.ties`): a record is flagged when some secret of it
    is guessed right, tied to the release rows each of its guessed secrets is read from (each
    pair once)."""
    flags = [e.flags for e in evs]
    if any(f is None or f.pairs is None or f.pairs.row_key is not None for f in flags):
        return None
    member = np.logical_or.reduce([f.member for f in flags])  # type: ignore[union-attr]
    non_member = np.logical_or.reduce([f.non_member for f in flags])  # type: ignore[union-attr]
    both = np.unique(np.concatenate([np.c_[f.pairs.record, f.pairs.row]  # type: ignore[union-attr]
                                     for f in flags]), axis=0).reshape(-1, 2)
    names = ", ".join(repr(c) for c in secrets)
    pairs = RowPairs(both[:, 0], both[:, 1], flags[0].pairs.n_rows,  # type: ignore[union-attr]
                     tie=f"the release row nearest to it on the other columns carries one of its "
                         f"secrets ({names})", action="review")
    return RecordFlags(member, non_member, pairs=pairs)
