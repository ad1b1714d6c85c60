"""The membership-attack ensemble (``membership_attacks``, issue #21) on the calibration suite's
releases (:mod:`synthguard.calibration`): five public tables, fresh samples (the null) and three
realistic leaks: near-copies (one cell changed) as 10 % of the release, an overfit Gaussian
mixture with n/20 components, a kernel density with a wide bandwidth (1 x the column sd).

"Reads high" = the ensemble's max-T p-value < 0.05 (its evidence then alarms in the verdict).
Standard split 0.4 / 0.3 / 0.3, 3 seeds per table (15 runs per release kind). The full table
(5 seeds) is ``benchmarks/bench_membership.py --calibration``; figures in docs/attacks.md.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from synthguard.calibration import build_release
from synthguard.metrics.membership import ATTACKS
from synthguard.metrics.membership.ensemble import membership_attacks
from synthguard.registry import Context

from ..helpers import run
from . import _suite as S

pytestmark = pytest.mark.slow

SEEDS = (0, 1, 2)
KINDS = {"near10": ("near", {"share": 0.1, "of": "release"}),
         "mixture20": ("mixture", {"per_component": 20}),
         "kde1": ("kde", {"bandwidth": 1.0})}
#: all-numeric small tables on which a KDE of 1 column sd nearly hides the sources: only 62-72 % of
#: the release rows have a training record as their nearest real record, against 57 % by chance
#: (nhefs, hhs_breaches: 98-100 %; acs12: 81 %), measured by
#: test_a_wide_kde_points_back_to_its_sources_least_on_the_all_numeric_tables. With a reference
#: split from the control the ensemble read high there in 4 of 10 runs (5 seeds); with the pooled
#: reference (every other real record, leave-one-out) in 9 of 10.
KDE_HARD = ("anes96", "diabetes_raw")


@pytest.fixture(scope="module", autouse=True)
def _shared(shared_data):
    S.SHARED = shared_data


@cache
def _ctx(name: str, seed: int, kind: str) -> tuple[Context, np.ndarray | None]:
    p = S.parts(name, "standard", seed)
    if kind == "fresh":
        rel, leaked = p["fresh"], None
    else:
        builder, kw = KINDS[kind]
        kw = dict(kw)
        share = kw.pop("share", None)
        leak = build_release(builder, p, seed, share=share, **kw)
        rel, leaked = leak.release, leak.leaked
    return Context.from_frames(p["original"], rel, p["control"], seed=seed), leaked


@cache
def _run(name: str, seed: int, kind: str) -> dict:
    res = run(membership_attacks, ctx=_ctx(name, seed, kind)[0], n_perm=199)
    return {"p": res.details["ensemble"]["p_value"], "eps": res.details["epsilon"],
            "z": {a: res.details["attacks"][a]["z"] for a in ATTACKS}}


def test_fresh_samples_alarm_at_most_about_one_run_in_15_and_every_attack_is_centred():
    runs = [(d, s, _run(d, s, "fresh")) for d in S.DATASETS for s in SEEDS]
    alarms = [(d, s, round(r["p"], 3)) for d, s, r in runs if r["p"] < 0.05]
    assert len(alarms) <= 2, alarms  # expected 0.75 of 15; 2 allows the sampling error
    for a in ATTACKS:  # each attack's standardised AUC under the null: mean 0 (sd 1 / sqrt 15)
        z = [r["z"][a] for *_, r in runs]
        assert abs(np.mean(z)) * np.sqrt(len(z)) < 3.0, (a, np.round(z, 2))
    for d, s, r in runs:  # the DP bound of a fresh sample: its interval includes 0
        assert r["eps"]["interval"][0] <= 0.0 <= r["eps"]["interval"][1], (d, s, r["eps"])


@pytest.mark.parametrize("kind", ["near10", "mixture20"])
def test_realistic_leaks_read_high_in_80_percent_of_runs_on_five_tables(kind):
    runs = [(d, s, round(_run(d, s, kind)["p"], 3)) for d in S.DATASETS for s in SEEDS]
    highs = sum(p < 0.05 for *_, p in runs)
    assert highs >= 12, runs  # >= 80 % of 15


def test_a_wide_kde_reads_high_in_80_percent_of_runs_on_five_tables():
    runs = [(d, s, round(_run(d, s, "kde1")["p"], 3)) for d in S.DATASETS for s in SEEDS]
    assert sum(p < 0.05 for *_, p in runs) >= 12, runs  # >= 80 % of 15
    hard = [p for d, _, p in runs if d in KDE_HARD]  # where the sources nearly hide
    assert sum(p < 0.05 for p in hard) >= 4, runs


def _nearest_real_is_training(name: str, seed: int) -> float:
    from synthguard.data.encoding import Block
    from synthguard.engine.neighbors import gower, kneighbors

    ctx = _ctx(name, seed, "kde1")[0]
    cols = ctx.tables.schema.tabular_columns()
    o, c, syn = (ctx.encoded.block(r, cols) for r in ("original", "control", "synthetic"))
    metric = gower(ctx.encoded.ranges(cols, roles=("original", "synthetic", "control")), clip=True)
    nn = kneighbors(syn, Block.stack([o, c]), metric, 1).indices[:, 0]
    return float(np.mean(nn < o.n_rows)) - o.n_rows / (o.n_rows + c.n_rows)  # above chance


def test_a_wide_kde_points_back_to_its_sources_least_on_the_all_numeric_tables():
    """Why anes96 and diabetes_raw are the hard KDE tables: there a release row's nearest real
    record is a training record barely more often than chance (all 11 columns numeric, each moved
    by 1 sd), while on the other tables almost always."""
    for d in S.DATASETS:
        excess = _nearest_real_is_training(d, 0)
        if d in KDE_HARD:
            assert excess < 0.2, (d, excess)
        else:
            assert excess > 0.2, (d, excess)
