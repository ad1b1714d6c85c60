"""Issue #30 points 1-2: the drop list names the leaked release rows, and dropping them works.

Releases built from the shared tables (``synthguard.calibration`` splits, leak rows from
``synthguard.data.leaks``): a fresh sample of real people the generator never saw, with some of
its rows replaced by verbatim copies of training rows and by copies with one cell changed. The
ground truth is which release rows are those copies, and which one-cell copies *identify* their
training record (no other training or control record shares its untouched cells).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthguard
from synthguard.calibration import calibration_split
from synthguard.data.leaks import LeakSpec, build_leak_rows
from synthguard.stats import make_rng

#: The presence tests of the verdict (the copies' risk), kept small so each table takes seconds.
PRESENCE = ["exact_matches", "near_copies", "near_copies_2", "close_neighbours", "dcr"]
#: table -> (rows, columns) read (small sizes: seconds per table)
TABLES = {"diabetes_raw": (442, 11), "anes96": (944, 11), "nhefs": (500, 20)}


def _identifies(near: pd.DataFrame, sources: pd.DataFrame, real: pd.DataFrame) -> np.ndarray:
    """Per one-cell copy: is its training record the only real record with its untouched cells?
    (one pass per column; missing equals missing)."""
    a, b = near.reset_index(drop=True), sources.reset_index(drop=True)
    changed = ~(a.eq(b) | (a.isna() & b.isna())).to_numpy()
    assert (changed.sum(axis=1) == 1).all()
    col = changed.argmax(axis=1)
    out = np.zeros(len(a), dtype=bool)
    text = real.astype(str)
    for j, name in enumerate(real.columns):  # loop over columns
        at = np.flatnonzero(col == j)
        if not at.size:
            continue
        rest = [c for c in real.columns if c != name]
        counts = text.groupby(rest, dropna=False).size().rename("n").reset_index()
        hit = b.iloc[at][rest].astype(str).merge(counts, on=rest, how="left")["n"]
        out[at] = hit.to_numpy() == 1
    return out


def _leaky_release(table: str, shared_data) -> dict:
    rows, cols = TABLES[table]
    frame = pd.read_csv(shared_data / f"{table}.csv").iloc[:rows, :cols]
    parts = calibration_split(frame, 0, (0.4, 0.3, 0.3))
    o, c, f = parts["original"], parts["control"], parts["fresh"]
    rng = make_rng(0, "test-drop-retest", table)
    src = rng.permutation(len(o))
    n_exact, n_near = len(o) // 20, len(o) // 10  # 5 % of the training records copied, 10 % near
    pool = pd.concat([o, c], ignore_index=True)
    exact = build_leak_rows("exact", o, src[:n_exact], pool=pool, spec=LeakSpec(), rng=rng)
    near_src = src[n_exact:n_exact + n_near]
    near = build_leak_rows("near1", o, near_src, pool=pool, spec=LeakSpec(), rng=rng)
    base = f.iloc[: len(f) - n_exact - n_near]
    release = pd.concat([base, exact, near], ignore_index=True)
    kind = np.array(["fresh"] * len(base) + ["exact"] * n_exact + ["near"] * n_near, dtype=object)
    ident = np.zeros(len(release), dtype=bool)
    ident[len(base) + n_exact:] = _identifies(near, o.iloc[near_src], pool)
    order = rng.permutation(len(release))
    return {"original": o, "control": c, "release": release.iloc[order].reset_index(drop=True),
            "kind": kind[order], "identifying": ident[order]}


@pytest.fixture(scope="module", params=sorted(TABLES))
def leaky(request, shared_data):
    table = request.param
    data = _leaky_release(table, shared_data)
    rep = synthguard.evaluate(data["original"], data["release"], control=data["control"],
                              metrics=PRESENCE, seed=0, retest_columns=0)
    return table, data, rep


def _dropped(rep) -> np.ndarray:
    recs = rep.records()
    return np.unique(recs.loc[recs["action"] == "drop", "release_row"].astype(int).to_numpy())


def test_drop_list_holds_every_exact_copy_and_the_identifying_one_cell_copies_precisely(leaky):
    table, data, rep = leaky
    kind, ident = data["kind"], data["identifying"]
    drop = np.zeros(len(kind), dtype=bool)
    drop[_dropped(rep)] = True
    assert (kind == "exact").any() and ident.sum() >= 10, table
    assert drop[kind == "exact"].all(), table
    assert drop[ident].mean() >= 0.9, (table, drop[ident].mean())
    precision = (kind[drop] != "fresh").mean()
    assert precision >= 0.95, (table, precision, int(drop.sum()))


def test_presence_is_not_high_after_the_in_run_drop_and_retest(leaky):
    table, _, rep = leaky
    presence = {r["risk"]: r for r in rep.risks()}["presence"]
    assert presence["level"] == "high", table  # the release leaks
    after = presence["drop_retest"]
    assert after["level_after"] != "high", (table, after["text"])
    assert after["rows_dropped"] == len(_dropped(rep))
    assert str(after["rows_dropped"]) in after["text"]


def test_evaluating_the_release_without_the_dropped_rows_reads_the_levels_of_the_in_run_retest(
        leaky):
    table, data, rep = leaky
    keep = np.setdiff1d(np.arange(len(data["release"])), _dropped(rep))
    again = synthguard.evaluate(data["original"], data["release"].iloc[keep], control=data["control"],
                                metrics=PRESENCE, seed=0, retest_columns=0, retest_rows=0)
    in_run = rep.to_dict()["actions"]["drop_retest"]["rounds"][-1]["levels_after"]
    assert {r["risk"]: r["level"] for r in again.risks()} == in_run, table
    presence = {r["risk"]: r for r in rep.risks()}["presence"]["drop_retest"]
    fresh = {r["risk"]: r for r in again.risks()}["presence"]
    assert (presence["level_after"], presence["effect_after"]) == (fresh["level"], fresh["effect"])
