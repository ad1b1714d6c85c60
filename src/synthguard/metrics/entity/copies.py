"""Copies of whole sequences and of subsequences, members against non-members.

An event is compared on every event column (the entity key excluded) plus its time gap to the
previous event of the same entity (when there is a sequence key), and the first event of a sequence
or window also on its time when ``time="absolute"``: a history copied under a new id is a copy;
with ``time="relative"`` a history shifted in time is one too. With ``round_digits`` numeric values (and gaps) are rounded to
that many significant digits first, so near copies count too.

* whole sequence: same length and the same events in the same order;
* subsequence: ``length`` consecutive events of the entity (any window, or only its first
  ``length`` events with ``anchor="prefix"``) appear as consecutive events of some synthetic entity.

The share of original (member) entities copied is set against the same share for control
(non-member) entities, which the generator never saw: chance agreement (short, common histories)
hits both alike; memorisation hits members only. The excess is tested with a one-sided Fisher exact
test.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...data.encoding import Block, Encoder, row_identities
from ...data.entities.build import EntityRun
from ...stats import difference_ci, fisher_greater, proportion


def _round_sig(x: np.ndarray, digits: int) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.floor(np.log10(np.abs(x)))
        scale = 10.0 ** (digits - 1 - np.where(np.isfinite(mag), mag, 0))
        out = np.round(x * scale) / scale
    return np.where((x == 0) | ~np.isfinite(x), x, out)


def event_identities(run: EntityRun, roles: tuple[str, ...], round_digits: int | None = None,
                     time: str = "absolute") -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per role, two ids per ordered event, shared across roles (equal events, equal ids).

    ``next_ids``: the event's columns plus its time gap to the previous event of its entity (how an
    event is read inside a sequence). ``first_ids``: how the first event of a sequence or window is
    read: its columns plus, with ``time="absolute"``, its time (so a whole sequence is compared at
    its absolute times), or its columns alone with ``time="relative"`` (copies shifted in time
    count). Without a sequence key both are the event's columns.
    """
    schema = run.rows.schema
    cols = [c for c in run.data.event_columns() if schema.columns[c].sdtype != "id"]
    enc = Encoder(schema)
    blocks = {}
    for r in roles:
        b = enc.encode(run.ordered[r].frame, cols)
        num = b.num.copy()
        if round_digits is not None and num.size:
            num = _round_sig(num, round_digits)
        blocks[r] = Block(num, b.cat, b.num_columns, b.cat_columns)
    if run.data.spec.sequence_key is None:
        bare = dict(zip(roles, row_identities(*blocks.values()), strict=True))
        return bare, bare

    def with_extra(values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        ext = []
        for r in roles:
            b = blocks[r]
            ext.append(Block(np.column_stack([b.num, values[r]]), b.cat, b.num_columns + ("__t",),
                             b.cat_columns))
        return dict(zip(roles, row_identities(*ext), strict=True))

    gaps, times = {}, {}
    for r in roles:
        ev = run.ordered[r]
        gap = np.full(len(ev.entity), np.nan)
        if len(gap) > 1:
            same = ev.entity[1:] == ev.entity[:-1]
            gap[1:] = np.where(same, ev.time[1:] - ev.time[:-1], np.nan)
        t = ev.time.copy()
        if round_digits is not None:
            gap, t = _round_sig(gap, round_digits), _round_sig(t, round_digits)
        gaps[r], times[r] = gap, t
    nxt = with_extra(gaps)
    if time == "absolute":
        first = with_extra(times)
    else:
        first = dict(zip(roles, row_identities(*blocks.values()), strict=True))
    return first, nxt


def member_evidence(k_m: int, n_m: int, k_c: int, n_c: int, confidence_level: float = 0.95) -> dict[str, Any]:
    """Member / non-member counts, rates, their difference and the one-sided Fisher p-value."""
    return {"member": {"k": int(k_m), "n": int(n_m)}, "non_member": {"k": int(k_c), "n": int(n_c)},
            "member_rate": proportion(k_m, n_m, confidence_level),
            "non_member_rate": proportion(k_c, n_c, confidence_level),
            "excess": difference_ci(k_m, n_m, k_c, n_c, confidence_level),
            "p_value": fisher_greater(k_m, n_m, k_c, n_c), "test": "one-sided Fisher exact (members > "
            "non-members)"}


def simple_level(evidence: Mapping[str, Any], materiality: float = 0.01) -> str:
    """``high`` when the excess is significant (p < 0.05) and at least ``materiality``; else ``low``."""
    ex = evidence["excess"]["value"]
    if evidence["p_value"] < 0.05 and ex == ex and ex >= materiality:
        return "high"
    return "low"


def whole_sequence_copies(run: EntityRun, *, round_digits: int | None = None, min_events: int = 2,
                          time: str = "absolute") -> dict[str, dict[str, np.ndarray]]:
    """Per role, ``{"copied": bool per entity, "eligible": bool per entity}``: is the entity's whole
    sequence (of at least ``min_events`` events) the whole sequence of some synthetic entity?"""
    from ...data.entities.sequences import sequence_ids

    roles = run.data.roles
    first, nxt = event_identities(run, roles, round_digits, time)
    top = int(max(int(v.max(initial=-1)) for v in nxt.values())) + 1
    per_row = [np.where(run.ordered[r].position == 0, first[r] + top, nxt[r]) for r in roles]
    seq = sequence_ids(per_row, [run.ordered[r].entity for r in roles],
                       [run.ordered[r].position for r in roles])
    seq = dict(zip(roles, seq, strict=True))
    syn_len = run.ordered["synthetic"].lengths
    pool = np.unique(seq["synthetic"][syn_len >= 1])
    out = {}
    for r in roles:
        eligible = run.ordered[r].lengths >= max(min_events, 1)
        copied = np.isin(seq[r], pool) & eligible
        out[r] = {"copied": copied, "eligible": eligible, "ids": seq[r]}
    return out


def subsequence_copies_of(run: EntityRun, *, length: int = 3, anchor: str = "any",
                          round_digits: int | None = None, time: str = "relative"
                          ) -> dict[str, dict[str, np.ndarray]]:
    """Per role, ``{"copied", "eligible"}`` per entity: does a window of ``length`` consecutive events
    of the entity (its first ``length`` with ``anchor="prefix"``) occur in some synthetic entity?
    Entities with fewer than ``length`` events are not eligible."""
    from ...data.entities.sequences import window_ids

    roles = run.data.roles
    first, nxt = event_identities(run, roles, round_digits, time)
    win = window_ids([nxt[r] for r in roles], [first[r] for r in roles],
                     [run.ordered[r].entity for r in roles], length)
    win = dict(zip(roles, win, strict=True))
    pool = np.unique(win["synthetic"][win["synthetic"] >= 0])
    out = {}
    for r in roles:
        ev = run.ordered[r]
        n = len(ev.entities)
        ok = win[r] >= 0
        if anchor == "prefix":
            ok &= ev.position == 0
        hit = ok & np.isin(win[r], pool)
        copied = np.bincount(ev.entity[hit], minlength=n) > 0
        eligible = ev.lengths >= length
        out[r] = {"copied": copied & eligible, "eligible": eligible}
    return out
