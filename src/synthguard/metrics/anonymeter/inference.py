"""Inference (anonymeter semantics, 1.0.0 baseline): can the synthetic data reveal a secret column?

For each target, the attacker finds the nearest synthetic row on the auxiliary columns and guesses
its secret. A guess is correct when it equals the secret (both missing counts as equal) or, for a
regression secret, when ``|guess - secret| <= tolerance * |guess|``. The naive baseline guesses the
secret of a random synthetic row (positionally paired with the targets, as in anonymeter 1.0.0;
1.1.0 aligns by index label and loses about 98 % of the guesses). The control attack runs on real
held-out rows. Without ``secret``, every tabular column is the secret in turn (as SynEval does).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...core.results import Evidence, MetricResult, level_from_thresholds
from ...data.encoding import Block, value_ranges
from ...engine.neighbors import gower, kneighbors
from ...errors import ConfigError, MetricError
from ...registry import Context, Param, register
from ._common import (
    DIRECTION,
    FAMILY,
    NOT_MEANINGFUL,
    THRESHOLDS,
    Outcome,
    block_of,
    build_result,
    canonical,
    check_columns,
    common_params,
    concat_blocks,
    evidence_of,
    memoised,
    resolve_n_attacks,
    summarise,
    tabular_columns,
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
    parts = [block_of(ctx, "original", aux, canon["original"]).take(t_ori)]
    sec_parts = [_secret_values(block_of(ctx, "original", [secret], canon["original"]), secret)[t_ori]]
    if t_ctl is not None:
        parts.append(block_of(ctx, "control", aux, canon["control"]).take(t_ctl))
        sec_parts.append(_secret_values(block_of(ctx, "control", [secret], canon["control"]), secret)[t_ctl])
    q = concat_blocks(*parts)
    truth = np.concatenate(sec_parts)
    s = block_of(ctx, "synthetic", aux, canon["synthetic"])
    syn_secret = _secret_values(block_of(ctx, "synthetic", [secret], canon["synthetic"]), secret)
    metric = gower(value_ranges(q, s), clip=False, normalise=False, nan_rule="anonymeter")
    nb = kneighbors(q, s, metric, 1, backend=ctx.backend)
    nn = nb.indices[:, 0]
    guess = np.where(nn >= 0, syn_secret[np.maximum(nn, 0)], np.nan)
    ok = correct_guesses(guess, truth, regression, tolerance) & (nn >= 0)
    n_syn = syn_secret.size
    naive = syn_secret[rng.choice(n_syn, n, replace=n > n_syn)]
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
             "distance": float(nb.distances[i, 0])} for i in hits]
    return d, recs, warning


@register("inference", family=FAMILY, direction=DIRECTION,
          params=[*common_params(2000),
                  Param("secret", None, "the column to infer (default: every tabular column in turn)",
                        kind=str),
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
          warmup=True,
          explainer=("anonymeter's inference attack: guesses a secret column of a person from the "
                     'closest release row on the other columns; successes on training records against '
                     'held-out people, per secret.'))
@memoised('inference')
def inference(ctx: Context, *, secret: str | None = None, aux_cols: list[str] | None = None,
              regression: str | bool = "auto", tolerance: float = 0.05, n_attacks: int = 2000,
              max_n_attacks: bool = False, confidence_level: float = 0.95,
              n_records: int = 20) -> MetricResult:
    """Inference attack on ``secret`` (or on every column in turn); value = the largest risk."""
    reg = str(regression).strip().lower() if not isinstance(regression, bool) else str(regression).lower()
    if reg not in REGRESSION:
        raise ConfigError(f"parameter 'regression' must be one of {list(REGRESSION)}, got {regression!r}")
    tab = tabular_columns(ctx)
    if secret is not None:
        secrets = check_columns(ctx, [secret], "secret")
    else:
        secrets = tab
    aux_given = check_columns(ctx, aux_cols, "aux_cols") if aux_cols else None
    if aux_given is not None and secret is not None and secret in aux_given:
        raise ConfigError(f"parameter 'aux_cols' contains the secret {secret!r}: remove it from aux_cols")
    canon = {r: canonical(ctx, r, tab) for r in ctx.tables.roles}
    avail = {"original": canon["original"].n}
    if ctx.tables.has_control:
        avail["control"] = canon["control"].n
    n, note = resolve_n_attacks(n_attacks, max_n_attacks, avail, ctx.metric)
    notes: list[str] = []
    info = [note] if note else []
    rng = ctx.rng("targets")
    t_ori = np.sort(rng.choice(canon["original"].n, n, replace=False))
    t_ctl = np.sort(rng.choice(canon["control"].n, n, replace=False)) if ctx.tables.has_control else None

    per_secret, records = [], []
    for s in secrets:  # loop over secret columns
        aux = [c for c in aux_given if c != s] if aux_given is not None else default_aux(ctx, s)
        if not aux:
            raise MetricError(f"no auxiliary column is left for secret {s!r}: pass aux_cols")
        d, recs, _w = attack_secret(ctx, s, aux, n, t_ori, t_ctl, _regression(ctx, s, reg), tolerance,
                                    confidence_level, ctx.rng("baseline", s))
        per_secret.append(d)
        records.extend(recs)
    if not per_secret:
        raise MetricError("no secret column to attack")
    worst = max(per_secret, key=lambda d: (d["risk"], d["meaningful"]))
    meaningful = [d for d in per_secret if d["meaningful"]]
    top = max(meaningful, key=lambda d: d["risk"]) if meaningful else worst
    details = {k: v for k, v in top.items() if k not in ("risk_level", "warning")}
    details.update(per_secret=per_secret, max_risk=top["risk"], max_risk_any=worst["risk"],
                   secret_column=top["secret_column"], notes=info)
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
    return build_result(ctx, ctx.metric or "inference", details, base, warning, notes,
                        records[:n_records] if n_records else None, base_text,
                        _evidence(per_secret, confidence_level))


def _evidence(per_secret: list[dict[str, Any]], confidence_level: float) -> Evidence | None:
    """The secret whose attack shows the strongest excess over control, adjusted for the maximum
    over the ``S`` secrets tried: its p-value multiplied by ``S`` (Bonferroni) and its interval at
    level ``1 - (1 - confidence_level) / S`` (so with probability ``confidence_level`` every
    secret's interval covers its effect, the strongest one's included); attacking many columns
    can neither manufacture an alarm nor narrow the interval a ``low`` reading rests on."""
    m = sum(1 for d in per_secret if d.get("n_control_attacks"))
    level = 1.0 - (1.0 - confidence_level) / max(m, 1)
    evs = [evidence_of(d, f"share of attacked records whose {d['secret_column']!r} the inference "
                       "attack guesses right", level) for d in per_secret]
    evs = [e for e in evs if e is not None]
    if not evs:
        return None
    best = min(evs, key=lambda e: (e.p_value, -e.effect))
    if len(evs) == 1:
        return replace(best, risk="inference")
    return replace(best, p_value=min(1.0, best.p_value * len(evs)), risk="inference",
                   note=f"strongest of {len(evs)} secret columns; p-value Bonferroni-adjusted for them "
                        f"and the effect's interval at level 1 - {1 - confidence_level:.3g}/{len(evs)} "
                        f"= {level:.4g}, so the maximum is covered")
