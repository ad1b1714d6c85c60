"""``rare_qi_echo``: training records whose rare combination of quasi-identifiers the release echoes.

The attacker knows a person's quasi-identifiers (age, postcode, ...) and looks for a release row with
the same combination. A combination shared by few real people singles them out; finding it in the
release says the generator reproduced that person's record. Compared with held-out real people (the
control), who the generator never saw, the excess share of training records echoed is what the
release leaks beyond chance.

Everything here is plain synthguard API: :func:`synthguard.registry.register` with a full metric
card, :class:`synthguard.core.results.MetricResult` with
:meth:`~synthguard.core.results.Evidence.from_flags` over every training and every control record.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from synthguard.core.results import Evidence, MetricResult, RecordFlags
from synthguard.errors import MetricError
from synthguard.registry import LEVEL_FROM_THRESHOLDS, Context, Param, RecordsCard, register

__all__ = ["rare_qi_echo"]


def _reason(record: dict[str, Any]) -> str:
    return (f"its combination of quasi-identifiers, shared by {record['real_people']} real "
            f"{'person' if record['real_people'] == 1 else 'people'}, appears in "
            f"{record['release_rows']} release row(s)")


def _columns(ctx: Context) -> list[str]:
    schema = ctx.tables.schema
    usable = set(schema.tabular_columns())
    qis = [c for c in schema.quasi_identifiers if c in usable]
    if not qis:
        raise MetricError("needs quasi-identifiers: name them in the metadata (quasi_identifiers)")
    return sorted(qis)


@register(
    "rare_qi_echo", family="privacy", direction="lower is safer", needs=("original", "synthetic", "control"),
    params=[Param("max_share", 0.002, "a combination is rare when at most this share of the pooled "
                  "real records (and at least one) carry it", "probability"),
            Param("top_n", 20, "how many echoed training records to list", "positive int"),
            Param("confidence_level", 0.95, "level of the intervals", "probability")],
    thresholds={"medium": 0.01, "high": 0.05},
    description="excess share of training records whose rare quasi-identifier combination appears "
                "in the release (over the control's)",
    risk="singling_out",
    knowledge="a person's quasi-identifiers; looks for a release row with the same rare combination",
    sees=("exact", "rare"),
    presets=("privacy", "full"),
    order=95,
    backend="local",
    records=RecordsCard(row="original", reason=_reason,
                        meaning="a training record whose rare quasi-identifier combination the "
                                "release echoes"),
    explainer=("Looks up each real person's combination of quasi-identifiers in the release. Only "
               "combinations rare among all real people count (they single their person out). The "
               "share of training records echoed is compared with the share of held-out control "
               "records echoed: a generator that never saw a person echoes them only by chance."),
)
def rare_qi_echo(ctx: Context, *, max_share: float = 0.002, top_n: int = 20,
                 confidence_level: float = 0.95) -> MetricResult:
    """Excess share of training records whose rare quasi-identifier combination the release echoes.

    Parameters
    ----------
    ctx : Context
        The evaluation context (original, synthetic and control tables).
    max_share : float
        A combination is rare when at most ``max(1, max_share * pooled real records)`` records of
        the pooled training and control data carry it (decided without the labels).
    top_n : int
        Echoed training records listed in ``records``.
    confidence_level : float
        Level of the interval of the excess.

    Returns
    -------
    MetricResult
        ``value`` = share of training records echoed minus the control's share (the evidence's
        effect, with its interval); ``details``: both rates and the columns; ``records``: the
        echoed training records (``row``, ``real_people``, ``release_rows``).
    """
    cols = _columns(ctx)
    ids = ctx.encoded.row_ids(cols, roles=("original", "control", "synthetic"))
    orig, ctl, syn = ids["original"], ids["control"], ids["synthetic"]
    if orig.size == 0 or ctl.size == 0 or syn.size == 0:
        raise MetricError("needs rows in the original, the control and the release")
    pooled = np.concatenate([orig, ctl])
    keys, inv, counts = np.unique(pooled, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    limit = max(1, int(np.floor(float(max_share) * pooled.size)))
    rare = counts[inv] <= limit
    in_release = np.zeros(keys.size, dtype=np.int64)
    pos = np.searchsorted(keys, syn)
    known = (pos < keys.size) & (keys[np.minimum(pos, keys.size - 1)] == syn)
    np.add.at(in_release, pos[known], 1)
    echoed = rare & (in_release[inv] > 0)
    n_o = orig.size
    flags = RecordFlags(echoed[:n_o], echoed[n_o:], {"exact": rare[:n_o], "rare": rare[:n_o]})
    evidence = Evidence.from_flags("share of records whose rare quasi-identifier combination the "
                                   "release echoes", flags, sees=("exact", "rare"),
                                   risk="singling_out", confidence_level=float(confidence_level))
    hit = np.flatnonzero(echoed[:n_o])
    order = np.lexsort((hit, -in_release[inv[hit]]))[: int(top_n)]
    records = [{"row": int(r), "real_people": int(counts[inv[r]]),
                "release_rows": int(in_release[inv[r]])} for r in hit[order]]
    details = {"columns": cols, "rare_at_most": limit,
               "training_echoed": {"k": int(flags.member.sum()), "n": int(n_o)},
               "control_echoed": {"k": int(flags.non_member.sum()), "n": int(ctl.size)},
               "method": "pooled-rare quasi-identifier combinations found in the release, training "
                         "against control (Fisher's exact test, Newcombe interval)"}
    return MetricResult("rare_qi_echo", "privacy", float(evidence.effect), "lower is safer",
                        ci=tuple(evidence.effect_ci), n=int(n_o),
                        risk_level=LEVEL_FROM_THRESHOLDS, details=details, records=records,
                        evidence=evidence)
