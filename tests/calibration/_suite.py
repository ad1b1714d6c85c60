"""Shared set-up of the calibration tests: the public tables, their roles, one cached evaluation per
(table, split, seed, release, metrics), and the consistency record of every report they produce.

Every evaluation goes through :func:`evaluate`, which checks the report's words against its numbers
(:func:`consistency`) and keeps the result in :data:`REPORTS`;
``test_consistency.py::test_every_report_of_the_calibration_suite_states_its_bounds`` runs last
(``conftest.py``) and asserts over all of them.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import synthguard
from synthguard.calibration import (
    FAMILY_KINDS,
    PUBLIC_TABLE_METADATA,
    LeakedRelease,
    build_release,
    calibration_split,
    claim_problems,
    equal_split,
    family_release,
    person_copies,
    person_panel,
    sized_split,
    smote_release,
    text_near_copies,
)
from synthguard.data.entities.calibration import entity_calibration_split
from synthguard.data.loading import CSV_FLOAT_KW
from synthguard.run.config import PRESETS

SHARED: Path | None = None  # set by the tests' fixture (../shared/data)

DROP = {"hhs_breaches": ["Summary", "Number", "Name_of_Covered_Entity"]}
DATASETS = ("acs12", "anes96", "diabetes_raw", "hhs_breaches", "nhefs")
SEEDS = (0, 1, 2)
ALARMS = ("high", "medium")
#: what an intruder knows and what they want (as in benchmarks/disclosure_evidence.py)
META = PUBLIC_TABLE_METADATA
#: the privacy preset, without ``distinguishability``: a fidelity figure that is "not assessed"
#: (it informs, it never enters the verdict) and costs a third of each run here
METRICS = tuple(m for m in PRESETS["privacy"] if m != "distinguishability")
#: the tests that state their responses to the leak families (the run's detection limits are
#: measured with them): copies, near-copies, closeness, quasi-identifier linkage. Each counts under
#: all four risks (presence, and WP216's criteria through the copy tests' cross-listing), so a run
#: of these alone has every risk, every family and its limits, at a fifth of the privacy preset's
#: cost; the benchmark (benchmarks/calibration.py) runs the whole preset.
FAMILY_TESTS = ("exact_matches", "near_copies", "near_copies_2", "close_neighbours", "qi_linkage")
METRIC_SETS = {"privacy": METRICS, "families": FAMILY_TESTS}
SPLITS = {"standard": (0.4, 0.3, 0.3), "equal": (0.4, 0.4, 0.2), "large": (0.45, 0.45, 0.1)}
TEXT_COLUMN = "review"

#: one entry per report the calibration tests produced: ``{"label", "violations", "risks"}``
REPORTS: list[dict[str, Any]] = []


@cache
def load(name: str) -> pd.DataFrame:
    assert SHARED is not None
    # the correctly rounded floats on pandas 2 and 3 (as the tool reads a file): the same tables,
    # so the same verdicts, in both venvs
    return pd.read_csv(SHARED / f"{name}.csv", **CSV_FLOAT_KW).drop(columns=DROP.get(name, []))


@cache
def parts(name: str, split: str, seed: int) -> dict[str, pd.DataFrame]:
    if split == "equal":
        return equal_split(load(name), seed)
    if split == "n800":
        return sized_split(load(name), seed, 800)
    return calibration_split(load(name), seed, SPLITS[split])


# ------------------------------------------------------------------------- words against numbers
#: What in a report says more (or other) than its numbers (the package's check, which
#: ``benchmarks/calibration.py`` runs over every report too).
consistency = claim_problems


def evaluate(label: str, original: pd.DataFrame, release: pd.DataFrame, control: pd.DataFrame,
             **kw: Any) -> Any:
    """:func:`synthguard.evaluate` (no column or row re-test: levels, not advice) with the report's consistency recorded."""
    rep = synthguard.evaluate(original, release, control=control, retest_columns=0, retest_rows=0,
                              **kw)
    REPORTS.append({"label": label, "violations": consistency(rep),
                    "risks": {r["risk"]: r["level"] for r in rep.verdict.to_dict()["risks"]}})
    return rep


def summarise(rep: Any, leak: LeakedRelease | None = None) -> dict:
    v = rep.verdict
    return {"level": v.level, "verdict": v.to_dict(),
            "levels": {m: rep.result(m).risk_level for m in rep.metrics
                       if rep.result(m) is not None},
            "leak_share": None if leak is None else leak.share,
            "n_leaked": None if leak is None else leak.n_leaked,
            "family": None if leak is None else leak.family}


def limit(run: dict, family: str) -> float:
    """The stated detection limit of ``family`` (fails, never skips, when it is absent)."""
    limits = run["verdict"].get("detection_limits")
    assert limits is not None, "the verdict states no detection_limits"
    assert family in limits, (family, sorted(limits))
    value = limits[family]["value"]
    assert value is not None and math.isfinite(value) and value > 0, (family, limits[family])
    return float(value)


