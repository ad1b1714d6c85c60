"""How much of a neighbour leak family a label-free closeness score sees against its chance tail.

For one shared table, split and seed (the calibration suite's fresh release, ``materiality=0.05``),
every pooled real record (training and control) gets a score from the release; a tail test flags
the ``T`` records with the smallest scores. For each leak family (the run's own leak rows, built
from its training records, :mod:`synthguard.metrics._leakrows`), ``v`` is the share of leak rows
that would newly flag their own record (or, for interpolations, their partner) at the tail's cut;
``10 v / sqrt(T)`` is proportional to the tail test's z at a given leak (its chance count has a
standard deviation of about ``sqrt(T)``), so the larger, the smaller the leak the test can show.

Scores compared (docs/calibration.md, "Three more statistics for acs12's neighbour families"):

- ``ratio k=K``: distance to the nearest release row over the distance to the K-th nearest other
  real record (``close_neighbours`` is ``k=1``);
- ``... aside``: the same with records that a release row equals (distance 0) set aside (they are
  ``exact_matches``' flags), and leak rows at distance 0 not counted;
- ``detour``: the least ``(d(j, r) + d(r, q)) / d(j, q) - 1`` over release rows ``r``, ``q`` the
  record's nearest other real record: 0 for a release row between the two (interpolations).

Distances are ``close_neighbours``' (Gower, ranges of training and control, clipped, normalised),
computed as full matrices: for the shared tables only (a few thousand records).

Usage::

    SYNTHGUARD_SHARED_DATA=../shared/data PYTHONPATH=src \\
        python benchmarks/closeness_statistics.py acs12 equal 0
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration import META, load  # noqa: E402
from synthguard.calibration import build_release, equal_split, sized_split  # noqa: E402
from synthguard.engine.neighbors.engine import pairwise_distances  # noqa: E402
from synthguard.metrics._leakrows import leak_block, leak_sets  # noqa: E402
from synthguard.metrics.privacy._labelfree import labelfree_setup  # noqa: E402
from synthguard.metrics.privacy.near_copies import close_neighbours  # noqa: E402
from synthguard.registry import Context  # noqa: E402

FAMILIES = ("noise5", "noise10", "interpolation")
TAILS = (20, 40, 60, 100, 150)
K = 5


def _context(name: str, split: str, seed: int) -> Context:
    from synthguard.calibration import calibration_split

    frame = load(name)
    parts = (equal_split(frame, seed) if split == "equal" else sized_split(frame, seed, 800)
             if split == "n800" else calibration_split(frame, seed))
    release = build_release("fresh", parts, seed, metadata=META[name]).release
    ctx = Context.from_frames(parts["original"], release, parts["control"], META[name], seed=seed)
    return dataclasses.replace(ctx, materiality=0.05).for_metric(close_neighbours.spec)


def _print_row(family: str, label: str, chance: np.ndarray, ends: list[np.ndarray],
               leaks: list[np.ndarray]) -> None:
    """One line: per tail, the records at or below its cut and the leak rows that would newly flag
    one of their ends (``leaks[i]``: each leak row's score at record ``ends[i]``)."""
    cells = []
    order = np.sort(chance[np.isfinite(chance)])
    for t in TAILS:
        cut = order[min(t, order.size) - 1]
        n_tail = int((chance <= cut).sum())  # ties at the cut come in
        seen = np.zeros(leaks[0].size, dtype=bool)
        for end, score in zip(ends, leaks, strict=True):
            seen |= (score <= cut) & (chance[end] > cut)
        v = float(seen.mean())
        cells.append(f"T{t}({n_tail}) {v:4.2f}/{10 * v / np.sqrt(n_tail):4.2f}")
    print(f"  {family:13} {label:16}", " ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("table")
    ap.add_argument("split", choices=("standard", "equal", "n800"))
    ap.add_argument("seed", type=int)
    a = ap.parse_args()
    ctx = _context(a.table, a.split, a.seed)
    cols, metric = labelfree_setup(ctx)
    data = ctx.data
    real = [data.encoded_rows(r, cols, np.arange(data.n_rows(r))) for r in ("original", "control")]
    release = data.encoded_rows("synthetic", cols, np.arange(data.n_rows("synthetic")))

    def dist(a_: object, b_: object) -> np.ndarray:
        return pairwise_distances(a_, b_, metric)

    d_rr = np.block([[dist(real[0], real[0]), dist(real[0], real[1])],
                     [dist(real[1], real[0]), dist(real[1], real[1])]])
    np.fill_diagonal(d_rr, np.inf)
    d_k = np.sort(d_rr, axis=1)[:, :K]
    nearest = d_rr.argmin(axis=1)
    d_rs = np.vstack([dist(real[0], release), dist(real[1], release)])
    d_rel = d_rs.min(axis=1)
    n_o = data.n_rows("original")
    with np.errstate(divide="ignore", invalid="ignore"):
        detour = np.where(d_rs > 0, (d_rs + d_rs[nearest]) / d_k[:, :1] - 1, np.inf).min(axis=1)
    detour = np.where((d_k[:, 0] > 0) & (d_rel > 0), detour, np.inf)
    print(f"{a.table} {a.split} seed {a.seed}: {d_rel.size} real records, "
          f"{int((d_k[:, 0] == 0).sum())} with a real duplicate, "
          f"{int((d_rel == 0).sum())} equal to a release row")
    sets = leak_sets(ctx)
    for fam in FAMILIES:
        ls = sets[fam]
        if not ls.available:
            continue
        d_rl = np.vstack([dist(real[0], leak_block(ctx, fam, cols)),
                          dist(real[1], leak_block(ctx, fam, cols))])
        rows = np.arange(ls.sources.size)
        ends = [ls.sources] + ([ls.partners] if ls.partners is not None else [])
        with np.errstate(divide="ignore", invalid="ignore"):
            for k in range(K):
                scale = d_k[:, k]
                for aside in (False, True):
                    ok = (scale > 0) & ((d_rel > 0) | (not aside))
                    chance = np.where(ok, d_rel / np.where(scale > 0, scale, 1), np.inf)
                    leaks = []
                    for end in ends:
                        d = d_rl[end, rows]
                        good = (scale[end] > 0) & ((d > 0) | (not aside))
                        leaks.append(np.where(good, d / np.where(good, scale[end], 1), np.inf))
                    _print_row(fam, f"ratio k={k + 1}{' aside' if aside else ''}", chance, ends,
                               leaks)
            leaks = []
            for end in ends:
                d, near = d_rl[end, rows], d_rl[nearest[end], rows]
                good = (d_k[end, 0] > 0) & (d > 0)
                leaks.append(np.where(good, (d + near) / np.where(good, d_k[end, 0], 1) - 1, np.inf))
            _print_row(fam, "detour", detour, ends, leaks)
    print(f"(training records: {n_o}; a cell: T<tail>(<records at or below its cut>) v / 10 v/sqrt(T))")


if __name__ == "__main__":
    main()
