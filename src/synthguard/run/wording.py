"""Every sentence a report writes about the verdict: its levels, what each risk found or rules out,
the detection limits, the actions, and the dossier's reading of them. One module, so the console,
the HTML page, the notebook view and the dossier say one thing in one set of words; the renderers
(:mod:`synthguard.report`) lay these sentences out and write none of their own.

The vocabulary, used the same way in every sentence:

* **excess** (``exposed beyond chance``): the share of training records a test flags minus the
  share of control records (real people the generator never saw) it flags, with its interval;
* **materiality**: the excess that matters (default 1 % of the training records);
* **detection limit**: for one leak family (exact copies, copies with one cell changed, copies of
  rare records...) and one risk, the smallest share of the training records that, leaked that way
  into the release, the run reads ``high`` with 80 % power (measured by putting such rows, built
  from the run's own training records, into the release and re-testing). Nothing else is called a
  detection limit; a risk that reads ``high`` states what it found, not what it might have missed;
* **bound**: the largest excess a risk that does not alarm rules out (its tests' one-sided upper
  bounds and its families' detection limits, the verdict's ``bound``);
* **the same test**: two metrics whose statistic the verdict found identical on the same records
  (``same_as``), never two metrics whose numbers happen to coincide.

Two sections: the verdict's own sentences (moved here from :mod:`synthguard.run.verdict`), then the
report's sentences. Sentences take typed model rows (:mod:`synthguard.core.report_model`) and the
facts the report counts from its records (:class:`Facts`); they never read a metric's ``details``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.format import fmt_number, pct
from ..data.leaks import FAMILY_NAMES

# =================================================================================================
# The verdict's sentences (run/verdict.py): moved here by the verdict's owner.
# =================================================================================================


def _drop_prefix(rows_dropped: int, rounds: int) -> str:
    return (f"without the {rows_dropped} release rows listed to drop ({rounds} "
            f"round{'s' if rounds != 1 else ''} of dropping and re-testing)")


def _drop_clause(title: str, level_before: str, level_after: str, effect: float | None,
                 effect_ci: Any) -> str:
    text = (f"{title.lower()} reads {str(level_after).upper()} "
            f"(was {str(level_before).upper()})")
    if effect is not None:
        text += f", {pct(effect)} of the training records exposed beyond chance"
        if effect_ci is not None and effect_ci[0] is not None:
            text += f" ({interval(effect_ci)})"
    return text


def _identifier_why(before: str, reason: Any) -> str:
    """Why the typing reads a column as an identifier, in a few words (``""`` for a reason the two
    row checks of :mod:`synthguard.data.quirks` do not give)."""
    from ..data.quirks import row_numbers_reason, surrogate_reason

    if reason == surrogate_reason(before):
        return "unique per row, no value shared between the tables"
    if str(reason or "").startswith(row_numbers_reason("")):
        return "row numbers, not data"
    return ""


def retyped(changed: Iterable[Mapping[str, Any]] | None) -> str:
    """What the typing of the release without the dropped rows reads otherwise than the run's
    (a round's ``typed_otherwise``, :func:`synthguard.run.actions.drop_retest`), in one clause:
    the level after is then not a test on the same columns. ``""`` when nothing is typed
    otherwise. Columns in name order; columns read alike are named together.

    Examples
    --------
    >>> from synthguard.data.quirks import surrogate_reason
    >>> retyped([{"column": "seqn", "sdtype_before": "numerical", "sdtype_after": "id",
    ...           "reason": surrogate_reason("numerical")}])
    "without those rows, column 'seqn' reads as an identifier (unique per row, no value shared between the tables) and is no longer compared"
    >>> retyped([{"column": "b", "sdtype_before": "categorical", "sdtype_after": "id", "reason": "x"},
    ...          {"column": "a", "sdtype_before": "numerical", "sdtype_after": "id", "reason": "x"}])
    "without those rows, columns 'a' and 'b' read as identifiers and are no longer compared"
    >>> retyped([])
    ''
    """
    groups: dict[tuple[str, str, str], list[str]] = {}
    for c in sorted(changed or (), key=lambda c: str(c["column"])):
        after, before = str(c["sdtype_after"]), str(c["sdtype_before"])
        if after == "id":
            key = ("id", _identifier_why(before, c.get("reason")), "")
        else:  # another type: still compared, as that type
            key = (after, "", before)
        groups.setdefault(key, []).append(repr(str(c["column"])))
    parts = []
    for (after, why, before), cols in groups.items():
        one = len(cols) == 1
        head = f"column {cols[0]} reads" if one else f"columns {_join(cols)} read"
        if after == "id":
            parts.append(f"{head} as {'an identifier' if one else 'identifiers'}"
                         + (f" ({why})" if why else "")
                         + f" and {'is' if one else 'are'} no longer compared")
        else:
            parts.append(f"{head} as {after} (was {before})")
    return "without those rows, " + _join(parts) if parts else ""


def drop_retest_text(title: str, level_before: str, level_after: str, rows_dropped: int,
                     rounds: int, effect: float | None = None, effect_ci: Any = None,
                     why: Mapping[str, str] | None = None,
                     typed_otherwise: Iterable[Mapping[str, Any]] | None = None) -> str:
    """An alarming risk re-tested without the release rows listed to drop (the drop-and-retest's
    ``text``, :func:`synthguard.run.actions.drop_retest`): what it reads after, the columns the
    release without those rows is typed otherwise (the last round's ``typed_otherwise``:
    :func:`retyped`), and why what still alarms does.

    Examples
    --------
    >>> drop_retest_text("Presence of training records", "high", "inconclusive", 292, 1, 0.031,
    ...                  (-0.0096, 0.069))
    'without the 292 release rows listed to drop (1 round of dropping and re-testing), presence of training records reads INCONCLUSIVE (was HIGH), 3.1 % of the training records exposed beyond chance (-0.96 % to 6.9 %)'
    >>> drop_retest_text("Presence of training records", "high", "inconclusive", 27, 1,
    ...                  typed_otherwise=[{"column": "seqn", "sdtype_before": "numerical",
    ...                                    "sdtype_after": "id", "reason": ""}])
    "without the 27 release rows listed to drop (1 round of dropping and re-testing), presence of training records reads INCONCLUSIVE (was HIGH); without those rows, column 'seqn' reads as an identifier and is no longer compared"
    """
    text = (_drop_prefix(rows_dropped, rounds) + ", "
            + _drop_clause(title, level_before, level_after, effect, effect_ci))
    typed = retyped(typed_otherwise)
    if typed:
        text += "; " + typed
    if why:
        text += "; still alarming: " + "; ".join(f"{n} ({w})" for n, w in why.items())
    return text


#: Why a drop-and-retest re-tested nothing: the release would be empty.
NOTHING_LEFT = "every release row is listed to drop: no release is left to re-test"


def still_alarming(kind: str, tie: str = "", rounds: int = 0, rows: int = 0,
                   chance: float = 0.05) -> str:
    """Why a test still alarms after the rows were dropped (the drop-and-retest's ``why``):
    ``kind`` ``"untied"`` (its finding names no release row), ``"review"`` (it names rows to
    review, ``tie`` its words), ``"rounds"`` (it still names rows to drop after ``rounds``
    rounds, the most allowed), ``"chance"`` (the ``rows`` release rows it still names are ties
    the control shows too often by chance among records as crowded (above ``chance`` of
    them: ``1 - COPY_SHARE`` of :func:`~synthguard.run.drops.chance_cut`): listed to review,
    so no further round drops them) or ``"later"`` (it names rows only once the others are gone).

    Examples
    --------
    >>> still_alarming("rounds", rounds=2)
    'it still names release rows after 2 round(s) of dropping (the rounds ran out)'
    >>> still_alarming("chance", rounds=1, rows=26)[:80]
    'the 26 release row(s) it still names after 1 round(s) of dropping are listed to '
    """
    if kind == "untied":
        return ("its finding is not tied to release rows (a test of the release as a whole): "
                "dropping rows cannot be shown to settle it")
    if kind == "review":
        return f"it names release rows to review, not to drop ({tie})"
    if kind == "chance":
        return (f"the {rows} release row(s) it still names after {rounds} round(s) of dropping are "
                "listed to review, not to drop: among records as crowded as theirs the control "
                f"shows more than {round(100 * chance)} % of such ties by chance, so a "
                "drop could remove real people the generator never saw; no further round was run")
    if kind == "rounds":
        return (f"it still names release rows after {rounds} round(s) of dropping (the rounds ran "
                "out)")
    return "it names rows only once the others are gone"


def retest_cost(what: str, tests: int, runs: int, at_most: int) -> str:
    """The cost line of an in-run re-test (the JSON's ``actions.*.cost``): ``what`` is
    ``"rows"`` (drop and re-test, ``runs`` rounds) or ``"columns"`` (coarsen and re-test).

    Examples
    --------
    >>> retest_cost("rows", 12, 1, 3)
    "one more run of the verdict's 12 test(s) per round (1 round(s); at most 3, only when a test names release rows to drop); retest_rows=0 switches it off"
    """
    if what == "rows":
        return (f"one more run of the verdict's {tests} test(s) per round ({runs} round(s); at "
                f"most {at_most}, only when a test names release rows to drop); retest_rows=0 "
                "switches it off")
    return (f"one more run of the verdict's {tests} test(s) per re-tested column ({runs} run(s); "
            f"at most {at_most}, only when singling out or inference alarms); retest_columns=0 "
            "switches it off")


def coarsening_text(title: str, level_before: str, column: str, how: str, top: int,
                    level_after: str, effect: float | None = None, effect_ci: Any = None,
                    not_run: Mapping[str, Any] | None = None, rows_dropped_first: int = 0) -> str:
    """A coarsen-and-retest entry's ``text`` (:func:`synthguard.run.actions.coarsen_retest`): the
    risk, the column that drove it, the coarsening and what the risk reads after; the tests that
    could not run on the coarsened tables (``not_run``: name -> why); after the rows dropped first.

    Examples
    --------
    >>> coarsening_text("Singling out", "high", "age", "10 quantile bins (edges ...)", 10, "low",
    ...                 0.001, (-0.01, 0.012))
    'singling out: HIGH, driven by exact values of age; binned into 10 quantile bins it reads LOW (0.1 % of the training records exposed beyond chance, -1.0 % to 1.2 %)'
    """
    short = (f"binned into {how.split(' quantile')[0]} quantile bins" if "quantile" in how
             else f"with its {top} most frequent categories kept and the rest merged")
    text = (f"{title.lower()}: {level_before.upper()}, driven by exact values of {column}; "
            f"{short} it reads {level_after.upper()}"
            + (f" ({pct(effect)} of the training records exposed beyond chance, "
               + ("no interval" if not effect_ci or effect_ci[0] is None
                  else f"{pct(effect_ci[0])} to {pct(effect_ci[1])}") + ")"
               if effect is not None else ""))
    if not_run:
        text += " (on the coarsened tables " + "; ".join(
            f"{n} did not run: {str(why).rstrip('.')}" for n, why in sorted(not_run.items())) + ")"
    if rows_dropped_first:
        text = f"after dropping the {rows_dropped_first} listed release rows, " + text
    return text




# =================================================================================================
# The report's sentences: the decision block, the actions, the dossier's readings.
# =================================================================================================

__all__ = ["CEILING_NOTE", "NOT_ASSESSED", "OUTCOMES", "TESTS_NOTE", "Facts",
           "card_headline", "card_pick", "card_privacy", "decision_limits", "decision_proposal",
           "dossier_reading", "informative_line", "interval", "interval_note", "intruder", "bound_cell",
           "sample_line",
           "limits_line", "materiality", "records_caption", "no_control", "pct", "residual", "retest", "risk_advice",
           "same_test", "sentence", "settings", "settle", "threshold_justification",
           "utility_paragraph", "verdict_line", "what_to_do"]

#: A risk the run did not assess (no test of it ran, or the verdict states no risks).
NOT_ASSESSED = "Not assessed: no test of this risk compared training records with a control."
#: How to read the report's table of privacy tests (its intervals: :func:`interval_note`).
TESTS_NOTE = ("Each test compares training records with real records the generator never saw (the "
              "control), under the same release. Metrics the verdict found to compute the same "
              "statistic on the same records share one row.")
#: How to read a fidelity ceiling.
CEILING_NOTE = ("The ceiling is what the control table (real rows held out from training) scores "
                "against the original: what a perfect generator would reach at this sample size.")
#: The decisions a dossier records.
OUTCOMES = ("approve", "approve with conditions", "reject")
#: Where the records export is, per surface: the command line, the Python API, or both.
RECORDS_HOW = {"cli": "'--records-out rows.csv'", "api": "report.records(original, synthetic)",
               "both": "'--records-out rows.csv' (or report.records(original, synthetic))"}


@dataclass(frozen=True)
class Facts:
    """What the report counts beside the verdict for its sentences (from the records export, the
    inputs and the metrics' typed headlines).

    Parameters
    ----------
    copies : tuple of int, optional
        ``(release rows that are verbatim training rows, release rows)``.
    more_drops : int
        Further release rows listed to drop (at distance 0 from a training row) by other metrics
        (a report without the run's own rows: no control, or an older report).
    review_presence : int
        Release rows listed for review under presence as matches of training rows (a copy or
        near copy's family named), none of them listed to drop.
    review_listed : int
        Further release rows listed for review under presence by a test that reads the release as
        a whole and names them itself (no family: ``dcr_overfitting_protection``'s rows), none of
        them counted above or listed to drop.
    review_all : int
        Every record the records export marks ``review``.
    drops : tuple of (str, int), optional
        The run's own rows to drop (the records export's action ``drop``), per leak family the
        row's cells show (``"exact"``, ``"near1"``, ...; ``""``: none), in the export's order:
        what the in-run drop-and-retest removed. Empty for a report without the run's rows.
    has_control : bool
        Whether a control table was given.
    copy_reading : str, optional
        The copy metric's own reading of its numbers (what a run without a control can say).
    rows_needed : int, optional
        Training and control rows (each) that give a 1 % detection limit, for a run without one.
    how : {"cli", "api", "both"}
        How the reader gets the records export.
    listed : tuple of int, optional
        ``(records behind high and medium findings, of them to drop, context records)`` in the
        records export of a report whose verdict has tests (``context``: records of tests that
        found nothing beyond chance, not findings); ``None`` otherwise.

    Examples
    --------
    >>> Facts(copies=(3, 10)).copies
    (3, 10)
    """

    copies: tuple[int, int] | None = None
    more_drops: int = 0
    review_presence: int = 0
    review_listed: int = 0
    review_all: int = 0
    has_control: bool = True
    copy_reading: str | None = None
    rows_needed: int | None = None
    how: str = "both"
    drops: tuple[tuple[str, int], ...] = ()
    listed: tuple[int, int, int] | None = None


def interval_note(levels: Any) -> str:
    """Which interval an excess is printed with (the HTML page's and the dossier's tests), from the
    confidence levels of the tests' evidence (:attr:`synthguard.core.results.Evidence.effect_ci`:
    its two one-sided bounds at that level).

    Examples
    --------
    >>> interval_note([0.95, 0.95])
    'The interval of an excess is its two one-sided 95 % bounds (a 90 % interval): its upper end is the largest excess the test rules out, the bound a risk reads.'
    >>> interval_note([0.95, 0.99])[:99]
    "The interval of an excess is its two one-sided bounds at the test's confidence level (95 % or 99 %)"
    """
    found = sorted({float(x) for x in levels if x is not None})
    tail = ": its upper end is the largest excess the test rules out, the bound a risk reads."
    if len(found) == 1:
        level = found[0]
        return (f"The interval of an excess is its two one-sided {fmt_number(100 * level)} % bounds "
                f"(a {fmt_number(100 * (2 * level - 1))} % interval){tail}")
    shown = " or ".join(f"{fmt_number(100 * x)} %" for x in found) or "95 %"
    return (f"The interval of an excess is its two one-sided bounds at the test's confidence level "
            f"({shown}){tail}")


def interval(ci: Any) -> str:
    """``(0.01, 0.05)`` -> ``"1.0 % to 5.0 %"``; ``"no interval"`` when there is none.

    Examples
    --------
    >>> interval((0.012, 0.05)), interval(None)
    ('1.2 % to 5.0 %', 'no interval')
    """
    if not isinstance(ci, Sequence) or len(ci) != 2 or ci[0] is None or ci[1] is None:
        return "no interval"
    return f"{pct(ci[0])} to {pct(ci[1])}"


def settings(verdict: Any) -> str:
    """The verdict's settings in one parenthesis: release type, materiality, false-alarm rate.

    Examples
    --------
    >>> from synthguard.run.verdict import RiskRule, Verdict
    >>> settings(Verdict("low", RiskRule(), "s"))
    'release: synthetic, materiality 1 % of the training records, false-alarm rate 5 %'
    """
    rule = verdict.rule
    return (f"release: {rule.release_type}, materiality "
            f"{fmt_number(100 * float(rule.materiality))} % of the training {verdict.unit}, "
            f"false-alarm rate {fmt_number(100 * float(rule.alpha))} %")


def _drop_parts(facts: Facts) -> str:
    """The run's rows to drop by leak family, in words: ``"147 verbatim training rows and 145
    copies with one cell changed"``."""
    parts = []
    for family, n in facts.drops:
        name = {"exact": "verbatim training rows",
                "neighbourhood": "rows close to a training row",
                # the export's ``linkage``: rows a linkability test ties to the record it links
                # (declared roles or not), not the injected leak family of that name
                "linkage": "rows that link a training record"}.get(
                    family, FAMILY_NAMES.get(family, "further rows a test names"))
        parts.append(f"{n} {name}")
    return _join(parts)


def risk_advice(row: Any, facts: Facts) -> str | None:
    """What a risk that alarms asks for, in one or two sentences (``None`` for any other level).

    Examples
    --------
    >>> risk_advice({"risk": "presence", "level": "high"}, Facts(copies=(3, 10), how="api"))
    'Do not publish as is. 3 of the 10 release rows (30.0 %) are verbatim training rows: drop them (the records export lists every one).'
    >>> risk_advice({"risk": "presence", "level": "high"},
    ...             Facts(copies=(3, 10), drops=(("exact", 3), ("near1", 2))))
    'Do not publish as is. 5 of the 10 release rows (50.0 %) are listed to drop, 3 verbatim training rows and 2 copies with one cell changed: drop them (the records export lists every one).'
    """
    level = row["level"]
    if level not in ("high", "medium"):
        return None
    text = ("Do not publish as is." if level == "high" else
            "Act before publishing: the excess is significant, though below the materiality.")
    if row["risk"] != "presence":
        return text
    if facts.drops and facts.copies and {f for f, _ in facts.drops} != {"exact"}:
        k, n = sum(c for _, c in facts.drops), facts.copies[1]
        text += (f" {k} of the {n} release rows ({pct(k / n)}) are listed to drop, "
                 f"{_drop_parts(facts)}: drop them (the records export lists every one).")
    elif facts.copies and facts.copies[0]:
        # the run's rows to drop when it listed them (all verbatim here), else the copy metric's
        k, n = (sum(c for _, c in facts.drops) if facts.drops else facts.copies[0]), facts.copies[1]
        text += (f" {k} of the {n} release rows ({pct(k / n)}) are verbatim training rows: drop "
                 "them (the records export lists every one).")
    return text


def risk_readings(risks: Sequence[Any], facts: Facts | None = None) -> list[str]:
    """Each risk's reading, in order: its verdict summary, then (with ``facts``) what it asks for
    (:func:`risk_advice`). A finding an earlier risk already stated (one test driving several
    criteria, as a verbatim copy does) is not repeated: the later alarming risk points back to it.

    Examples
    --------
    >>> rows = [{"risk": "presence", "title": "Presence of training records", "level": "high",
    ...          "summary": "near_copies exposes 40 %"},
    ...         {"risk": "singling_out", "title": "Singling out", "level": "high",
    ...          "summary": "near_copies exposes 40 %"}]
    >>> risk_readings(rows)
    ['near_copies exposes 40 %.', 'The same finding as for presence of training records (above).']
    """
    out: list[str] = []
    first: dict[str, str] = {}
    for r in risks:
        text = sentence(r.get("summary"))
        if text and text in first and r.get("level") in ("high", "medium"):
            text = f"The same finding as for {first[text]} (above)."
        elif text:
            first[text] = str(r.get("title") or r.get("risk")).lower()
        advice = risk_advice(r, facts) if facts is not None else None
        out.append(" ".join(t for t in (text, advice) if t))
    return out


def settle(row: Any) -> str | None:
    """What would decide an undecided risk (the verdict's own words), as a sentence."""
    text = row.get("settle")
    return f"To decide: {text}." if text else None


def bound_cell(row: Any) -> str:
    """What a risk that does not alarm rules out (its bound), for a table cell; nothing for a risk
    that alarms (it states what it found); ``none`` while a leak family is not assessed (no bound
    is claimed: the risk's reading names the families).

    Examples
    --------
    >>> bound_cell({"level": "inconclusive", "bound": 0.021}), bound_cell({"level": "high"})
    ('2.1 %', '-')
    >>> bound_cell({"level": "inconclusive", "bound": 0.16, "unassessed": ["noise2", "noise5"]})
    'none'
    """
    if row["level"] in ("high", "medium", "not assessed"):
        return "-"
    bound = row.get("bound")
    if row.get("unassessed"):  # a family no test sees could leak any share: no bound is claimed
        return "none"  # (its reading names the families not assessed)
    return "nothing below the materiality" if bound is None else pct(bound)


def _families_unassessed(row: Any) -> str:
    n = len(row.get("unassessed") or ())
    return f"{n} leak {'family' if n == 1 else 'families'} not assessed"


def _limit_parts(limits: Mapping[str, Any]) -> list[str]:
    parts = []
    for leak, lim in limits.items():
        if not isinstance(lim, Mapping):
            continue
        name = FAMILY_NAMES.get(leak, leak)
        if lim.get("ceiling") and lim.get("value") is not None:
            parts.append(f"{name} cannot reach the materiality (only {lim.get('eligible')} training "
                         f"records, {pct(lim['value'])}, qualify)")
        elif lim.get("value") is not None:
            k = lim.get("k")
            parts.append(f"{name} {pct(lim['value'])}"
                         + (f" ({k} training records)" if k is not None else ""))
        elif lim.get("tests"):
            parts.append(f"{name} not detected even if every candidate leaked")
        else:
            parts.append(f"{name}: no test of this run responds to this leak")
    return parts


def limits_line(limits: Mapping[str, Any], titles: Sequence[str] = ()) -> str | None:
    """Every leak family's detection limit in one sentence, with what the term means (``None``
    when there is none); ``titles``: the risks these limits are for.

    Examples
    --------
    >>> limits_line({"exact": {"value": 0.02, "k": 8, "power": 0.8},
    ...              "rare": {"value": None, "k": None, "power": 0.8, "tests": ["exact_matches"]}})
    'Detection limits (the smallest leak of each family this run reads high with 80 % power, measured by putting such rows into the release and re-testing): exact copies 2.0 % (8 training records); copies of rare records not detected even if every candidate leaked.'
    """
    parts = _limit_parts(limits)
    if not parts:
        return None
    powers = {lim.get("power") for lim in limits.values() if isinstance(lim, Mapping)} - {None}
    power = pct(max(powers), 0) if powers else "80 %"
    whose = f" of {_join(list(titles)).lower()}" if titles else ""
    return (f"Detection limits{whose} (the smallest leak of each family this run reads high with "
            f"{power} power, measured by putting such rows into the release and re-testing): "
            + "; ".join(parts) + ".")


def decision_limits(risks: Sequence[Any]) -> list[str]:
    """The detection limits of the risks that do not alarm, one sentence per set of limits (risks
    with the same limits share it); a risk that alarms states what it found instead."""
    groups: list[tuple[Mapping[str, Any], list[str]]] = []
    for r in risks:
        if r["level"] not in ("low", "inconclusive") or not r.get("detection_limits"):
            continue
        lims = r["detection_limits"]
        for known, titles in groups:
            if dict(known) == dict(lims):
                titles.append(r["title"])
                break
        else:
            groups.append((lims, [r["title"]]))
    return [t for lims, titles in groups if (t := limits_line(lims, titles))]


def sentence(text: str | None) -> str:
    """``text`` ending in a full stop (the verdict writes its summaries without one)."""
    text = str(text or "").strip()
    return text if not text or text.endswith((".", "!", "?")) else text + "."


def retest(title: str, c: Any) -> str:
    """A driving column coarsened and every test run again: what the risk reads after.

    Examples
    --------
    >>> retest("Singling out", {"column": "income", "coarsening": "10 quantile bins",
    ...        "level_before": "high", "level_after": "low", "effect_after": 0.001,
    ...        "effect_ci_after": [-0.01, 0.012]})
    "Re-tested with 'income' coarsened, 10 quantile bins: singling out reads LOW (was HIGH), 0.1 % of the training records exposed beyond chance (-1.0 % to 1.2 %)."
    """
    return (f"Re-tested with {c['column']!r} coarsened, {c['coarsening']}: {title.lower()} reads "
            f"{str(c['level_after']).upper()} (was {str(c['level_before']).upper()}), "
            f"{pct(c.get('effect_after'))} of the training records exposed beyond chance "
            f"({interval(c.get('effect_ci_after'))}).")


def dropped(r: Any) -> str | None:
    """An alarming risk re-tested without the release rows listed to drop: what it reads after
    (``None`` when the run did not drop and re-test).

    Examples
    --------
    >>> dropped({"drop_retest": {"text": "without the 3 release rows listed to drop (1 round of "
    ...          "dropping and re-testing), presence of training records reads LOW (was HIGH)"}})
    'Re-tested without the 3 release rows listed to drop (1 round of dropping and re-testing), presence of training records reads LOW (was HIGH).'
    """
    d = r.get("drop_retest") if hasattr(r, "get") else None
    if not d or not d.get("text"):
        return None
    return sentence(f"Re-tested {d['text']}")


def dropped_all(risks: Sequence[Any]) -> list[str]:
    """Every alarming risk re-tested without the release rows listed to drop, the risks of one
    drop (the same rows, the same rounds, the same columns typed otherwise: :func:`retyped`,
    said once at the end) in one sentence; a risk that still alarms for a reason gets a sentence
    of its own (:func:`dropped`).

    Examples
    --------
    >>> d = {"rows_dropped": 3, "rounds": 1, "level_before": "high", "level_after": "low",
    ...      "effect_after": 0.001, "effect_ci_after": None, "why": {}, "text": "x"}
    >>> dropped_all([{"title": "Singling out", "drop_retest": d},
    ...              {"title": "Linkability", "drop_retest": dict(d, level_after="inconclusive")}])
    ['Re-tested without the 3 release rows listed to drop (1 round of dropping and re-testing): singling out reads LOW (was HIGH), 0.1 % of the training records exposed beyond chance; linkability reads INCONCLUSIVE (was HIGH), 0.1 % of the training records exposed beyond chance.']
    """
    groups: dict[tuple[Any, Any], list[str]] = {}
    alone: list[str] = []
    for r in risks:
        d = r.get("drop_retest") if hasattr(r, "get") else None
        if not d or not d.get("text"):
            continue
        if d.get("why") or d.get("rows_dropped") is None:
            alone.append(dropped(r) or "")
            continue
        key = (d["rows_dropped"], d.get("rounds"), retyped(d.get("typed_otherwise")))
        groups.setdefault(key, []).append(
            _drop_clause(str(r.get("title")), d["level_before"], d["level_after"],
                         d.get("effect_after"), d.get("effect_ci_after")))
    out = [sentence(f"Re-tested {_drop_prefix(n, rounds)}: " + "; ".join(clauses)
                    + (f"; {typed}" if typed else ""))
           for (n, rounds, typed), clauses in groups.items()]
    return out + alone


def _helps(c: Any) -> bool:
    return c["level_after"] not in ("high", "medium") and c["level_before"] in ("high", "medium")


def what_to_do(risks: Sequence[Any], verdict_level: str, facts: Facts) -> list[str]:
    """The actions, in the order to take them: rows to drop, rows to review, columns whose
    coarsening the run re-tested and found to remove the alarm, a control to hold out, more rows.
    Advice whose precondition does not hold is not given: nothing about near matches without a
    presence alarm, no coarsening the re-test did not show to work, no "more rows" while a risk
    alarms.

    Examples
    --------
    >>> what_to_do([{"risk": "presence", "level": "high"}], "high", Facts(copies=(3, 10), how="cli"))
    ["Drop the 3 release rows that are verbatim training rows: '--records-out rows.csv' lists every one with the training row it copies."]
    >>> what_to_do([{"risk": "presence", "level": "high"}], "high",
    ...            Facts(copies=(3, 10), drops=(("exact", 3), ("near1", 2)), how="cli"))[0]
    "Drop the 5 release rows the records export marks 'drop' (3 verbatim training rows and 2 copies with one cell changed): '--records-out rows.csv' lists every one with the training row it copies."
    """
    out = []
    alarm = {r["risk"] for r in risks if r["level"] in ("high", "medium")}
    if alarm and facts.drops and {f for f, _ in facts.drops} != {"exact"}:  # rows of alarms
        n = sum(c for _, c in facts.drops)
        out.append(f"Drop the {n} release rows the records export marks 'drop' "
                   f"({_drop_parts(facts)}): {RECORDS_HOW[facts.how]} lists every one with the "
                   "training row it copies.")
    elif alarm and facts.drops:  # every row to drop is a verbatim training row
        out.append(f"Drop the {sum(c for _, c in facts.drops)} release rows that are verbatim "
                   f"training rows (action 'drop'): {RECORDS_HOW[facts.how]} lists every one with "
                   "the training row it copies.")
    elif "presence" in alarm and facts.copies and facts.copies[0]:
        out.append(f"Drop the {facts.copies[0]} release rows that are verbatim training rows: "
                   f"{RECORDS_HOW[facts.how]} lists every one with the training row it copies.")
    if "presence" in alarm and facts.more_drops:
        out.append(f"Drop the {facts.more_drops} further release row(s) at distance 0 from a "
                   "training row (action 'drop' in the records export).")
    near, whole = facts.review_presence, facts.review_listed
    where = "(action 'review', risk 'presence' in the records export)"
    matches = "verbatim or near matches of training rows"
    itself = "a test of the release as a whole lists itself as examples, not as copies it found"
    if "presence" in alarm and near and whole:
        out.append(f"Review the {near + whole} release row(s) the records export marks 'review' "
                   f"under presence: {near} {matches} and {whole} {itself}.")
    elif "presence" in alarm and (near or whole):
        out.append(f"Review the {near} release row(s) listed as {matches} {where}." if near else
                   f"Review the {whole} release row(s) {itself} {where}.")
    for r in risks:
        for c in r.get("coarsening") or ():
            if _helps(c):
                out.append(f"Release {c['column']!r} coarsened, {c['coarsening']}: re-tested so, "
                           f"{r['title'].lower()} reads {str(c['level_after']).upper()}.")
    if not facts.has_control:
        out.append("Hold out real rows the generator never saw and pass them as the control"
                   + (f" (about {facts.rows_needed:,} training and {facts.rows_needed:,} control "
                      "rows give a detection limit of 1 %)" if facts.rows_needed else "") + ".")
    elif verdict_level == "inconclusive":
        out.append("Settle each inconclusive risk as its 'to decide' says (more training and "
                   "control records, or a test for the leak families not assessed), then evaluate "
                   "again.")
    return out


def no_control(facts: Facts) -> str | None:
    """What a run without a control can still say, or ``None`` when a control was given."""
    if facts.has_control:
        return None
    head = f"{facts.copy_reading}. " if facts.copy_reading else ""
    return (head + "Reference cut-offs (SynEval: more than 5 % of release rows copied is high; "
            "anonymeter: a risk above 0.3 is medium, above 0.5 high) read such numbers without a "
            "baseline; no decision on a 1 % leak is possible without real rows held out from "
            "training.")


def same_test(names: Iterable[str]) -> str:
    """The note on a row of the test table that stands for several metrics."""
    return ("the same statistic on the same records (the verdict counts it once): "
            + ", ".join(names))


def contained_test(host: str) -> str:
    """The note on a test whose attack another test runs and tests jointly (the card's
    ``contained_in``): its own numbers, the host's level.

    Examples
    --------
    >>> contained_test("membership_attacks")
    "its attack is one of membership_attacks's, tested there jointly: its level and adjusted p-value are that test's (the verdict counts it once)"
    """
    return (f"its attack is one of {host}'s, tested there jointly: its level and adjusted p-value "
            "are that test's (the verdict counts it once)")


def contained_mark(host: str) -> str:
    """The short form of :func:`contained_test` for a table cell (``host`` as the renderer marks
    code).

    Examples
    --------
    >>> contained_mark("membership_attacks")
    "one of membership_attacks's attacks"
    """
    return f"one of {host}'s attacks"


def records_caption(n: int, n_drop: int, shown: int, context: int = 0) -> str:
    """The caption of a report's excerpt of the records export (``context``: of the ``n``, the
    records of tests that found nothing beyond chance, not findings).

    Examples
    --------
    >>> records_caption(30, 12, 10)
    '30 record(s) in the records export (12 to drop, 18 to review); the first 10 of each here, all of them (and every verbatim copy) with --records-out or report.records()'
    >>> records_caption(30, 12, 10, 8)[:91]
    '30 record(s) in the records export (12 to drop, 10 to review, 8 context: not findings); the'
    """
    more = f", {context} context: not findings" if context else ""
    return (f"{n} record(s) in the records export ({n_drop} to drop, {n - n_drop - context} to "
            f"review{more}); the first {shown} of each here, all of them (and every verbatim copy) "
            "with --records-out or report.records()")


def informative_line(names: Sequence[str]) -> str | None:
    """Privacy metrics that ran but compare no training records with a control."""
    if not names:
        return None
    return ("Informative only (no test against the control; they do not decide a level): "
            + ", ".join(names) + ".")


def decision_proposal(level: str) -> tuple[str, str]:
    """The decision the verdict supports and why: ``(outcome, reason)``; the signatory decides.

    Examples
    --------
    >>> decision_proposal("high")[0]
    'reject'
    """
    if level == "low":
        return "approve", "every assessed risk rules out the materiality"
    if level == "medium":
        return ("approve with conditions",
                "a risk exceeds chance below the materiality: take the actions first")
    if level == "inconclusive":
        return ("approve with conditions",
                "a material leak is not ruled out: only a restricted release model, or a larger "
                "evaluation that settles the undecided risks")
    return "reject", "a risk reads high: the release exposes its training records"


def dossier_reading(row: Any, materiality: float) -> str:
    """A risk's result in the dossier's results table: what it found, or the bound it reaches.

    Examples
    --------
    >>> dossier_reading({"level": "inconclusive", "bound": 0.021}, 0.01)
    'rules out 2.1 %, not 1.0 %'
    >>> dossier_reading({"level": "high", "effect": 0.03, "effect_ci": (0.012, 0.049),
    ...                  "partial": {"family": "near2", "metric": "near_copies_2", "visible": 0.55,
    ...                              "consistent": 0.089}}, 0.05).split("; ")[1]
    'a leak of up to 8.9 % fits it (near_copies_2 flags 55.0 % of copies with two cells changed)'
    """
    level = row["level"]
    if level == "not assessed":
        return "not assessed by this run"
    if level in ("high", "medium"):
        found = f"found: excess {pct(row.get('effect'))} ({interval(row.get('effect_ci'))})"
        part = row.get("partial")
        if part:
            found += (f"; a leak of up to {pct(part['consistent'])} fits it ({part['metric']} "
                      f"flags {pct(part['visible'])} of {FAMILY_NAMES[part['family']]})")
        return found
    bound = row.get("bound")
    if bound is None or (row.get("unassessed") and level != "low"):
        return (f"rules out nothing below {pct(materiality)}"
                + (f" ({_families_unassessed(row)})" if row.get("unassessed") else ""))
    if level == "low":
        return f"rules out {pct(bound)} (below {pct(materiality)})"
    return f"rules out {pct(bound)}, not {pct(materiality)}"


def materiality(value: float, unit: str = "records") -> str:
    """The acceptance threshold in one sentence.

    Examples
    --------
    >>> materiality(0.01)
    'Materiality: a risk reads low (acceptable) only when an excess of 1.0 % of the training records is ruled out for every leak type it answers for.'
    """
    return (f"Materiality: a risk reads low (acceptable) only when an excess of {pct(value)} of the "
            f"training {unit} is ruled out for every leak type it answers for.")


def threshold_justification(text: str | None, materiality: float) -> str:
    """The acceptance threshold's justification: the controller's, or a visible blank."""
    if text:
        return text
    return (f"not recorded (the materiality of {pct(materiality)} is synthguard's default; write "
            "the reason for the threshold under 'threshold_justification' in the context file)")


def intruder(risks: Sequence[Any], tests: Sequence[Any] = ()) -> str:
    """What a motivated intruder (competent, holding the release and public information, with no
    insider access) could do, read from the levels: for each alarming criterion, the finding that
    drives it, named with its excess; a criterion driven by a test already cited for an earlier
    one (copies vote for every criterion they expose) says so ("the same copies as above") and
    cites its own strongest alarming test (``tests``: the verdict's, ``risk`` their own
    criterion), so no criterion repeats another's number as its own.

    Examples
    --------
    >>> risks = [{"risk": "presence", "level": "high", "metric": "near_copies", "effect": 0.448},
    ...          {"risk": "inference", "level": "high", "metric": "near_copies", "effect": 0.448}]
    >>> tests = [{"metric": "near_copies", "risk": "presence", "level": "high", "effect": 0.448},
    ...          {"metric": "inference", "risk": "inference", "level": "high", "effect": 0.203}]
    >>> print(intruder(risks, tests))
    A motivated intruder holding the release and a target's public details could tell that a person was in the training data by finding their record in the release (near_copies: 44.8 % of the training records beyond chance); guess a person's hidden attribute from the release (the same copies as above, near_copies; inference on its own: 20.3 % of the training records beyond chance).
    """
    bad = [r for r in risks if r["level"] in ("high", "medium")]
    if not bad:
        undecided = [r["title"].lower() for r in risks
                     if r["level"] in ("inconclusive", "not assessed")]
        text = ("A motivated intruder holding the release and a target's public details would do "
                "no better on the training records than on people never used to train the "
                "generator, for every risk this run decided.")
        if undecided:
            text += " Not decided by this run: " + ", ".join(undecided) + "."
        return text
    can = {"presence": "tell that a person was in the training data by finding their record in "
                       "the release",
           "singling_out": "isolate one person's record with a simple condition on its values",
           "linkability": "link a person's records across two sources through the release",
           "inference": "guess a person's hidden attribute from the release"}
    of = {str(t.get("metric")): t for t in tests}
    cited: set[str] = set()
    clauses = []
    for r in bad:
        driver = str(r.get("metric") or "")
        own_risk = (of.get(driver) or {}).get("risk", r["risk"])
        found = f"{pct(r.get('effect'))} of the training records beyond chance"
        if driver and driver in cited and own_risk != r["risk"]:
            kind = "copies" if own_risk == "presence" else "finding"
            own = [t for t in tests if t.get("risk") == r["risk"]
                   and t.get("level") in ("high", "medium") and not t.get("same_as")
                   and not t.get("contained_in") and t.get("effect") is not None]
            best = max(own, key=lambda t: (float(t["effect"]), str(t["metric"])), default=None)
            why = f"the same {kind} as above, {driver}"
            if best is not None:
                why += (f"; {best['metric']} on its own: {pct(best['effect'])} of the training "
                        "records beyond chance")
        else:
            why = f"{driver}: {found}" if driver else found
        cited.add(driver)
        clauses.append(f"{can.get(r['risk'], r['risk'])} ({why})")
    return ("A motivated intruder holding the release and a target's public details could "
            + "; ".join(clauses) + ".")


def residual(risks: Sequence[Any], facts: Facts, materiality: float) -> list[str]:
    """The residual risk, one sentence per point: what remains of the risks (grouped by what
    remains, so no sentence repeats), the rows marked for review, and what no test covers."""
    out = []
    for r in risks:
        if r["level"] == "low":
            out.append(f"{r['title']}: an excess below {pct(r.get('bound'))} of the training "
                       "records, the bound this run reaches, is not excluded.")
    groups = (("inconclusive", f"a leak of {pct(materiality)} of the training records is not "
                               "ruled out by this run"),
              ("not assessed", "not assessed by this run"),
              ("alarm", "the findings stand until the actions are taken and the release is "
                        "evaluated again"))
    for key, text in groups:
        titles = [r["title"] for r in risks
                  if (r["level"] in ("high", "medium") if key == "alarm" else r["level"] == key)]
        if titles:
            out.append(f"{_join(titles)}: {text}.")
    if facts.review_all:
        out.append(f"The records export marks {facts.review_all} record(s) 'review': rows a test "
                   "lists (near matches, rows unique in the release, training records it "
                   "exposes); read them before the release.")
    line = export_line(facts.listed, any(r["level"] in ("high", "medium") for r in risks))
    if line and facts.listed is not None and (not facts.listed[0] or facts.listed[2]):
        out.append(line)  # the rows apart from the findings, or that there are none
    out.append("Outside these tests: attackers with knowledge beyond the threat model above, and "
               "linkage with data sets that are not part of this assessment.")
    return out


def export_line(listed: tuple[int, int, int] | None, alarm: bool = False) -> str | None:
    """What the records export holds, in one sentence (the console's line after ``--records-out``,
    the dossier's residual risk): the records behind the high and medium findings, then apart,
    action ``context``, the records tests that found nothing beyond chance list themselves (not
    findings, never counted as leaked rows). ``listed``: ``(records behind findings, of them to
    drop, context records)`` (:class:`Facts`); ``None``: a report without a verdict's tests, whose
    export holds every metric's records (no sentence). ``alarm``: some risk reads high or medium
    (an export without a row behind a finding then says its tests name no row).

    Examples
    --------
    >>> export_line((0, 0, 0))
    'The records export lists no row behind a finding: no test reads high or medium.'
    >>> export_line((12, 5, 283))
    "The records export lists 12 record(s) behind the high and medium findings (5 to drop, 7 to review); its 283 record(s) marked 'context' are those tests that found nothing beyond chance list themselves: not findings (no excess over chance, which does not show that none copies a person), not counted among the rows to drop or review."
    """
    if listed is None:
        return None
    n, n_drop, context = (int(x) for x in listed)
    none = ("the tests that read high or medium name no row" if alarm else
            "no test reads high or medium")
    head = (f"The records export lists no row behind a finding: {none}" if not n else
            f"The records export lists {n:,} record(s) behind the high and medium findings "
            f"({n_drop:,} to drop, {n - n_drop:,} to review)")
    if context:
        head += (f"; its {context:,} record(s) marked 'context' are those tests that found nothing "
                 "beyond chance list themselves: not findings (no excess over chance, which does "
                 "not show that none copies a person), not counted among the rows to drop or "
                 "review")
    return head + "."


def context_reason(reason: str, metric: str, level: str) -> str:
    """The reason of a record the export lists apart from the findings (action ``context``): one a
    test that found nothing beyond chance lists itself.

    Examples
    --------
    >>> context_reason("distance 0", "exact_matches", "inconclusive")
    'not a finding (exact_matches reads inconclusive): distance 0'
    """
    return f"not a finding ({metric} reads {level}): {reason}"


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1][:1].lower() + items[-1][1:]


def sample_line(sample: Mapping[str, Any]) -> str:
    """The verdict's sentence on a sampled run (``max_records``): the sample, that the bounds are
    the sample's, and the exact (and, when the run tests them, one-cell) copies the full-table
    joins found.

    Examples
    --------
    >>> print(sample_line({"original": {"rows": 300, "of": 800}, "control": {"rows": 300, "of": 600},
    ...                    "seed": 0, "max_records": 300,
    ...                    "exact_copies": {"release_rows": 4, "outside_sample": 3}}))
    the tests ran on a seeded uniform sample of 300 of 800 training and 300 of 600 control records (max_records 300, seed 0), against every release row: the intervals, bounds and detection limits are the sample's; a join of the release against every training record found 4 release row(s) that copy one verbatim, 3 of them copying only records outside the sample (every one is in the records export when its test reads high or medium)
    """
    o, c = sample.get("original") or {}, sample.get("control")
    ctl = f" and {c['rows']:,} of {c['of']:,} control" if c else ""
    cp = sample.get("exact_copies") or {}
    near = sample.get("one_cell_copies")
    found = (f"{cp.get('release_rows', 0):,} release row(s) that copy one verbatim, "
             f"{cp.get('outside_sample', 0):,} of them copying only records outside the sample")
    if near is not None:
        found = (f"{found}, and {near['release_rows']:,} that copy one with 1 cell changed and "
                 f"identify it (the only real record within 1 cell), {near['outside_sample']:,} "
                 f"of them records outside the sample")
    rq = sample.get("release_queries")
    shares = (f"; the tests whose queries are release rows ({', '.join(rq['tests'])}) asked of a "
              f"seeded sample of {rq['rows']:,} of the {rq['of']:,} release rows, so their shares "
              f"of release rows are the sample's" if rq else "")
    return (f"the tests ran on a seeded uniform sample of {o['rows']:,} of {o['of']:,} training"
            f"{ctl} records (max_records {sample['max_records']:,}, seed {sample.get('seed')}), "
            f"against every release row: the intervals, bounds and detection limits are the "
            f"sample's{shares}; a join of the release against every training record found {found} "
            f"(every one is in the records export when its test reads high or medium)")


def verdict_line(level: str) -> str:
    """The dossier's first line: the verdict and the decision it supports.

    Examples
    --------
    >>> verdict_line("high")
    'Verdict: HIGH; the assessment supports reject (a risk reads high: the release exposes its training records).'
    """
    outcome, why = decision_proposal(level)
    return f"Verdict: {str(level).upper()}; the assessment supports {outcome} ({why})."


def utility_paragraph(readings: Sequence[tuple[str, str]]) -> str:
    """Fidelity and utility in one paragraph: each metric's own reading of its headline."""
    if not readings:
        return "No fidelity or utility metric ran."
    return " ".join(f"{name}: {text}." for name, text in readings)


def card_privacy(verdict: Any) -> str:
    """The privacy card's line under the verdict's level: how many tests alarm.

    Examples
    --------
    >>> from synthguard.run.verdict import RiskRule, Verdict
    >>> card_privacy(Verdict("low", RiskRule(), "s"))
    'no privacy test compared training records with a control'
    """
    tests = list(verdict.tests)
    if not tests:
        return "no privacy test compared training records with a control"
    alarm = sum(1 for t in tests if t["level"] in ("high", "medium"))
    return f"{alarm} of {len(tests)} tests find training records exposed beyond chance"


def card_pick(heads: Sequence[tuple[str, Any]]) -> tuple[str, Any, list[tuple[str, Any]]]:
    """Which score a fidelity or utility card shows: ``(name, headline, others)``, the lowest
    share of its ceiling among the family's scores that have one (the card reads as the family's
    weakest measured point, never as whichever metric ran first), else the first score; ``others``
    are the rest with a share, named beside it.

    Examples
    --------
    >>> from synthguard.core.results import Headline
    >>> heads = [("quality_report", Headline(0.96, 0.97, "quality score", "r", "")),
    ...          ("accuracy", Headline(0.80, 0.90, "accuracy", "r", ""))]
    >>> name, head, others = card_pick(heads)
    >>> name, [n for n, _ in others]
    ('accuracy', ['quality_report'])
    """
    shared = sorted(((n, h) for n, h in heads if h.share is not None), key=lambda nh: (nh[1].share, nh[0]))
    if shared:
        return shared[0][0], shared[0][1], shared[1:]
    return heads[0][0], heads[0][1], []


def card_headline(name: str, head: Any, others: Sequence[tuple[str, Any]] = ()) -> tuple[str, str]:
    """A fidelity or utility card: ``(number, what it means)``, the number a share of what real
    data reaches when a ceiling was measured, else the score itself; ``others`` (the family's
    other scores with a ceiling, :func:`card_pick`) are named with their shares.

    Examples
    --------
    >>> from synthguard.core.results import Headline
    >>> card_headline("accuracy", Headline(0.835, 0.894, "accuracy", "real held-out rows", "r"))
    ('93.4 %', 'of what real held-out rows reach (accuracy 0.835 against 0.894; higher is better)')
    >>> card_headline("accuracy", Headline(0.835, 0.894, "accuracy", "real held-out rows", "r"),
    ...               [("quality_report", Headline(0.96, 0.97, "quality score", "real held-out rows", "r"))])[1]
    'of what real held-out rows reach (accuracy 0.835 against 0.894; higher is better); the lowest of 2 scores: quality_report 99.0 %'
    """
    what = head.measure if head.measure == name else f"{name}, {head.measure}"
    if head.share is not None:
        above = ("; more than half the way from its ceiling to a verbatim copy's 1.0: closer to "
                 "the training rows than fresh real data is" if head.above_ceiling else "")
        rest = (f"; the lowest of {len(others) + 1} scores: "
                + ", ".join(f"{n} {pct(h.share)}" for n, h in others)) if others else ""
        return (pct(head.share), f"of what {head.reference} reach ({what} "
                                 f"{fmt_number(head.value, 3)} against {fmt_number(head.ceiling, 3)}; "
                                 f"{head.direction}{above}){rest}")
    return fmt_number(head.value, 3), f"{what}; no ceiling measured ({head.direction})"


# =================================================================================================
# The records export's reasons (run/drops.py, report/records.py).
# =================================================================================================


def flagged_reason(metric: str, statistic: str) -> str:
    """The reason of a training record an alarming test flags without naming the release rows
    behind it (:func:`synthguard.run.drops.flagged_records`).

    Examples
    --------
    >>> flagged_reason("new_row_synthesis", "share of records a release row matches")
    'flagged by new_row_synthesis (share of records a release row matches); the test does not name the release rows behind it'
    """
    return (f"flagged by {metric} ({statistic}); the test does not name the release rows behind "
            "it")


def unlisted_reason(reason: str, shown: int) -> str:
    """The reason of one of the records an alarming test lists itself when it neither names the
    release rows behind its finding nor flags records one by one (a test of the release as a
    whole, such as an AUC): its own reason, marked as one of the ``shown`` records it lists.

    Examples
    --------
    >>> unlisted_reason("distance 0", 10)
    'distance 0 (one of the 10 records the test lists itself as examples: it reads the release as a whole, so no list of rows accounts for its finding)'
    """
    return (f"{reason} (one of the {shown} records the test lists itself as examples: it reads the "
            "release as a whole, so no list of rows accounts for its finding)")


def joined_copy_reason(cells: int, tests: str, outside: bool) -> str:
    """The reason of a copy a sampled run's full-table join found (:func:`synthguard.run.sample.
    copy_records`): the unsampled export's words (:func:`copy_reason`), then how it was found and
    whether its training row is among the sampled records the tests ran on.

    Examples
    --------
    >>> joined_copy_reason(1, "near_copies", False)
    'copy of its training row with 1 cell changed (near_copies); found by the join of the release against every training record: its training row is among the sampled records'
    """
    where = ("its training row is not among the sampled records the tests ran on" if outside
             else "its training row is among the sampled records")
    return (f"{copy_reason(cells, (), (), tests, '')}; found by the join of the release against "
            f"every training record: {where}")


def copy_reason(cells: int, differing: Sequence[str], ignored: Sequence[str], tests: str,
                tie: str) -> str:
    """The reason of a release row the run ties to a training row (:func:`synthguard.run.drops.
    export_rows`): what differs between them, in the compared cells and in the columns every test
    ignores (id-like columns), then the tests tying it.

    ``cells`` compared cells differ (``differing`` names them, when known); ``ignored``: the
    ignored columns whose values differ (a row id); ``tie``: the strongest test's words, for a row
    more than two cells away.

    Examples
    --------
    >>> copy_reason(0, (), (), "exact_matches", "")
    'verbatim copy of its training row (exact_matches)'
    >>> copy_reason(0, (), ("id",), "exact_matches", "")
    "verbatim copy of its training row on every compared column; only 'id', a column no test compares (an identifier), differs (exact_matches)"
    >>> copy_reason(1, ("age",), (), "near_copies", "")
    "copy of its training row with 1 cell changed ('age') (near_copies)"
    """
    if cells > 2:
        what = f"{tie} of its training row"
    elif cells == 0:
        what = "verbatim copy of its training row"
    else:
        named = f" ({', '.join(repr(c) for c in differing)})" if differing else ""
        what = f"copy of its training row with {cells} cell{'' if cells == 1 else 's'} changed{named}"
    if ignored and cells <= 2:  # a copy: the id columns no test compares may still differ
        cols = ", ".join(repr(c) for c in ignored)
        one = len(ignored) == 1
        what += (f"{' on every compared column' if cells == 0 else ''}; only {cols}, "
                 f"{'a column' if one else 'columns'} no test compares "
                 f"({'an identifier' if one else 'identifiers'}), "
                 f"{'differs' if one else 'differ'}" if cells == 0 else
                 f"; {cols}, {'a column' if one else 'columns'} no test compares, "
                 f"{'differs' if one else 'differ'} too")
    return f"{what} ({tests})"