def times_limit(run: dict, family: str, factor: float = 1.5) -> float:
    """A leak share of at least ``factor`` x the stated limit of ``family`` in whole records: the
    limit is ``k`` of ``n`` training records (``k / n``), the leak ``ceil(factor * k)`` of them
    (a share rounded to ``factor * k / n`` could round the count down, 4 of 378 for 1.5 x 3)."""
    value = limit(run, family)
    k = int(run["verdict"]["detection_limits"][family]["k"])
    n = int(round(k / value))
    return min(math.ceil(factor * k - 1e-9), n) / n


def risk(run: dict, name: str) -> dict:
    return next(r for r in run["verdict"]["risks"] if r["risk"] == name)


# ------------------------------------------------------------------------------ tabular releases
@cache
def tabular_release(name: str, split: str, seed: int, kind: str, share: float | None = None,
                    extra: tuple = ()) -> LeakedRelease:
    p = parts(name, split, seed)
    kw = dict(extra)
    if kind == "smote" and share is not None:  # a neighbourhood leak into the fresh part
        return smote_release(p["original"], seed=seed, base=p["fresh"], share=share)
    if kind in FAMILY_KINDS:  # the rows a run injects (leak every candidate when too few)
        return family_release(kind, p, share, seed, metadata=META[name], clip=True, **kw)
    return build_release(kind, p, seed, share=share, metadata=META[name], **kw)


def run(name: str, split: str, seed: int, kind: str, share: float | None = None,
        extra: tuple = (), meta: bool = True, metrics: str = "privacy",
        materiality: float | None = None) -> dict:
    """One evaluation of a release of ``name`` (cached, however the arguments are passed);
    ``meta=False``: without the metadata (no roles); ``metrics``: a key of :data:`METRIC_SETS`."""
    return _run(name, split, seed, kind, share, extra, meta, metrics, materiality)


@cache
def _run(name: str, split: str, seed: int, kind: str, share: float | None, extra: tuple,
         meta: bool, metrics: str, materiality: float | None) -> dict:
    p = parts(name, split, seed)
    leak = tabular_release(name, split, seed, kind, share, extra)
    rep = evaluate(f"{name}/{split}/s{seed}/{kind}@{share}/{metrics}/m{materiality}",
                   p["original"], leak.release, p["control"],
                   metadata=META[name] if meta else None, metrics=list(METRIC_SETS[metrics]),
                   seed=seed, materiality=materiality)
    return summarise(rep, leak) | {"dataset": name, "seed": seed, "kind": kind, "share": share,
                                   "n_original": len(p["original"])}


# ------------------------------------------------------------------------------------- persons
PANEL_FROM = "anes96"


@cache
def panel_parts(seed: int):
    panel = person_panel(load(PANEL_FROM), seed=0)
    return entity_calibration_split(panel, "person_id", seed=seed, fractions=(0.4, 0.3, 0.3))


@cache
def person_run(seed: int, share: float | None) -> dict:
    p = panel_parts(seed)
    base = p["fresh"].events
    if share is None:
        leak = LeakedRelease(base, np.zeros(p["original"].events["person_id"].nunique(), bool),
                             None, "fresh")
    else:
        leak = person_copies(base, p["original"].events, share, seed)
    rep = evaluate(f"{PANEL_FROM}-panel/s{seed}/person@{share}", p["original"].events, leak.release,
                   p["control"].events,
                   metadata={"quasi_identifiers": META[PANEL_FROM]["quasi_identifiers"]},
                   metrics=list(FAMILY_TESTS), entity_key="person_id", sequence_key="visit",
                   seed=seed)
    return summarise(rep, leak) | {"dataset": f"{PANEL_FROM}-panel", "seed": seed, "kind": "person",
                                   "share": share}


# ---------------------------------------------------------------------------------------- text
TEXT_SIZES = (800, 800, 400)  # training, control (from the training file), release (test file)
#: the copy tests of documents (the text preset's NLP metrics cost minutes and drive no verdict)
TEXT_METRICS = ("exact_matches", "near_copies", "text_exact_matches")


@cache
def text_parts(seed: int) -> dict[str, pd.DataFrame]:
    assert SHARED is not None
    # the documents alone: an alarm must come from the text, not from product codes copied along
    train = pd.read_csv(SHARED / "fine_foods_reviews_train.csv")[[TEXT_COLUMN]]
    test = pd.read_csv(SHARED / "fine_foods_reviews_test.csv")[[TEXT_COLUMN]]
    a, b, c = TEXT_SIZES
    p = calibration_split(train, seed, (a, b, len(train) - a - b))
    fresh = test.sample(c, random_state=seed).reset_index(drop=True)
    return {"original": p["original"], "control": p["control"], "fresh": fresh}


@cache
def text_run(seed: int, share: float | None) -> dict:
    p = text_parts(seed)
    if share is None:
        leak = LeakedRelease(p["fresh"], np.zeros(len(p["original"]), bool), None, "fresh")
    else:
        leak = text_near_copies(p["fresh"], p["original"], share, seed, column=TEXT_COLUMN)
    rep = evaluate(f"fine_foods_reviews/s{seed}/text@{share}", p["original"], leak.release,
                   p["control"], metadata={"text_columns": [TEXT_COLUMN]},
                   metrics=list(TEXT_METRICS), seed=seed)
    return summarise(rep, leak) | {"dataset": "fine_foods_reviews", "seed": seed, "kind": "text",
                                   "share": share}
