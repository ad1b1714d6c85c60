"""``membership_attacks``: a calibrated ensemble of no-box membership attacks on the files alone.

Roles. Members are the training records, non-members the control records (each a seeded random
sample of at most ``max_rows``). The attacker's reference sample (``reference="pooled"``, the
default) is, for each scored record, every other real record: training and control pooled without
labels, the record itself left out. A record's score then depends on its own values, the release
and the unlabelled pool only, the same function for members and non-members, so they stay
exchangeable and the label-permutation tests are exact; no control row is spent on the reference
and no seeded split decides the result. ``reference="split"``: the control split (a seeded hash of
each row's content, order-free, never using membership) into a reference part and the
non-members. Every attack (:mod:`.attacks`) scores members and non-members from the release and
the reference only.

Tests. Each attack's AUC comes with its one-sided Mann-Whitney p-value (tie-corrected) and DeLong
interval, TPR at FPR 0.1 % and 1 %; the ensemble is tested by a label-permutation max-T over the
attacks (the labels are permuted, every attack's AUC recomputed from its fixed scores, the maximum
taken), so adding attacks never adds false alarms. The effect, a share of training records, is
TPR - FPR of each attack's pooled top tail (the records whose score is among the highest of all
scored records, members and non-members pooled, label-free; the tail as wide as
``close_neighbours``' default, :func:`~synthguard.metrics.privacy.near_copies.materiality_tail`),
counted on every scored record; the evidence is the attack with the largest one-sided upper bound.
That bound needs no correction for the maximum: the largest true effect belongs to one attack,
whose own bound covers it with probability >= 95 %, and the largest bound is at least that one.
The DP bound chooses an attack and threshold on one random half of the scored records and counts on
the other (Clopper-Pearson): ``eps >= log(TPR_low / FPR_high)``, a lower bound, never a
certificate.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from ...core.format import fmt_number, row_ranges
from ...core.results import (
    Baseline,
    Evidence,
    MetricResult,
    Section,
    level_from_thresholds,
    tail_flags,
)
from ...data.encoding import Block
from ...errors import MetricError
from ...registry import Context, Interval, Param, register
from ...stats import (
    auc_max_t,
    auc_test,
    epsilon_lower_bound,
    tpr_at_low_fpr,
)
from ..privacy.near_copies import materiality_tail
from .attacks import ATTACKS, RoleRows, attack_scores

TAILS = (0.01, 0.05, 0.1)  # pooled top shares whose member counts join the AUCs in the max-T
EPS_LEVELS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0)  # pooled-score quantiles tried
LIST_ROWS_UP_TO = 10_000  # the reference / non-member row numbers are listed up to this many


def _best_epsilon(lab: np.ndarray, s: np.ndarray, cl: float) -> tuple[float, float, float]:
    """``(bound, tpr, threshold)`` with the largest Clopper-Pearson epsilon bound on one half,
    over label-free candidate thresholds (quantiles of the half's pooled scores)."""
    best = (-np.inf, -1.0, np.inf)
    pos, neg = s[lab], s[~lab]
    for t in np.unique(np.quantile(s, EPS_LEVELS, method="inverted_cdf")):
        tp, fp = int(np.sum(pos >= t)), int(np.sum(neg >= t))
        b = epsilon_lower_bound(tp, pos.size, fp, neg.size, confidence_level=cl)
        key = (b["interval"][0], tp / max(pos.size, 1))
        if key > best[:2]:
            best = (key[0], key[1], float(t))
    return best


def _input_rows(tables, role: str, rows: np.ndarray) -> list[int]:
    nums = tables.row_numbers.get(role) if tables.row_numbers else None
    return [int(nums[r]) if nums is not None else int(r) for r in rows]


@register(
    "membership_attacks",
    family="attacks",
    direction="lower is safer",
    needs=("original", "synthetic", "control"), default=False,
    params=[
        Param("max_rows", 20_000, "members and non-members scored (each; seeded random "
              "sample); null = all", kind="positive int", nullable=True),
        Param("reference", "pooled", "the attacker's reference sample: 'pooled' = every other real "
              "record (training and control, unlabelled, the record scored left out), every control "
              "row a non-member; 'split' = a seeded share of the control (reference_share), the "
              "rest non-members", str, choices=("pooled", "split")),
        Param("reference_share", 0.3, "share of the control used as the attacker's reference sample "
              "(the rest are the non-members) with reference='split'", kind=float,
              interval=Interval(0.1, 0.9)),
        Param("max_reference_rows", 100_000, "cap on the reference sample (seeded random "
              "subsample)",
              kind="positive int", nullable=True),
        Param("max_fit_rows", 50_000, "release and reference rows (each) the classifier is fitted "
              "on (seeded subsample)", kind="positive int", nullable=True),
        Param("k", 5, "neighbours per reference search of the density attacks", kind=int,
              interval=Interval(1, 100)),
        Param("n_perm", 999, "label relabellings of the max-T test", kind=int,
              interval=Interval(99)),
        Param("top_records", 10, "most exposed training records listed per attack", kind="non-negative int"),
    ],
    thresholds={"medium": 0.6, "high": 0.8}, weight=2.0,
    description="best AUC of seven no-box membership attacks with a reference sample (DOMIAS, "
                "DCR-Diff, plagiarism index, Gen-LRA, classifier, near-copy, closest distance), "
                "tested jointly; 0.5 = no better than guessing",
    risk='presence',
    knowledge=("a person's full record and other real people's records; scores how much closer "
               'or denser the release is around the record than around people never trained on '
               '(seven attacks)'),
    presets=('privacy', 'full'),
    order=100,
    backend="any",
    explainer=('Seven membership attacks with a reference of other real records (DOMIAS, '
               'DCR-Diff, Gen-LRA, plagiarism index, classifier, near-copy and distance scores), '
               'tested jointly by permuting the training/control labels; states an epsilon lower '
               'bound and the most exposed training records.')
)
def membership_attacks(ctx: Context, *, max_rows: int | None = 20_000, reference: str = "pooled",
                       reference_share: float = 0.3,
                       max_reference_rows: int | None = 100_000, max_fit_rows: int | None = 50_000,
                       k: int = 5, n_perm: int = 999, top_records: int = 10) -> MetricResult:
    """Membership-attack ensemble with a reference sample split from the control.

    Parameters
    ----------
    ctx : Context
        Needs original, synthetic and control tables.
    max_rows : int or None
        Members and non-members scored, each (seeded random sample over the canonical row order).
    reference : {"pooled", "split"}
        ``"pooled"`` (default): each record is scored against every other real record (training
        and control pooled without labels, the record itself left out), so the reference depends
        on no split and every control row is a non-member; scores stay label-free, so the
        label-permutation tests are exact. ``"split"``: a seeded share of the control is the
        reference, the rest non-members.
    reference_share : float
        Share of the control rows used as the reference sample with ``reference="split"``.
    max_reference_rows, max_fit_rows : int or None
        Caps (seeded subsamples, stated in ``roles``) on the reference sample and on the rows
        the classifier is fitted on.
    k : int
        Neighbours per reference search.
    n_perm : int
        Relabellings of the max-T test.
    top_records : int
        Most exposed training records listed per attack.

    Returns
    -------
    MetricResult
        ``value`` = the best attack's AUC (0.5 = guessing); details ``attacks`` (per attack: AUC,
        DeLong CI, Mann-Whitney p, permutation and max-T adjusted p, TPR at FPR 0.1 %/1 %,
        seconds), ``ensemble`` (max-T p-value), ``advantage`` (TPR - FPR of the pooled top
        ``tail`` of each attack's scores over every scored record, a share of training records:
        the attack of largest one-sided upper bound, its counts, and every attack's counts under
        ``by_attack``), ``epsilon`` (the DP-unit lower bound), ``roles``; ``records`` = the most
        exposed training records of each attack with their scores. ``evidence`` = the
        ``advantage`` attack's counts with the max-T p-value.

    Examples
    --------
    >>> from synthguard.demo import make_demo
    >>> from synthguard.registry import Context
    >>> d = make_demo(600, seed=0)
    >>> ctx = Context.from_frames(d["original"], d["leaky"], d["control"])
    >>> res = membership_attacks(ctx, n_perm=99)
    >>> res.details["ensemble"]["p_value"] < 0.05
    True
    """
    cl = 0.95
    # every row read is asked of the backend (one process or a cluster): the scored records, the
    # reference and the classifier's fit rows are drawn by position and held here; the release and
    # the real tables are searched where they lie
    tables, data = ctx.tables, ctx.data
    cols = tables.schema.tabular_columns()
    if not cols:
        raise MetricError("no tabular columns to compare: every column is text or id")
    n_o, n_c, n_syn = (data.n_rows(r) for r in ("original", "control", "synthetic"))
    pooled = reference == "pooled"
    if reference not in ("pooled", "split"):
        raise MetricError(f"reference must be 'pooled' or 'split', not {reference!r}")
    n_ref = n_o + n_c if pooled else int(round(reference_share * n_c))
    if n_ref < 2 or n_c - (0 if pooled else n_ref) < 2 or n_o < 2 or n_syn < 1:
        raise MetricError(f"too few rows: {n_o} training, {n_c} control (split into reference and "
                          f"non-members), {n_syn} release rows")
    # roles: the control split by a seeded content key (order-free, label-free)
    if pooled:  # every real record (training rows first, then control), labels unused
        nm_all = np.arange(n_c)
        ref_rows = np.arange(n_o + n_c)
        if max_reference_rows is not None and n_o + n_c > max_reference_rows:
            ref_rows = data.content_draw(("original", "control"), cols, max_reference_rows,
                                         ctx.rng("membership-reference"))
    else:
        # the n_ref smallest seeded content keys (ties by position), capped at the smallest
        # max_reference_rows of them
        split_seed = ctx.stream_seed("reference-split")
        ref_all = data.balanced_rows("control", cols, n_ref, split_seed)
        nm_all = np.setdiff1d(np.arange(n_c), ref_all)
        ref_rows = ref_all
        if max_reference_rows is not None and ref_rows.size > max_reference_rows:
            ref_rows = data.balanced_rows("control", cols, max_reference_rows, split_seed)
    # scored records above max_rows: a seeded random draw over the canonical row order (random,
    # not clustered: identical rows are drawn independently; the same draw whatever the input order)
    nm_rows = nm_all
    if max_rows is not None and nm_rows.size > max_rows:
        nm_rows = data.content_draw(("control",), cols, max_rows, ctx.rng("membership-non-members"),
                                    among=nm_all)
    mem_rows = data.content_draw(("original",), cols, min(n_o, max_rows or n_o),
                                 ctx.rng("membership-members"))
    ranges = data.ranges(cols, roles=("original", "synthetic", "control"))
    from ...engine.neighbors import gower

    metric = gower(ranges, clip=True)
    query = Block.stack([data.encoded_rows("original", cols, mem_rows),
                         data.encoded_rows("control", cols, nm_rows)])
    if pooled:
        in_o = ref_rows < n_o
        ref_block = Block.stack([data.encoded_rows("original", cols, ref_rows[in_o]),
                                 data.encoded_rows("control", cols, ref_rows[~in_o] - n_o)])
        # each scored record's position in the reference (-1 = not in a capped reference)
        where = np.full(n_o + n_c, -1, dtype=np.int64)
        where[ref_rows] = np.arange(ref_rows.size)
        self_pos = np.r_[where[mem_rows], where[n_o + nm_rows]]
    else:
        ref_block, self_pos = data.encoded_rows("control", cols, ref_rows), None
    fit_rows = None
    fit_note = "all release and reference rows"
    if max_fit_rows is not None and (n_syn > max_fit_rows or ref_rows.size > max_fit_rows):
        rng_fit = ctx.rng("classifier-fit-rows")
        fs = np.sort(rng_fit.choice(n_syn, min(n_syn, max_fit_rows), replace=False))
        fr = np.sort(rng_fit.choice(ref_rows.size, min(ref_rows.size, max_fit_rows), replace=False))
        fit_rows = (fs, fr)
        fit_note = f"{fs.size} release and {fr.size} reference rows (seeded random subsample)"
    seed_int = int(ctx.rng("classifier").integers(0, 2**31 - 1))
    res = attack_scores(query, RoleRows(data, "synthetic", cols), ref_block, metric, k=k,
                        seed=seed_int, classifier_fit_rows=fit_rows, backend=ctx.backend,
                        real=(RoleRows(data, "original", cols), RoleRows(data, "control", cols)),
                        query_in_reference=self_pos,
                        reference_is_real=pooled and ref_rows.size == n_o + n_c)
    names = list(res.scores)
    n_m, n_n = mem_rows.size, nm_rows.size
    labels = np.r_[np.ones(n_m, dtype=bool), np.zeros(n_n, dtype=bool)]
    mat = np.vstack([np.nan_to_num(res.scores[a], nan=-np.inf, neginf=-1e300, posinf=1e300)
                     for a in names])
    mat = np.where(np.isfinite(mat), mat, -1e300)
    t0 = time.perf_counter()
    mt = auc_max_t(labels, mat, n_perm=n_perm, seed=ctx.rng("max-t"), tails=TAILS)
    t_perm = time.perf_counter() - t0
    per: dict[str, dict] = {}
    records: list[dict] = []
    for i, a in enumerate(names):
        s = mat[i]
        t = auc_test(labels, s, confidence_level=cl)
        entry = {"auc": t["auc"], "ci": t["ci"], "z": t["z"], "p_value": t["p_value"],
                 "p_permutation": dict(zip(mt["views"], mt["p_permutation"][i], strict=True)),
                 "p_adjusted": mt["p_adjusted"][i],
                 "significant": bool(mt["p_adjusted"][i] < 0.05),
                 "significant_alone": bool(t["p_value"] < 0.05), "test": t["test"],
                 "seconds": res.seconds.get(a), "note": res.notes.get(a)}
        entry.update(tpr_at_low_fpr(labels, s, n_n, n_m, negatives="non-members"))
        if top_records > 0:
            sm, sn = s[:n_m], np.sort(s[n_m:])
            top = np.lexsort((mem_rows, -sm))[:top_records]
            share = 1.0 - np.searchsorted(sn, sm[top], side="left") / max(n_n, 1)
            recs = [{"row": int(mem_rows[j]), "score": float(sm[j]),
                     "non_member_share_as_high": float(v)} for j, v in zip(top, share, strict=True)]
            records += [{"attack": a, "rank": r + 1, **rec} for r, rec in enumerate(recs)]
            # details carry input row numbers (``records`` are mapped by the registry)
            rows_in = _input_rows(tables, "original", np.array([r["row"] for r in recs], dtype=int))
            entry["top_records"] = [{**rec, "row": ri} for rec, ri in zip(recs, rows_in, strict=True)]
        per[a] = entry
    # the effect: per attack, the records in the pooled top tail of its scores (label-free: members
    # and non-members ranked together, ties included), counted on every scored record
    tail = materiality_tail(n_m + n_n, n_m, ctx.materiality)
    baseline = ("non-member control rows (every control row; the reference is every other real "
                "record, unlabelled) under the same release" if pooled else
                "non-member control rows (the control minus the reference sample) under the same "
                "release and reference")
    by_attack: dict[str, Evidence] = {}
    for i, a in enumerate(names):
        flag = tail_flags(mat[i], tail)
        by_attack[a] = Evidence.from_counts(
            f"share of records among the {100 * tail:.4g} % of all scored records (training and "
            f"control pooled) that the {a} attack scores highest", int(flag[:n_m].sum()), n_m,
            int(flag[n_m:].sum()), n_n, baseline=baseline, confidence_level=cl)
    # the evidence: the attack of largest one-sided upper bound (first in attack order on ties);
    # it bounds the largest true effect without a correction (the note says why)
    adv_attack = names[int(np.argmax([by_attack[a].upper for a in names]))]
    # epsilon: one random half chooses the attack and threshold, the other counts
    rng_half = ctx.rng("halves")
    half_a = np.zeros(labels.size, dtype=bool)
    half_a[rng_half.permutation(n_m)[: n_m // 2]] = True
    half_a[n_m + rng_half.permutation(n_n)[: n_n // 2]] = True
    half_b = ~half_a
    la, lb = labels[half_a], labels[half_b]
    eps_pick = max(((_best_epsilon(la, mat[i][half_a], cl), a) for i, a in enumerate(names)),
                   key=lambda x: x[0][:2])
    (_, _, thr_eps), eps_attack = eps_pick
    se = mat[names.index(eps_attack)][half_b]
    eps = epsilon_lower_bound(int(np.sum(se[lb] >= thr_eps)), int(lb.sum()),
                              int(np.sum(se[~lb] >= thr_eps)), int((~lb).sum()), confidence_level=cl)
    epsilon = {**eps, "attack": eps_attack, "threshold": thr_eps,
               "method": "attack and threshold chosen on one random half of the scored records "
                         "(largest Clopper-Pearson bound there), counted on the other half; one-sided "
                         "Clopper-Pearson bounds jointly at 95 %: eps >= log(TPR_low / FPR_high) "
                         "(delta = 0)",
               "meaning": "a lower bound on the epsilon of any DP generator that could have made this "
                          "release; not a certificate of privacy (no attack can prove one)"}
    best_i = int(np.argmax([per[a]["auc"] for a in names]))
    best = names[best_i]
    p_ens = float(mt["p_max"])
    ev = replace(by_attack[adv_attack], p_value=p_ens, risk="presence", sees=(),
                 test=f"{mt['method']}; effect: TPR - FPR of each attack's pooled top "
                      f"{100 * tail:.4g} % on every scored record (Newcombe interval), the attack "
                      "of largest one-sided upper bound",
                 note=f"p-value of the best of {len(names)} attacks' AUC, adjusted for the maximum "
                      "by label permutation; the effect (a share of training records) is the attack "
                      "whose one-sided upper bound is largest: the largest true effect belongs to "
                      "one attack, whose own bound covers it with 95 % confidence, and the largest "
                      "bound is at least that one, so it needs no correction for the maximum")
    thresholds = dict(ctx.thresholds) or dict(membership_attacks.spec.thresholds)
    warnings = []
    if not p_ens < 0.05:
        level = "not meaningful"
        warnings.append("no attack tells training records from non-members better than chance "
                        "(max-T p >= 0.05): this does not prove the release is safe")
    else:
        level = level_from_thresholds(per[best]["auc"], thresholds, "lower is safer")
    roles = {
        "members": int(n_m), "training_rows": int(n_o),
        "members_note": ("every training row" if n_m == n_o else
                         f"{n_m} of {n_o} training rows (seeded random sample)"),
        "reference": int(ref_rows.size), "non_members": int(n_n), "control_rows": int(n_c),
        "split": ((f"reference: every other real record ({n_o} training and {n_c} control rows "
                   "pooled without labels, the record scored left out); every control row a "
                   "non-member; labels are never used"
                   + (f"; reference a seeded random {ref_rows.size} of the {n_ref} real rows"
                      if ref_rows.size < n_ref else "")) if pooled else
                  (f"control split by a seeded hash of each row's content (seed {ctx.seed}): "
                   f"{n_ref} rows reference ({reference_share:g} of the control), {n_c - n_ref} "
                   "non-members; labels are never used"
                   + (f"; reference capped at {ref_rows.size} rows" if ref_rows.size < n_ref
                      else ""))) + (f"; {n_n} non-members scored" if n_n < nm_all.size else ""),
        "reference_kind": reference,
        "release_rows": int(n_syn), "classifier_fit": fit_note,
    }
    if n_c <= LIST_ROWS_UP_TO and not pooled:
        roles["reference_rows"] = sorted(_input_rows(tables, "control", ref_rows))
    if n_c <= LIST_ROWS_UP_TO:
        roles["non_member_rows"] = sorted(_input_rows(tables, "control", nm_rows))
    details = {
        "attacks": per,
        "best_attack": best,
        "ensemble": {"p_value": p_ens, "method": mt["method"], "n_perm": mt["n_perm"],
                     "seconds": t_perm, "significant": [a for a in names if per[a]["significant"]]},
        "advantage": {"value": ev.effect, "ci": ev.effect_ci, "upper": ev.upper,
                      "attack": adv_attack, "tail": tail,
                      "members_flagged": ev.k_member, "members": n_m,
                      "non_members_flagged": ev.k_non_member, "non_members": n_n,
                      "by_attack": {a: {"members_flagged": e.k_member,
                                        "non_members_flagged": e.k_non_member,
                                        "value": e.effect, "upper": e.upper}
                                    for a, e in by_attack.items()},
                      "method": "each attack flags the scored records in the pooled top tail of "
                                "its scores (training and control ranked together, label-free, "
                                "ties included; the tail as wide as close_neighbours' default: "
                                "room for 2.5 material leaks, at least 2 % and 20 records); "
                                "TPR - FPR on every scored record with its Newcombe interval; "
                                "the attack of largest one-sided upper bound is reported",
                      "meaning": "share of training records exposed beyond non-members (TPR - FPR) "
                                 "by the attack whose upper bound is largest"},
        "epsilon": epsilon,
        "bandwidth": res.bandwidth,
        "roles": roles,
        "distance": "gower (range-scaled over original+synthetic+control, terms clipped at 1); "
                    "near_copy: equal cells among the closest release rows",
        "thresholds": thresholds,
    }
    return MetricResult(
        name="membership_attacks", family="attacks", value=per[best]["auc"],
        direction="lower is safer",
        baseline=Baseline(0.5, "AUC of random guessing (training records and non-members alike)"),
        ci=per[best]["ci"], n=int(n_m + n_n), risk_level=level,
        warning="; ".join(warnings) or None, details=details, records=records or None,
        evidence=ev, sections=_sections(per, roles))


def _sections(per: dict[str, dict], roles: dict[str, Any]) -> tuple[Section, ...]:
    """What the report draws: each attack's most exposed training records, and the roles of the
    control rows (reference sample, non-members)."""
    rows = [(attack, fmt_number(a.get("auc"), 3), fmt_number(a.get("p_adjusted"), 3),
             ", ".join(f"{r['row']} ({fmt_number(r['score'], 3)})" for r in a.get("top_records") or [])
             or "-") for attack, a in per.items()]
    role_rows = [("members (training)", str(roles.get("members_note", "")))]
    if roles.get("reference_kind") == "pooled":
        role_rows.append(("reference", f"{roles.get('reference')} rows: every other real record "
                                       "(training and control pooled without labels, the record "
                                       "scored left out)"))
    else:
        listed = roles.get("reference_rows")
        role_rows.append(("reference (control)", f"{roles.get('reference')} rows: " + (
            row_ranges(listed) if listed is not None else "not listed (a large control)")))
    listed = roles.get("non_member_rows")
    role_rows.append(("non-members (control)", f"{roles.get('non_members')} rows: " + (
        row_ranges(listed) if listed is not None else "not listed (a large control)")))
    return (Section("the most exposed training records per attack",
                    ("attack", "AUC", "adjusted p", "most exposed training rows (score)"), rows,
                    note="Training row numbers of the input (score in brackets, higher = more "
                         "exposed); the same lists are in the JSON (details.attacks.*.top_records, "
                         "details.roles).", folded=True),
            Section("which control rows were reference and non-members",
                    ("role", "rows of the input"), role_rows, note=str(roles.get("split", "")),
                    folded=True))


__all__ = ["membership_attacks", "ATTACKS"]


def _random_draw(frame: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted positions of ``n`` rows of ``frame`` drawn at random (seeded) over its canonical
    content order, so the draw does not depend on the input row order; all rows when ``n`` covers
    them (what :meth:`~synthguard.engine.backend.Backend.content_draw` draws over a table)."""
    from ...data.hashing import row_hashes
    from ...engine.backend import draw_in_content_order

    if n >= len(frame):
        return np.arange(len(frame))
    return draw_in_content_order(row_hashes(frame), np.arange(len(frame)), n, rng)
