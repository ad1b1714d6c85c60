"""Calibration releases: check on your own real table that risk levels mean what they say.

Split a real table with a seed into *original* (the training rows), *control* (held out) and
*fresh* (also held out). The fresh part used as the release is a perfect generator: same
population, nobody from training; every privacy test should read ``low`` (or ``inconclusive``) on
it, and an alarm on it is a false alarm. Releases with a known leak are built by putting copies of
training rows into it. Counting alarms over seeds gives the false-alarm rate and the power::

    parts = calibration_split(real, seed=0)
    release = leaky_release(parts["fresh"], parts["original"], share=0.05, seed=0)
    report = synthguard.evaluate(parts["original"], release, control=parts["control"])

``benchmarks/calibration.py`` runs the full table on public data; the test suite runs a small
version of it (``tests/calibration``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .errors import ConfigError
from .stats import make_rng

__all__ = ["calibration_split", "leaky_release", "generated_release", "RELEASE_KINDS"]

RELEASE_KINDS = ("fresh", "copies", "perturbed_copies", "marginals", "copula")


def calibration_split(frame: pd.DataFrame, seed: int = 0,
                      fractions: Sequence[float] = (0.4, 0.3, 0.3)) -> dict[str, pd.DataFrame]:
    """Shuffle ``frame`` with ``seed`` and cut it into ``original`` / ``control`` / ``fresh``.

    Parameters
    ----------
    frame : DataFrame
        Real rows, one per person.
    seed : int
        Seed of the shuffle.
    fractions : three floats
        Shares of the rows for original, control and fresh (normalised to sum to 1).

    Returns
    -------
    dict
        ``{"original", "control", "fresh"}`` frames with a fresh 0..n-1 index; ``frame`` is untouched.
    """
    f = np.asarray(fractions, dtype=float)
    if f.shape != (3,) or np.any(f <= 0):
        raise ConfigError(f"fractions must be three positive numbers, got {list(fractions)}")
    f = f / f.sum()
    n = len(frame)
    if n < 6:
        raise ConfigError(f"calibration needs at least 6 rows, got {n}")
    order = make_rng(seed, "calibration-split").permutation(n)
    a = int(round(f[0] * n))
    b = a + int(round(f[1] * n))
    pick = lambda idx: frame.iloc[np.sort(idx)].reset_index(drop=True)  # noqa: E731
    return {"original": pick(order[:a]), "control": pick(order[a:b]), "fresh": pick(order[b:])}


def leaky_release(base: pd.DataFrame, original: pd.DataFrame, share: float, seed: int = 0, *,
                  perturb: bool = False) -> pd.DataFrame:
    """``base`` with ``round(share * len(original))`` of its rows replaced by copies of distinct
    training rows: a release that exposes ``share`` of the training records.

    Parameters
    ----------
    base : DataFrame
        The release to start from (the fresh part, or a generator's output).
    original : DataFrame
        The training rows to copy from.
    share : float
        Share of the *training records* copied (0 <= share <= 1), the unit of the materiality.
    seed : int
        Seed of which rows are copied and replaced.
    perturb : bool
        Change one cell of every copy (a random column, set to that column's value in another
        random base row): near-copies that exact matching cannot see.

    Returns
    -------
    DataFrame
        A new frame with ``len(base)`` rows (more when the copies outnumber ``base``).
    """
    if not 0.0 <= share <= 1.0:
        raise ConfigError(f"share must lie in [0, 1], got {share}")
    k = int(round(share * len(original)))
    rng = make_rng(seed, "calibration-leak", int(perturb))
    copies = original.iloc[np.sort(rng.choice(len(original), k, replace=False))].reset_index(drop=True)
    if perturb and k:
        copies = copies.copy()
        donors = rng.integers(0, len(base), k)
        cols = rng.integers(0, base.shape[1], k)
        for j in np.unique(cols):  # one pass per column, vectorised over the copies
            sel = np.flatnonzero(cols == j)
            col = base.columns[j]
            copies.loc[sel, col] = base[col].to_numpy()[donors[sel]]
    keep = len(base) - k
    if keep < 0:
        rest = base.iloc[:0]
    else:
        rest = base.iloc[np.sort(rng.choice(len(base), keep, replace=False))]
    out = pd.concat([rest, copies], ignore_index=True)
    return out.iloc[rng.permutation(len(out))].reset_index(drop=True)


def generated_release(original: pd.DataFrame, n: int, kind: str = "copula", seed: int = 0) -> pd.DataFrame:
    """A release of ``n`` rows from a built-in generator fitted on ``original``:
    ``"marginals"`` (independent marginals) or ``"copula"`` (Gaussian copula)."""
    from .generators import GaussianCopula, IndependentMarginals

    gens = {"marginals": IndependentMarginals, "copula": GaussianCopula}
    if kind not in gens:
        raise ConfigError(f"kind must be one of {sorted(gens)}, got {kind!r}")
    return gens[kind](seed=seed).fit(original).generate(n)
