"""The trio names the release rows behind its findings (issue #30 point 1): the row whose nearest
neighbour carries the guessed secret, the rows both halves of a linked record meet, the rows whose
values make a query that singles a record out; every copy of such a row too; to review, not drop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthguard
from synthguard.data.hashing import row_hashes

from ....helpers import context, run
from .test_inference_evidence import leaky

TRIO = ["inference", "linkability", "singling_out_univariate", "singling_out_multivariate"]


@pytest.fixture(scope="module")
def tables():
    ori, syn, ctl = leaky(300, 0, 0.3)
    syn = pd.concat([syn, syn.iloc[:20]], ignore_index=True)  # duplicated release rows
    return ori, syn, ctl


def _pairs(name, tables, **params):
    ctx = context(*tables, metric=name)
    flags = run(name, ctx=ctx, **params).evidence.flags
    flagged = np.concatenate([flags.member, flags.non_member])
    assert flags.pairs is not None and flags.pairs.action == "review", name
    got = flags.pairs.pairs_of(np.ones(flagged.size, dtype=bool))
    return ctx, flagged, got


@pytest.mark.parametrize("name", TRIO)
def test_every_flagged_record_has_its_release_rows_and_only_flagged_records_do(tables, name):
    params = {"secret": "sex"} if name == "inference" else {}
    _, flagged, got = _pairs(name, tables, **params)
    assert flagged.sum() >= 3, name
    assert set(got[:, 0].tolist()) == set(np.flatnonzero(flagged).tolist()), name


@pytest.mark.parametrize("name", TRIO)
def test_identical_release_rows_are_named_together(tables, name):
    params = {"secret": "sex"} if name == "inference" else {}
    ctx, _, got = _pairs(name, tables, **params)
    h = row_hashes(ctx.tables.synthetic)
    rows_of = pd.Series(np.arange(h.size)).groupby(h).apply(frozenset)
    for rec in np.unique(got[:, 0])[:50]:
        named = set(got[got[:, 0] == rec, 1].tolist())
        for r in named:  # every copy of a named row is named with it
            assert rows_of[h[r]] <= named, (name, rec, r)


def test_inference_names_rows_that_carry_the_secret_it_guessed(tables):
    ctx, _, got = _pairs("inference", tables, secret="sex")
    real = pd.concat([ctx.tables.original, ctx.tables.control], ignore_index=True)
    rel = ctx.tables.synthetic
    assert (rel["sex"].to_numpy()[got[:, 1]] == real["sex"].to_numpy()[got[:, 0]]).all()


def test_the_records_export_lists_the_attacks_rows_for_review(tables):
    ori, syn, ctl = tables
    rep = synthguard.evaluate(ori, syn, control=ctl, metrics=["inference"], seed=0,
                              metadata={"sensitive": ["sex"]}, retest_columns=0, retest_rows=0)
    assert rep.verdict.to_dict()["level"] in ("high", "medium")  # 30 % copies: the attack alarms
    recs = rep.records()
    mine = recs[recs["metric"] == "inference"]
    assert len(mine) > 0 and set(mine["action"]) == {"review"}
