"""Shared set-up of the calibration tests: the public tables, their quasi-identifiers, and one
cached evaluation per (table, split, seed, release), so that tests asking different questions of
the same run pay for it once."""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import synthguard
from synthguard.calibration import (
    PUBLIC_TABLE_METADATA,
    LeakedRelease,
    build_release,
    calibration_split,
    equal_split,
    person_copies,
    person_panel,
    smote_release,
    text_near_copies,
)
from synthguard.data.entities.calibration import entity_calibration_split
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
METRICS = [m for m in PRESETS["privacy"] if m != "distinguishability"]
SPLITS = {"standard": (0.4, 0.3, 0.3), "equal": (0.4, 0.4, 0.2), "large": (0.45, 0.45, 0.1)}
TEXT_COLUMN = "review"


@cache
def load(name: str) -> pd.DataFrame:
    assert SHARED is not None
    return pd.read_csv(SHARED / f"{name}.csv").drop(columns=DROP.get(name, []))


@cache
def parts(name: str, split: str, seed: int) -> dict[str, pd.DataFrame]:
    if split == "equal":
        return equal_split(load(name), seed)
    return calibration_split(load(name), seed, SPLITS[split])


def near_visibility(run: dict) -> float:
    """Share of the training records the near_copies test can see (no other real record within one
    cell: label-free), as the run's evidence states it."""
    return float(run["near_visibility"])


def summarise(rep: Any, leak: LeakedRelease | None = None) -> dict:
    v = rep.verdict
    near = rep.result("near_copies") if "near_copies" in rep.metrics else None
    vis = (near.evidence.visibility or {}).get("near") if near is not None and near.evidence else None
    return {"level": v.level, "verdict": v.to_dict(), "near_visibility": vis,
            "levels": {m: rep.result(m).risk_level for m in rep.metrics
                       if rep.result(m) is not None},
            "leak_share": None if leak is None else leak.share,
            "leak_type": None if leak is None else leak.leak_type}


def limit(run: dict, leak_type: str) -> float:
    """The stated detection limit of ``leak_type`` (fails, never skips, when it is absent)."""
    limits = run["verdict"].get("detection_limits")
    assert limits is not None, "the verdict states no detection_limits"
    assert leak_type in limits, (leak_type, sorted(limits))
    value = limits[leak_type]["value"]
    assert value is not None and math.isfinite(value) and value > 0, (leak_type, limits[leak_type])
    return float(value)


# ------------------------------------------------------------------------------ tabular releases
@cache
def tabular_release(name: str, split: str, seed: int, kind: str, share: float | None = None,
                    extra: tuple = ()) -> LeakedRelease:
    p = parts(name, split, seed)
    kw = dict(extra)
    if kind == "smote" and share is not None:  # a neighbourhood leak into the fresh part
        return smote_release(p["original"], seed=seed, base=p["fresh"], share=share)
    return build_release(kind, p, seed, share=share,
                         quasi_identifiers=META[name]["quasi_identifiers"], **kw)


@cache
def run(name: str, split: str, seed: int, kind: str, share: float | None = None,
        extra: tuple = (), meta: bool = True) -> dict:
    """One privacy evaluation of a release of ``name`` (cached); ``meta=False``: without the
    metadata (no quasi-identifiers: the set-up of ``test_calibration.py``)."""
    p = parts(name, split, seed)
    leak = tabular_release(name, split, seed, kind, share, extra)
    rep = synthguard.evaluate(p["original"], leak.release, control=p["control"],
                              metadata=META[name] if meta else None, metrics=METRICS, seed=seed,
                              retest_columns=0, retest_rows=0)
    return summarise(rep, leak) | {"dataset": name, "seed": seed, "kind": kind, "share": share}


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
    rep = synthguard.evaluate(p["original"].events, leak.release, control=p["control"].events,
                              metadata={"quasi_identifiers": META[PANEL_FROM]["quasi_identifiers"]},
                              metrics=METRICS, entity_key="person_id", sequence_key="visit",
                              seed=seed, retest_columns=0, retest_rows=0)
    return summarise(rep, leak) | {"dataset": f"{PANEL_FROM}-panel", "seed": seed, "kind": "person",
                                   "share": share}


# ---------------------------------------------------------------------------------------- text
TEXT_SIZES = (800, 800, 400)  # training, control (from the training file), release (test file)


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
    rep = synthguard.evaluate(p["original"], leak.release, control=p["control"],
                              metadata={"text_columns": [TEXT_COLUMN]}, metrics=METRICS, seed=seed,
                              retest_columns=0, retest_rows=0)
    return summarise(rep, leak) | {"dataset": "fine_foods_reviews", "seed": seed, "kind": "text",
                                   "share": share}


# ---------------------------------------------------------------------- a near-copy statistic
