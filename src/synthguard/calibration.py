"""Calibration releases: check on your own real table that risk levels mean what they say.

Split a real table with a seed into *original* (the training rows), *control* (held out) and
*fresh* (also held out). The fresh part used as the release is a perfect generator: same
population, nobody from training; every privacy test should read ``low`` (or ``inconclusive``) on
it, and an alarm on it is a false alarm. Releases with a known leak put training information into
it, each returning the release **and the ground truth**: which training records leaked, as which
leak family (a :class:`LeakedRelease`). Counting alarms over seeds gives the false-alarm rate and
the power::

    parts = calibration_split(real, seed=0)
    leak = family_release("noise5", parts, share=0.05, seed=0, metadata=meta)
    report = synthguard.evaluate(parts["original"], leak.release, control=parts["control"],
                                 metadata=meta)
    leak.share      # 0.05: the share of training records the release exposes

**Leak families** (:mod:`synthguard.data.leaks`): :func:`family_release` puts leak rows of any
tabular family (``exact``, ``rare``, ``near1``, ``near2``, ``noise2``, ``noise5``, ``noise10``,
``linkage``, ``interpolation``) into the fresh part, built by the *same* row builders a run uses to
measure its detection limits (:func:`synthguard.data.leaks.build_leak_rows` from the training
records :func:`~synthguard.data.leaks.family_candidates` allows, with every real record as the
donor pool, the column kinds of the run's schema, and for interpolations the nearest other training
record as the run finds it): a calibration leak and an injected leak are the same leak.

Other builders (family in brackets):

- :func:`exact_copies` (``exact``), :func:`near_copies` (``near1`` / ``near2``: donor values from
  the release base), :func:`rare_copies` (``rare``);
- :func:`smote_release`, :func:`mixture_release`, :func:`kde_release`: generator-like releases
  (interpolation between training neighbours, an overfit Gaussian mixture, training rows plus wide
  noise); their leak is no single family (``None``), ``leaked`` marks the training records they draw on;
- :func:`mode_seeking_release`: the null of a generator that over-produces common people,
  built from fresh rows only (nobody leaked);
- :func:`person_panel` / :func:`person_copies` (``person``: whole persons of a panel copied);
- :func:`text_near_copies` (``text``: training documents with one word changed).

:func:`calibration_split` cuts a table 40/30/30; :func:`equal_split` gives original and control
of equal size (0.4/0.4/0.2), where a 1 % leak can be ruled out; :func:`sized_split` gives exact
counts. ``benchmarks/calibration.py`` runs the full table on public data; the test suite runs a
small version of it (``tests/calibration``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .data.leaks import FAMILIES, TABULAR_FAMILIES, LeakSpec, build_leak_rows, family_candidates
from .errors import ConfigError
from .stats import make_rng

__all__ = ["PUBLIC_TABLE_METADATA", "LeakedRelease", "RELEASE_KINDS", "FAMILY_KINDS", "build_release",
           "calibration_split", "claim_problems", "equal_split", "sized_split", "exact_copies", "family_release",
           "mixed_release",
           "generated_release", "kde_release", "leaky_release", "mixture_release",
           "mode_seeking_release", "near_copies", "person_copies", "person_panel", "rare_copies",
           "rare_records", "smote_release", "text_near_copies"]

#: Quasi-identifiers and sensitive columns of the public tables the calibration suite splits
#: (``tests/calibration``, ``benchmarks/calibration.py``): what an intruder is assumed to know and want.
PUBLIC_TABLE_METADATA = {
    "acs12": {"quasi_identifiers": ["age", "gender", "race", "edu", "married"],
              "sensitive": ["employment", "disability"]},
    "anes96": {"quasi_identifiers": ["age", "educ", "income"], "sensitive": ["vote", "PID"]},
    "diabetes_raw": {"quasi_identifiers": ["age", "sex", "bmi"], "sensitive": ["s4"]},
    "hhs_breaches": {"quasi_identifiers": ["State", "Type_of_Breach",
                                           "Location_of_Breached_Information", "year"],
                     "sensitive": ["Individuals_Affected"]},
    "nhefs": {"quasi_identifiers": ["sex", "age", "race", "education", "marital"],
              "sensitive": ["hbp", "diabetes"]},
}

#: The tabular leak families :func:`family_release` builds (:data:`synthguard.data.leaks.FAMILIES`
#: but ``person`` and ``text``, which :func:`person_copies` and :func:`text_near_copies` build).
FAMILY_KINDS: tuple[str, ...] = tuple(TABULAR_FAMILIES)

#: Release kinds of :func:`build_release` and the leak family each one carries (``None``: nobody
#: leaked, or a generator-like release whose leak is no single family). ``near`` is ``near1``
#: (``near2`` with ``n_cells=2``).
RELEASE_KINDS: dict[str, str | None] = {
    "fresh": None, "mode_seeking": None, "exact": "exact", "near": "near1", "rare": "rare",
    **{f: f for f in FAMILY_KINDS},
    "smote": None, "mixture": None, "kde": None, "marginals": None, "copula": None,
}


@dataclass(frozen=True)
class LeakedRelease:
    """A calibration release and its ground truth.

    Attributes
    ----------
    release : DataFrame
        The release to evaluate.
    leaked : ndarray of bool
        One flag per training record (row of ``original``, in its order; per training *person*,
        in sorted id order, for :func:`person_copies`): the release exposes this record.
    family : str or None
        The leak family (one of :data:`synthguard.data.leaks.FAMILIES`); ``None`` for a null
        release or a generator-like release whose leak is no single family.
    kind : str
        The builder's name.
    origin : ndarray of int, optional
        Per release row, the training record (row of ``original``) its leak row was built from,
        ``-1`` for a row that is no leak row; ``None`` when the builder does not track rows
        (generator-like releases, persons).
    """

    release: pd.DataFrame
    leaked: np.ndarray
    family: str | None
    kind: str
    origin: np.ndarray | None = None

    @property
    def share(self) -> float:
        """Share of the training records that leaked (the unit of the materiality)."""
        return float(self.leaked.mean()) if len(self.leaked) else 0.0

    @property
    def n_leaked(self) -> int:
        """Number of training records that leaked."""
        return int(self.leaked.sum())


# ---------------------------------------------------------------------------------------- splits
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

    Examples
    --------
    >>> df = pd.DataFrame({"a": range(10)})
    >>> {k: len(v) for k, v in calibration_split(df, 0).items()}
    {'original': 4, 'control': 3, 'fresh': 3}
    """
    f = np.asarray(fractions, dtype=float)
    if f.shape != (3,) or np.any(f <= 0):
        raise ConfigError(f"fractions must be three positive numbers, got {list(fractions)}")
    f = f / f.sum()
    n = len(frame)
    if n < 6:
        raise ConfigError(f"calibration needs at least 6 rows, got {n}")
    a = int(round(f[0] * n))
    return _cut(frame, seed, a, int(round(f[1] * n)))


def _cut(frame: pd.DataFrame, seed: int, n_original: int, n_control: int) -> dict[str, pd.DataFrame]:
    """The first ``n_original`` rows of the seeded shuffle, the next ``n_control``, the rest."""
    order = make_rng(seed, "calibration-split").permutation(len(frame))
    a, b = n_original, n_original + n_control
    pick = lambda idx: frame.iloc[np.sort(idx)].reset_index(drop=True)  # noqa: E731
    return {"original": pick(order[:a]), "control": pick(order[a:b]), "fresh": pick(order[b:])}


def sized_split(frame: pd.DataFrame, seed: int = 0, n_original: int = 800,
                n_control: int | None = None) -> dict[str, pd.DataFrame]:
    """:func:`calibration_split` by counts: ``n_original`` training rows, ``n_control`` control rows
    (default as many), every other row fresh. The same shuffle as :func:`calibration_split`, so
    ``sized_split(t, s, 800, 800)`` equals ``equal_split(t, s)`` on a 2,000-row table.

    Raises
    ------
    ConfigError
        When the table cannot hold both parts and at least one fresh row.

    Examples
    --------
    >>> df = pd.DataFrame({"a": range(1629)})
    >>> {k: len(v) for k, v in sized_split(df, 0, 800).items()}
    {'original': 800, 'control': 800, 'fresh': 29}
    """
    n_control = n_original if n_control is None else int(n_control)
    if n_original < 1 or n_control < 1 or n_original + n_control >= len(frame):
        raise ConfigError(f"a split of {n_original} training and {n_control} control rows needs "
                          f"more than {n_original + n_control} rows; the table has {len(frame)}")
    return _cut(frame, seed, int(n_original), n_control)


def equal_split(frame: pd.DataFrame, seed: int = 0, fresh: float = 0.2) -> dict[str, pd.DataFrame]:
    """:func:`calibration_split` with original and control of equal size: ``((1 - fresh) / 2,
    (1 - fresh) / 2, fresh)``, the set-up in which safety can be shown (a 1 % leak ruled out).

    Examples
    --------
    >>> df = pd.DataFrame({"a": range(2000)})
    >>> {k: len(v) for k, v in equal_split(df, 0).items()}
    {'original': 800, 'control': 800, 'fresh': 400}
    """
    if not 0.0 < fresh < 1.0:
        raise ConfigError(f"fresh must lie strictly between 0 and 1, got {fresh}")
    half = (1.0 - fresh) / 2.0
    return calibration_split(frame, seed, (half, half, fresh))


# ------------------------------------------------------------------------------------- helpers
def _check_share(share: float) -> None:
    if not 0.0 <= share <= 1.0:
        raise ConfigError(f"share must lie in [0, 1], got {share}")


def _count(share: float, original: pd.DataFrame, base: pd.DataFrame, of: str) -> int:
    _check_share(share)
    if of == "training":
        return int(round(share * len(original)))
    if of == "release":
        return min(int(round(share * len(base))), len(original))
    raise ConfigError(f"of must be 'training' or 'release', got {of!r}")


def _is_numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def _numeric_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if _is_numeric(frame[c])]


def _integer_valued(s: pd.Series) -> bool:
    v = s.dropna().to_numpy(dtype=float)
    return bool(len(v)) and bool(np.all(v == np.round(v)))


def _replace_into(base: pd.DataFrame, rows: pd.DataFrame, rng: np.random.Generator
                  ) -> tuple[pd.DataFrame, np.ndarray]:
    """``base`` with ``len(rows)`` random rows replaced by ``rows``, shuffled; new 0..n-1 index. Also
    returns, per output row, its position in ``rows`` (``-1`` for a row of ``base``)."""
    keep = len(base) - len(rows)
    rest = base.iloc[:0] if keep <= 0 else base.iloc[np.sort(rng.choice(len(base), keep, replace=False))]
    out = pd.concat([rest, rows], ignore_index=True)
    perm = rng.permutation(len(out))
    which = np.r_[np.full(len(rest), -1, dtype=np.int64), np.arange(len(rows), dtype=np.int64)]
    return out.iloc[perm].reset_index(drop=True), which[perm]


def _mask(n: int, idx: np.ndarray) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[np.asarray(idx, dtype=np.int64)] = True
    return m


def _bin_keys(frame: pd.DataFrame, columns: Sequence[str], reference: pd.DataFrame,
              bins: int | None = 5) -> np.ndarray:
    """One integer key per row of ``frame``: its combination of ``columns``, numeric columns cut at
    the quantiles of ``reference`` (label-free when ``reference`` pools original and control);
    ``bins=None``: exact values."""
    codes = {}
    for c in columns:
        s = frame[c]
        if bins is not None and _is_numeric(s) and s.nunique(dropna=True) > bins:
            edges = np.unique(np.nanquantile(reference[c].to_numpy(dtype=float),
                                             np.linspace(0, 1, bins + 1)[1:-1]))
            v = s.to_numpy(dtype=float)
            codes[c] = np.where(np.isnan(v), -1, np.searchsorted(edges, v, side="right"))
        else:
            codes[c] = pd.factorize(s.astype(str).where(s.notna(), "\0nan"), sort=True)[0]
    if not codes:
        return np.zeros(len(frame), dtype=np.int64)
    return pd.DataFrame(codes).groupby(list(codes), sort=True).ngroup().to_numpy()


def rare_records(original: pd.DataFrame, quasi_identifiers: Sequence[str] | None = None, *,
                 reference: pd.DataFrame | None = None, bins: int = 5) -> np.ndarray:
    """Which training records are unique in ``original`` on the quasi-identifiers (their exact
    values; with none given: on every column, numeric columns cut into ``bins`` quantile bins of
    ``original`` pooled with ``reference``).

    Returns
    -------
    ndarray of bool
        One flag per row of ``original``.

    Examples
    --------
    >>> df = pd.DataFrame({"sex": ["f", "f", "m"], "age": [30, 30, 40]})
    >>> rare_records(df, ["sex"]).tolist()
    [False, False, True]
    """
    cols = list(original.columns) if not quasi_identifiers else list(quasi_identifiers)
    missing = [c for c in cols if c not in original.columns]
    if missing:
        raise ConfigError(f"quasi-identifiers not in the table: {missing}")
    pooled = original if reference is None else pd.concat([original[cols], reference[cols]],
                                                          ignore_index=True)
    keys = _bin_keys(original, cols, pooled, None if quasi_identifiers else bins)
    counts = np.bincount(keys)
    return counts[keys] == 1


# --------------------------------------------------------------------------------------- copies
def _leak_rows(original: pd.DataFrame, family: str, k: int, rng: np.random.Generator, *,
               pool: pd.DataFrame, spec: LeakSpec, candidates: np.ndarray | None = None,
               view: Any = None) -> tuple[pd.DataFrame, np.ndarray]:
    """Leak rows of ``family`` from ``k`` distinct training records drawn among ``candidates``
    (every record when ``None``), by the run's row builder
    (:func:`~synthguard.data.leaks.build_leak_rows`; ``pool`` gives the donor values and standard
    deviations; ``view``, a :class:`~synthguard.registry.Context` of the tables, the interpolation
    partners), and their sources (sorted)."""
    cand = np.arange(len(original)) if candidates is None else np.flatnonzero(candidates)
    if k > len(cand):
        raise ConfigError(f"asked for {k} {family} leak rows, only {len(cand)} candidate training "
                          "records (lower share)")
    src = np.sort(rng.choice(cand, k, replace=False))
    partners = None
    if family == "interpolation" and k:
        partners = _nearest_training_records(view, src)
    rows = build_leak_rows(family, original, src, pool=pool, spec=spec, rng=rng, neighbours=partners)
    return _written_like(rows, original), src


def _nearest_training_records(view: Any, sources: np.ndarray) -> np.ndarray:
    """Each source's nearest other training record as the run finds it
    (:func:`synthguard.metrics._leakrows._nearest_training`), in input row positions: the run's
    view holds its rows in a canonical order, so positions are mapped there and back."""
    from .metrics._leakrows import _nearest_training

    order = view.tables.row_numbers.get("original")
    if order is None:
        return _nearest_training(view, sources)
    order = np.asarray(order, dtype=np.int64)
    where = np.empty_like(order)
    where[order] = np.arange(order.size)
    return order[_nearest_training(view, where[np.asarray(sources, dtype=np.int64)])]


def _leak_into(base: pd.DataFrame, original: pd.DataFrame, family: str, k: int,
               rng: np.random.Generator, *, kind: str | None = None, **how: Any) -> LeakedRelease:
    """``base`` with ``k`` of its rows replaced by leak rows of ``family`` (:func:`_leak_rows`)."""
    rows, src = _leak_rows(original, family, k, rng, **how)
    release, which = _replace_into(base, rows, rng)
    return LeakedRelease(release, _mask(len(original), src), family, kind or family,
                         _origin(which, src))


def _origin(which: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """Per release row, the training record its leak row was built from (``-1``: not a leak row)."""
    return np.r_[np.asarray(sources, dtype=np.int64), -1][which]  # -1 picks the appended -1


def _written_like(rows: pd.DataFrame, like: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with every datetime column the builders moved written back as ``like`` writes it
    when ``like`` holds it as text: ISO dates when every value of ``like`` is a date (moved values
    rounded to the nearest day, as :func:`~synthguard.data.leaks.noise_rows` rounds them; the
    interpolation builder does not, so an interpolated date differs from the run's leak row by
    less than half a day), else ISO date-times, so that a release mixes no timestamps into a
    column of date strings."""
    out = rows
    for c in rows.columns:
        if pd.api.types.is_datetime64_any_dtype(rows[c]) and \
                not pd.api.types.is_datetime64_any_dtype(like[c]):
            v = rows[c]
            given = pd.to_datetime(like[c].dropna())
            dates = bool((given == given.dt.normalize()).all())
            if dates:
                v = v.dt.round("D")
            fmt = "%Y-%m-%d" if dates else "%Y-%m-%d %H:%M:%S"
            out = out.copy() if out is rows else out
            out[c] = v.dt.strftime(fmt).astype(object).where(v.notna(), np.nan).astype(like[c].dtype)
    return out


def exact_copies(base: pd.DataFrame, original: pd.DataFrame, share: float, seed: int = 0, *,
                 of: str = "training") -> LeakedRelease:
    """``base`` with rows replaced by exact copies of distinct training rows (family ``exact``).

    Parameters
    ----------
    base : DataFrame
        The release to start from (the fresh part, or a generator's output).
    original : DataFrame
        The training rows to copy from.
    share : float
        With ``of="training"``: the share of the training records copied (``round(share *
        len(original))`` rows); with ``of="release"``: the share of the release's rows that are
        copies.
    seed : int
        Seed of which rows are copied and replaced.

    Returns
    -------
    LeakedRelease
        ``len(base)`` rows (more when the copies outnumber ``base``); ``leaked`` marks the copied
        training records.

    Examples
    --------
    >>> parts = calibration_split(pd.DataFrame({"a": range(100), "b": range(100)}), 0)
    >>> exact_copies(parts["fresh"], parts["original"], 0.05).n_leaked
    2
    """
    k = _count(share, original, base, of)
    return _leak_into(base, original, "exact", k, make_rng(seed, "calibration-leak", 0),
                      pool=original, spec=LeakSpec())


def near_copies(base: pd.DataFrame, original: pd.DataFrame, share: float, seed: int = 0, *,
                n_cells: int = 1, of: str = "training") -> LeakedRelease:
    """``base`` with rows replaced by copies of distinct training rows in which ``n_cells`` (1 or 2)
    random cells are set to a different value taken from the same column of ``base`` or the copies
    (family ``near1`` / ``near2``, by :func:`synthguard.data.leaks.change_cells`): near-copies that
    exact matching cannot see. :func:`family_release` builds the same rows with every real record
    as donors, as a run does.

    Parameters
    ----------
    base, original, share, seed, of
        As :func:`exact_copies` (``of="release"``: ``share`` of the release's rows are near-copies).
    n_cells : int
        Cells changed per copy, each in a different column.

    Returns
    -------
    LeakedRelease
        ``leaked`` marks the training records that were near-copied.

    Examples
    --------
    >>> parts = calibration_split(pd.DataFrame({"a": range(100), "b": range(100)}), 0)
    >>> leak = near_copies(parts["fresh"], parts["original"], 0.1, of="release")
    >>> leak.n_leaked, len(leak.release.merge(parts["original"])), leak.family
    (3, 0, 'near1')
    """
    if n_cells not in (1, 2):
        raise ConfigError(f"n_cells must be 1 or 2, got {n_cells}")
    k = _count(share, original, base, of)
    return _leak_into(base, original, f"near{n_cells}", k,
                      make_rng(seed, "calibration-leak", 1, n_cells), pool=base, spec=LeakSpec(),
                      kind="near")


def rare_copies(base: pd.DataFrame, original: pd.DataFrame, share: float, seed: int = 0, *,
                quasi_identifiers: Sequence[str] | None = None,
                reference: pd.DataFrame | None = None, of: str = "training") -> LeakedRelease:
    """``base`` with rows replaced by exact copies of *rare* training records (family ``rare``):
    records unique on the quasi-identifiers among ``original`` and ``reference`` pooled (with none
    given, on every column; :func:`synthguard.data.leaks.family_candidates`). The people most at
    risk of re-identification.

    Parameters
    ----------
    base, original, share, seed, of
        As :func:`exact_copies`; ``share`` is still a share of *all* training records.
    quasi_identifiers : list of str, optional
        The columns an intruder knows.
    reference : DataFrame, optional
        The other real records (the control): rarity is decided on all real records, as a run does.

    Raises
    ------
    ConfigError
        When fewer rare records exist than copies asked for.

    Examples
    --------
    >>> df = pd.DataFrame({"g": list("aabbccddee") * 10, "x": range(100)})
    >>> parts = calibration_split(df, 0)
    >>> rare_copies(parts["fresh"], parts["original"], 0.05, quasi_identifiers=["x"]).n_leaked
    2
    """
    k = _count(share, original, base, of)
    qis = tuple(quasi_identifiers or ())
    missing = [c for c in qis if c not in original.columns]
    if missing:
        raise ConfigError(f"quasi-identifiers not in the table: {missing}")
    pool = original if reference is None else pd.concat([original, reference[original.columns]],
                                                        ignore_index=True)
    rare, _ = family_candidates("rare", original, pool, LeakSpec(quasi_identifiers=qis))
    return _leak_into(base, original, "rare", k, make_rng(seed, "calibration-leak", 2), pool=pool,
                      spec=LeakSpec(quasi_identifiers=qis), candidates=rare)


def _run_view(parts: Mapping[str, pd.DataFrame], metadata: Any) -> Any:
    """The tables as a run of :func:`synthguard.evaluate` types them (fresh rows as the release):
    a :class:`~synthguard.registry.Context`, for the column kinds and the nearest training records."""
    from .registry import Context

    return Context.from_frames(parts["original"], parts["fresh"], parts["control"], metadata)


def family_release(family: str, parts: Mapping[str, pd.DataFrame], share: float, seed: int = 0, *,
                   metadata: Mapping[str, Any] | None = None, of: str = "training",
                   clip: bool = False) -> LeakedRelease:
    """The fresh rows with some replaced by leak rows of a tabular ``family``, built exactly as a run
    builds the leak rows it injects to measure its detection limits.

    Candidates are the training records the family applies to
    (:func:`~synthguard.data.leaks.family_candidates` on every real record, training then control);
    ``round(share * len(original))`` distinct ones are drawn with ``seed``, their leak rows built by
    :func:`~synthguard.data.leaks.build_leak_rows` (donors and standard deviations from every real
    record; numeric and datetime columns and the roles as the run types them; interpolation
    partners: each source's nearest other training record as the run finds it) and put in place of
    as many random fresh rows.

    Parameters
    ----------
    family : str
        One of :data:`FAMILY_KINDS`.
    parts : mapping
        ``{"original", "control", "fresh"}`` (:func:`calibration_split`).
    share : float
        Share of the training records leaked (``of="release"``: of the release's rows).
    seed : int
        Seed of the sources, the replaced rows and the builder's randomness.
    metadata : mapping, optional
        The run's metadata (``quasi_identifiers`` and ``sensitive``: ``linkage`` needs both;
        ``rare`` uses the quasi-identifiers).
    clip : bool
        When the family has fewer candidates than asked for: leak every candidate (``share`` of
        the result says how many) instead of raising.

    Returns
    -------
    LeakedRelease
        ``family`` and ``kind`` are the family; ``leaked`` marks the source training records.

    Raises
    ------
    ConfigError
        When the family does not apply to the table (its reason) or has fewer candidates than asked.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"age": rng.integers(20, 80, 300), "income": rng.normal(5e4, 1e4, 300),
    ...                    "city": rng.choice(list("abcde"), 300)})
    >>> leak = family_release("noise5", calibration_split(df, 0), 0.05, 0)
    >>> leak.family, leak.n_leaked, len(leak.release)
    ('noise5', 6, 90)
    """
    o, f = parts["original"], parts["fresh"]
    view, spec, pool = _family_setup(parts, metadata)
    mask = _candidates(family, o, pool, spec)
    k = _count(share, o, f, of)
    if clip:
        k = min(k, int(mask.sum()))
    return _leak_into(f, o, family, k, make_rng(seed, "calibration-family", family), pool=pool,
                      spec=spec, candidates=mask, view=view)


def _family_setup(parts: Mapping[str, pd.DataFrame], metadata: Any
                  ) -> tuple[Any, LeakSpec, pd.DataFrame]:
    """The run's view of the tables, its leak spec and the pool of every real record."""
    o, c = parts["original"], parts["control"]
    view = _run_view(parts, metadata)
    return view, LeakSpec.from_schema(view.tables.schema), pd.concat([o, c[o.columns]],
                                                                     ignore_index=True)


def _candidates(family: str, original: pd.DataFrame, pool: pd.DataFrame, spec: LeakSpec
                ) -> np.ndarray:
    if family not in FAMILY_KINDS:
        raise ConfigError(f"family must be one of {list(FAMILY_KINDS)}, got {family!r}"
                          + (" (person_copies / text_near_copies build it)"
                             if family in FAMILIES else ""))
    mask, why = family_candidates(family, original, pool, spec)
    if mask is None:
        raise ConfigError(f"leak family {family!r} does not apply to this table: {why}")
    return mask


def mixed_release(parts: Mapping[str, pd.DataFrame], shares: Mapping[str, float], seed: int = 0, *,
                  metadata: Mapping[str, Any] | None = None, of: str = "release") -> LeakedRelease:
    """The fresh rows with leak rows of several families in place of some, each family from its own
    training records (no record leaks twice): e.g. ``{"exact": 0.3, "near1": 0.3}`` with
    ``of="release"`` is a release of 30 % verbatim training rows, 30 % one-cell copies and 40 %
    fresh rows. Rows are built as :func:`family_release` builds them.

    Returns
    -------
    LeakedRelease
        ``family`` is the families joined by ``+``; ``leaked`` marks every source.

    Examples
    --------
    >>> df = pd.DataFrame({"a": range(200), "b": [i % 7 for i in range(200)]})
    >>> leak = mixed_release(calibration_split(df, 0), {"exact": 0.3, "near1": 0.3})
    >>> leak.family, leak.n_leaked, len(leak.release)
    ('exact+near1', 36, 60)
    """
    o, f = parts["original"], parts["fresh"]
    view, spec, pool = _family_setup(parts, metadata)
    rng = make_rng(seed, "calibration-mixed", *shares)
    used = np.zeros(len(o), dtype=bool)
    rows, sources = [], []
    for family, share in shares.items():
        got, src = _leak_rows(o, family, _count(share, o, f, of), rng, pool=pool, spec=spec,
                              candidates=_candidates(family, o, pool, spec) & ~used, view=view)
        used[src] = True
        rows.append(got)
        sources.append(src)
    release, which = _replace_into(f, pd.concat(rows, ignore_index=True), rng)
    return LeakedRelease(release, used, "+".join(shares), "mixed",
                         _origin(which, np.concatenate(sources)))


def leaky_release(base: pd.DataFrame, original: pd.DataFrame, share: float, seed: int = 0, *,
                  perturb: bool = False, n_cells: int = 1) -> pd.DataFrame:
    """``base`` with ``round(share * len(original))`` of its rows replaced by copies of distinct
    training rows: a release that exposes ``share`` of the training records. The release only;
    :func:`exact_copies` / :func:`near_copies` also return which records leaked.

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
        Change ``n_cells`` cells of every copy (random columns, each set to a different value of
        that column): near-copies that exact matching cannot see.
    n_cells : int
        Cells changed per copy when ``perturb`` (1 or 2).

    Returns
    -------
    DataFrame
        A new frame with ``len(base)`` rows (more when the copies outnumber ``base``).

    Examples
    --------
    >>> parts = calibration_split(pd.DataFrame({"a": range(100)}), 0)
    >>> len(leaky_release(parts["fresh"], parts["original"], 0.1))
    30
    """
    if perturb:
        return near_copies(base, original, share, seed, n_cells=n_cells).release
    return exact_copies(base, original, share, seed).release


# ------------------------------------------------------------------------ neighbourhood releases
def _design(original: pd.DataFrame) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
    """Standardised numeric columns (NaN at the median) and one-hot categoricals of ``original``."""
    num = _numeric_columns(original)
    cat = [c for c in original.columns if c not in num]
    x = original[num].to_numpy(dtype=float) if num else np.zeros((len(original), 0))
    med = np.nanmedian(x, axis=0) if num else np.zeros(0)
    med = np.where(np.isnan(med), 0.0, med)
    x = np.where(np.isnan(x), med, x)
    sd = x.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    z = (x - x.mean(axis=0)) / sd
    if cat:
        oh = pd.get_dummies(original[cat].astype(str).where(original[cat].notna(), "\0nan"),
                            dtype=float).to_numpy()
        z = np.hstack([z, oh / np.sqrt(2.0)])
    return z, num, x, sd


def _round_integer_columns(out: pd.DataFrame, original: pd.DataFrame, num: list[str]) -> None:
    """Round the columns that hold whole numbers in ``original``, back to its dtype when it is an
    integer one and nothing is missing (in place)."""
    for c in num:
        if _integer_valued(original[c]):
            v = np.round(out[c].to_numpy(dtype=float))
            if pd.api.types.is_integer_dtype(original[c]) and not np.isnan(v).any():
                out[c] = v.astype(original[c].dtype)
            else:
                out[c] = v


def _smote_rows(original: pd.DataFrame, anchors: np.ndarray, lam: np.ndarray, k_neighbors: int,
                rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
    """Rows interpolated between training rows ``anchors`` and one of their ``k_neighbors`` nearest
    training neighbours, at ``lam`` (0 = the anchor). Returns (rows, index of the nearer end)."""
    from sklearn.neighbors import NearestNeighbors

    z, num, _, _ = _design(original)
    k = min(k_neighbors, len(original) - 1)
    if k < 1:
        raise ConfigError("interpolation needs at least 2 training rows")
    nn = NearestNeighbors(n_neighbors=k + 1).fit(z)
    _, idx = nn.kneighbors(z[anchors])
    # the first neighbour is the row itself unless ties put another first: drop the anchor wherever
    not_self = idx != anchors[:, None]
    order = np.argsort(~not_self, axis=1, kind="stable")[:, :k]
    cand = np.take_along_axis(idx, order, axis=1)
    mates = cand[np.arange(len(anchors)), rng.integers(0, k, len(anchors))]
    a = original.iloc[anchors].reset_index(drop=True)
    b = original.iloc[mates].reset_index(drop=True)
    out = a.copy()
    if num:
        va, vb = a[num].to_numpy(dtype=float), b[num].to_numpy(dtype=float)
        vb = np.where(np.isnan(vb), va, vb)  # a missing neighbour value keeps the anchor's
        out[num] = va + lam[:, None] * (vb - va)
        _round_integer_columns(out, original, num)
    cat = [c for c in original.columns if c not in num]
    if cat:
        from_b = rng.random((len(anchors), len(cat))) < lam[:, None]
        for j, c in enumerate(cat):
            out[c] = np.where(from_b[:, j], b[c].to_numpy(), a[c].to_numpy())
    nearer = np.where(lam < 0.5, anchors, mates)
    return out, nearer


def smote_release(original: pd.DataFrame, n: int | None = None, seed: int = 0, *,
                  k_neighbors: int = 5, base: pd.DataFrame | None = None,
                  share: float | None = None) -> LeakedRelease:
    """A SMOTE-like release: numeric columns interpolated between a training row and one of its
    ``k_neighbors`` nearest training neighbours (standardised numeric + one-hot), categoricals taken
    from either end (from the neighbour with the interpolation weight); integer-valued columns
    are rounded.

    Two modes:

    - whole release (``base`` None): ``n`` rows (default ``len(original)``), anchors drawn with
      replacement, weight uniform on [0, 1]; ``leaked`` marks the training records nearer to a
      release row than its other end (the record the row mostly reproduces);
    - a leak (``base`` and ``share`` given): ``round(share * len(original))`` rows of ``base``
      replaced by interpolations from distinct anchors with weight uniform on [0, 0.5];
      ``leaked`` marks the anchors.

    Examples
    --------
    >>> df = pd.DataFrame({"x": np.arange(100.0), "y": np.arange(100.0) ** 2})
    >>> leak = smote_release(df, 50, seed=0)
    >>> len(leak.release), 0 < leak.share <= 0.5
    (50, True)
    """
    rng = make_rng(seed, "calibration-smote")
    if base is None:
        n = len(original) if n is None else int(n)
        anchors = rng.integers(0, len(original), n)
        lam = rng.random(n)
        rows, nearer = _smote_rows(original, anchors, lam, k_neighbors, rng)
        return LeakedRelease(rows, _mask(len(original), nearer), None, "smote")
    if share is None:
        raise ConfigError("give share with base")
    k = _count(share, original, base, "training")
    anchors = np.sort(rng.choice(len(original), k, replace=False))
    lam = rng.random(k) * 0.5
    rows, _ = _smote_rows(original, anchors, lam, k_neighbors, rng)
    return LeakedRelease(_replace_into(base, rows, rng)[0], _mask(len(original), anchors),
                         None, "smote")


def mixture_release(original: pd.DataFrame, n: int | None = None, seed: int = 0, *,
                    n_components: int | None = None, per_component: int = 5) -> LeakedRelease:
    """An overfit Gaussian mixture: ``n_components`` (default ``len(original) // per_component``,
    i.e. ``n/5``) diagonal Gaussians fitted (scikit-learn) to the standardised numeric columns of
    the training rows. Each release row picks a training row at random (its *member*), draws its
    numeric values from the member's component and takes its categorical values (and missing
    numeric cells) from the member. ``leaked`` marks the members drawn.

    Examples
    --------
    >>> df = pd.DataFrame({"x": np.arange(100.0), "g": list("ab") * 50})
    >>> len(mixture_release(df, 40, seed=0).release)
    40
    """
    from sklearn.mixture import GaussianMixture

    n = len(original) if n is None else int(n)
    num = _numeric_columns(original)
    rng = make_rng(seed, "calibration-mixture")
    members = rng.integers(0, len(original), n)
    out = original.iloc[members].reset_index(drop=True).copy()
    if num:
        c = n_components or max(1, len(original) // per_component)
        c = min(c, len(original))
        x = original[num].to_numpy(dtype=float)
        med = np.nanmedian(x, axis=0)
        med = np.where(np.isnan(med), 0.0, med)
        x = np.where(np.isnan(x), med, x)
        mu, sd = x.mean(axis=0), x.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        z = (x - mu) / sd
        gm = GaussianMixture(c, covariance_type="diag", reg_covar=1e-3, max_iter=50,
                             random_state=int(rng.integers(2**31 - 1))).fit(z)
        comp = gm.predict(z)[members]
        draw = gm.means_[comp] + rng.standard_normal((n, len(num))) * np.sqrt(gm.covariances_[comp])
        vals = draw * sd + mu
        miss = original[num].isna().to_numpy()[members]
        out[num] = np.where(miss, np.nan, vals)
        _round_integer_columns(out, original, num)
    return LeakedRelease(out, _mask(len(original), members), None, "mixture")


def kde_release(original: pd.DataFrame, n: int | None = None, seed: int = 0, *,
                bandwidth: float = 0.5) -> LeakedRelease:
    """A kernel density release: a training row drawn at random (its *source*) with Gaussian noise of
    standard deviation ``bandwidth`` x the column's sd added to every numeric column; categorical
    values are the source's. ``leaked`` marks the sources (with a wide bandwidth their numeric
    values are hidden, their categorical combination is not).

    Examples
    --------
    >>> df = pd.DataFrame({"x": np.arange(100.0), "g": list("ab") * 50})
    >>> len(kde_release(df, 30, seed=0, bandwidth=1.0).release)
    30
    """
    if bandwidth < 0:
        raise ConfigError(f"bandwidth must be >= 0, got {bandwidth}")
    n = len(original) if n is None else int(n)
    rng = make_rng(seed, "calibration-kde")
    src = rng.integers(0, len(original), n)
    out = original.iloc[src].reset_index(drop=True).copy()
    num = _numeric_columns(original)
    if num:
        x = original[num].to_numpy(dtype=float)
        sd = np.nanstd(x, axis=0)
        sd = np.where(np.isfinite(sd), sd, 0.0)
        out[num] = x[src] + rng.standard_normal((n, len(num))) * bandwidth * sd
        _round_integer_columns(out, original, num)
    return LeakedRelease(out, _mask(len(original), src), None, "kde")


def mode_seeking_release(fresh: pd.DataFrame, original: pd.DataFrame, seed: int = 0, *,
                         n: int | None = None, quasi_identifiers: Sequence[str] | None = None,
                         power: float = 1.0, bins: int = 5) -> LeakedRelease:
    """The null of a mode-seeking generator: ``n`` rows (default ``len(fresh)``) resampled with
    replacement from ``fresh`` only, a row drawn with probability proportional to (the number of
    fresh rows sharing its quasi-identifier combination) ** ``power``; numeric columns (the
    quasi-identifiers', or with none given every column) cut into ``bins`` quantile bins of
    ``fresh``. No training row
    is used (``original`` gives only the number of training records), so nobody leaked: every alarm
    on it is a false alarm.

    Examples
    --------
    >>> df = pd.DataFrame({"g": list("aaab") * 25, "x": range(100)})
    >>> parts = calibration_split(df, 0)
    >>> mode_seeking_release(parts["fresh"], parts["original"], quasi_identifiers=["g"]).n_leaked
    0
    """
    cols = list(fresh.columns) if not quasi_identifiers else list(quasi_identifiers)
    keys = _bin_keys(fresh, cols, fresh, bins)
    w = np.bincount(keys)[keys].astype(float) ** power
    rng = make_rng(seed, "calibration-mode-seeking")
    n = len(fresh) if n is None else int(n)
    pick = rng.choice(len(fresh), n, replace=True, p=w / w.sum())
    return LeakedRelease(fresh.iloc[pick].reset_index(drop=True), np.zeros(len(original), bool),
                         None, "mode_seeking")


# ------------------------------------------------------------------------------------- persons
def person_panel(frame: pd.DataFrame, seed: int = 0, *, rows: tuple[int, int] = (2, 4),
                 key: str = "person_id", visit: str = "visit", drift: float = 0.1) -> pd.DataFrame:
    """A person-level panel from a one-row-per-person table: each row becomes a person (id
    ``key``) with ``rows[0]``..``rows[1]`` visits (``visit`` = 0, 1, ...). Categorical values stay;
    numeric values drift from visit to visit by Gaussian steps of ``drift`` x the column's sd
    (rounded where the column is integer-valued), so a person's rows are alike but not equal.

    Examples
    --------
    >>> panel = person_panel(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), 0)
    >>> panel["person_id"].nunique(), 6 <= len(panel) <= 12
    (3, True)
    """
    lo, hi = rows
    if not 1 <= lo <= hi:
        raise ConfigError(f"rows must be (lo, hi) with 1 <= lo <= hi, got {rows}")
    rng = make_rng(seed, "calibration-panel")
    reps = rng.integers(lo, hi + 1, len(frame))
    src = np.repeat(np.arange(len(frame)), reps)
    first = np.repeat(np.cumsum(reps) - reps, reps)
    out = frame.iloc[src].reset_index(drop=True).copy()
    num = _numeric_columns(frame)
    if num and drift:
        x = frame[num].to_numpy(dtype=float)[src]
        sd = np.nan_to_num(np.nanstd(frame[num].to_numpy(dtype=float), axis=0))
        steps = rng.standard_normal(x.shape) * drift * sd
        steps[np.arange(len(src)) == first] = 0.0  # the first visit is the real row
        walk = np.cumsum(steps, axis=0)
        walk -= walk[first]  # cumulative per person
        out[num] = x + walk
        _round_integer_columns(out, frame, num)
    out.insert(0, visit, np.arange(len(src)) - first)
    out.insert(0, key, np.char.add("p", src.astype(str)))
    return out


def person_copies(base: pd.DataFrame, original: pd.DataFrame, share: float, seed: int = 0, *,
                  key: str = "person_id") -> LeakedRelease:
    """A panel release (``base``, many rows per person, entity key ``key``) in which
    ``round(share * n_training_persons)`` persons are replaced by whole copies of distinct training
    persons under new ids ``copy-0``, ``copy-1``, ... (as
    :func:`synthguard.data.entities.calibration.entity_leaky_release` does, with the sources known).
    ``leaked`` is over the training *persons*, in sorted id order.

    Examples
    --------
    >>> panel = person_panel(pd.DataFrame({"x": np.arange(100.0)}), 0)
    >>> ids = panel["person_id"].unique()
    >>> orig, rest = panel[panel["person_id"].isin(ids[:40])], panel[~panel["person_id"].isin(ids[:40])]
    >>> person_copies(rest, orig, 0.05).n_leaked
    2
    """
    _check_share(share)
    for name, part in (("base", base), ("original", original)):
        if key not in part.columns:
            raise ConfigError(f"the {name} rows have no entity key column {key!r}")
    ids = np.asarray(sorted(pd.unique(original[key].dropna()), key=str), dtype=object)
    base_ids = np.asarray(sorted(pd.unique(base[key].dropna()), key=str), dtype=object)
    k = int(round(share * len(ids)))
    rng = make_rng(seed, "calibration-person")
    src = np.sort(rng.choice(len(ids), k, replace=False))
    drop = base_ids[rng.choice(len(base_ids), min(k, len(base_ids)), replace=False)]
    copies = original[original[key].isin(ids[src])].copy()
    copies[key] = copies[key].map(dict(zip(ids[src], [f"copy-{i}" for i in range(k)], strict=True)))
    kept = base[~base[key].isin(drop)].astype({key: object})
    out = pd.concat([kept, copies.astype({key: object})], ignore_index=True)
    return LeakedRelease(out, _mask(len(ids), src), "person", "person")


# ---------------------------------------------------------------------------------------- text
def text_near_copies(base: pd.DataFrame, original: pd.DataFrame, share: float, seed: int = 0, *,
                     column: str, n_words: int = 1, of: str = "training") -> LeakedRelease:
    """``base`` with rows replaced by copies of distinct training rows whose ``column`` (a free-text
    column) has a word changed (family ``text``, :func:`synthguard.data.leaks.build_leak_rows`): a
    random word replaced by a different word drawn from the words of ``base``'s documents, ``n_words``
    times over (a later change may hit a word an earlier one changed). Near-verbatim training
    documents, which verbatim matching misses.

    Examples
    --------
    >>> docs = pd.DataFrame({"review": [f"good tea number {i} with milk" for i in range(100)]})
    >>> parts = calibration_split(docs, 0)
    >>> leak = text_near_copies(parts["fresh"], parts["original"], 0.05, column="review")
    >>> leak.n_leaked, bool(leak.release["review"].isin(parts["original"]["review"]).any())
    (2, False)
    """
    if column not in original.columns:
        raise ConfigError(f"no column {column!r} in the training rows")
    if n_words < 1:
        raise ConfigError(f"n_words must be >= 1, got {n_words}")
    k = _count(share, original, base, of)
    rng = make_rng(seed, "calibration-text", n_words)
    src = np.sort(rng.choice(len(original), k, replace=False))
    rows = original.iloc[src].reset_index(drop=True)
    for _ in range(n_words if k else 0):
        rows = build_leak_rows("text", rows, np.arange(k), pool=base, spec=LeakSpec(text=(column,)),
                               rng=rng)
    release, which = _replace_into(base, rows, rng)
    return LeakedRelease(release, _mask(len(original), src), "text", "text", _origin(which, src))


# ---------------------------------------------------------------------------------- generators
def generated_release(original: pd.DataFrame, n: int, kind: str = "copula", seed: int = 0) -> pd.DataFrame:
    """A release of ``n`` rows from a built-in generator fitted on ``original``:
    ``"marginals"`` (independent marginals) or ``"copula"`` (Gaussian copula).

    Examples
    --------
    >>> df = pd.DataFrame({"x": np.arange(50.0), "g": list("ab") * 25})
    >>> len(generated_release(df, 20, "marginals"))
    20
    """
    from .generators import GaussianCopula, IndependentMarginals

    gens = {"marginals": IndependentMarginals, "copula": GaussianCopula}
    if kind not in gens:
        raise ConfigError(f"kind must be one of {sorted(gens)}, got {kind!r}")
    return gens[kind](seed=seed).fit(original).generate(n)


def build_release(kind: str, parts: dict[str, pd.DataFrame], seed: int = 0, *,
                  share: float | None = None, quasi_identifiers: Sequence[str] | None = None,
                  metadata: Mapping[str, Any] | None = None, **params: Any) -> LeakedRelease:
    """One calibration release of a table's parts (:func:`calibration_split`) by kind name.

    Parameters
    ----------
    kind : str
        A key of :data:`RELEASE_KINDS`: ``fresh``, ``mode_seeking``; ``exact``, ``near``, ``rare``
        (:func:`exact_copies`, :func:`near_copies`, :func:`rare_copies`) and the families
        ``near1``, ``near2``, ``noise2``, ``noise5``, ``noise10``, ``linkage``, ``interpolation``
        (:func:`family_release`), which need ``share``; ``smote`` (whole release; with ``share``:
        a leak into fresh), ``mixture``, ``kde``, ``marginals``, ``copula`` (whole releases of
        ``len(fresh)`` rows).
    parts : dict
        ``{"original", "control", "fresh"}``.
    share : float, optional
        Share of the training records leaked (``of="release"`` in ``params``: of the release's rows).
    quasi_identifiers : list of str, optional
        For ``rare`` and ``mode_seeking`` (default: the metadata's).
    metadata : mapping, optional
        The run's metadata, for the families (``linkage`` needs quasi-identifiers and sensitive
        columns).
    **params
        Passed to the builder (``n_cells``, ``of``, ``n_components``, ``bandwidth``, ...).

    Examples
    --------
    >>> parts = calibration_split(pd.DataFrame({"a": range(100), "b": range(100)}), 0)
    >>> build_release("exact", parts, 0, share=0.05).n_leaked
    2
    """
    o, c, f = parts["original"], parts["control"], parts["fresh"]
    n = len(f) if len(f) else len(o)
    if kind not in RELEASE_KINDS:
        raise ConfigError(f"kind must be one of {sorted(RELEASE_KINDS)}, got {kind!r}")
    if quasi_identifiers is None and metadata is not None:
        quasi_identifiers = metadata.get("quasi_identifiers")
    if (kind in ("near", "rare") or RELEASE_KINDS[kind] is not None) and share is None:
        raise ConfigError(f"{kind} needs a share")
    if kind == "fresh":
        return LeakedRelease(f, np.zeros(len(o), bool), None, "fresh")
    if kind == "mode_seeking":
        return mode_seeking_release(f, o, seed, quasi_identifiers=quasi_identifiers, **params)
    if kind == "exact":
        return exact_copies(f, o, share, seed, **params)  # type: ignore[arg-type]
    if kind == "near":
        return near_copies(f, o, share, seed, **params)  # type: ignore[arg-type]
    if kind == "rare":
        return rare_copies(f, o, share, seed, quasi_identifiers=quasi_identifiers,  # type: ignore[arg-type]
                           reference=c, **params)
    if kind in FAMILY_KINDS:
        meta = dict(metadata or {})
        if quasi_identifiers is not None:
            meta.setdefault("quasi_identifiers", list(quasi_identifiers))
        return family_release(kind, parts, share, seed, metadata=meta or None,  # type: ignore[arg-type]
                              **params)
    if kind == "smote":
        if share is not None:
            return smote_release(o, seed=seed, base=f, share=share, **params)
        return smote_release(o, n, seed, **params)
    if kind == "mixture":
        return mixture_release(o, n, seed, **params)
    if kind == "kde":
        return kde_release(o, n, seed, **params)
    return LeakedRelease(generated_release(o, n, kind, seed), np.zeros(len(o), bool), None, kind)


# ------------------------------------------------------------------------- words against numbers
def _section(text: str, heading: str) -> str:
    """The lines of ``text`` under ``heading`` up to the next heading of the same or a higher level."""
    lines = text.splitlines()
    level = len(heading) - len(heading.lstrip("#"))
    try:
        start = lines.index(heading)
    except ValueError:
        return ""
    out = []
    for line in lines[start + 1:]:
        if line.startswith("#") and len(line) - len(line.lstrip("#")) <= level:
            break
        out.append(line)
    return "\n".join(out)


def claim_problems(rep: Any) -> list[str]:
    """What in ``rep`` says more (or other) than its numbers; empty when words and numbers agree.

    - a risk read ``low``: every verdict-driving test under it has its one-sided upper bound
      (``Evidence.upper``) below the materiality and reads ``low`` itself, the intervals printed
      beside the risk and its tests end below the materiality, every leak family it answers for
      that applies has a detection limit below it, and none is unassessed;
    - a risk read ``medium`` has no test read ``high``, and the largest leak its excess is
      consistent with (``partial``, when its tests see a family) is below the materiality and
      stated in its summary;
    - a risk's ``bound`` is the largest of its tests' upper bounds and its families' limits;
    - the bound, formatted as the reports format shares (:func:`synthguard.core.format.pct`), is
      what the risk's summary, its row of the dossier's results per criterion and (when low) the
      dossier's residual-risk line state, and
      the verdict's summary states the largest bound of the risks it summarises.

    ``benchmarks/calibration.py`` runs it over every report it makes, and the calibration suite
    over every report of its tests (``tests/calibration/test_consistency.py``).

    Examples
    --------
    >>> import synthguard
    >>> df = pd.DataFrame({"a": np.arange(600) % 37, "b": np.arange(600) % 11})
    >>> parts = calibration_split(df, 0)
    >>> rep = synthguard.evaluate(parts["original"], parts["fresh"], control=parts["control"],
    ...                           metrics=["exact_matches"], retest_columns=0)
    >>> claim_problems(rep)
    []
    """
    import math

    from .core.format import pct
    from .report.dossier import SECTIONS
    from .run.verdict import RISK_FAMILIES

    v = rep.verdict.to_dict()
    m = float(v["materiality"])
    dossier = rep.to_dossier()
    results = _section(dossier, f"## {SECTIONS[5]}")  # results per criterion
    residual = _section(dossier, f"## {SECTIONS[8]}")  # residual risk
    out: list[str] = []
    decided: list[float] = []
    undecided: list[float] = []
    for r in v["risks"]:
        name, level = r["risk"], r["level"]
        if level == "not assessed":
            continue
        ups = {t: rep.result(t).evidence.upper for t in r["tests"]}
        lims = {f: (d or {}).get("value") for f, d in (r.get("detection_limits") or {}).items()}
        applies = [f for f in RISK_FAMILIES[name] if f not in (r.get("not_applicable") or {})]
        if level == "low":
            loose = {t: u for t, u in ups.items() if not u < m}
            if loose:
                out.append(f"{name} low with tests bounded at or above {m}: {loose}")
            # the intervals printed beside the risk and its tests, and the tests' own levels:
            # none may say a material leak is possible where the risk says it is ruled out
            shown = {t["metric"]: (t.get("effect_ci") or [None, None])[1] for t in v["tests"]
                     if t["metric"] in r["tests"]}
            shown["(risk row)"] = (r.get("effect_ci") or [None, None])[1]
            wide = {t: hi for t, hi in shown.items() if hi is not None and not float(hi) < m}
            if wide:
                out.append(f"{name} low beside intervals reaching {m} or more: {wide}")
            unsure = [t["metric"] for t in v["tests"] if t["metric"] in r["tests"]
                      and t["level"] not in ("low", None)]
            if unsure:
                out.append(f"{name} low with tests under it not read low: {unsure}")
            open_ = {f: lims.get(f) for f in applies if lims.get(f) is None or not lims[f] < m}
            if open_ or r.get("unassessed"):
                out.append(f"{name} low with families not ruled out: {open_}, "
                           f"unassessed {r.get('unassessed')}")
        if level == "medium":
            part = r.get("partial")
            highs = [t["metric"] for t in v["tests"] if t["metric"] in r["tests"] and t["level"] == "high"]
            if highs:
                out.append(f"{name} medium with tests read high: {highs}")
            if part and not float(part["consistent"]) < m:
                out.append(f"{name} medium although a leak of {part['consistent']} fits the excess "
                           f"of {part['metric']} (not below {m})")
            if part and pct(part["consistent"]) not in r["summary"]:
                out.append(f"{name}: summary does not state the leak its excess allows "
                           f"{pct(part['consistent'])}: {r['summary']!r}")
        values = [u for u in ups.values() if math.isfinite(u)] + \
                 [x for x in lims.values() if x is not None]
        bound = r.get("bound")
        if values and (bound is None or abs(float(bound) - max(values)) > 1e-12):
            out.append(f"{name}: bound {bound} is not the largest of its tests' upper bounds and "
                       f"families' limits ({max(values)})")
        if level in ("high", "medium") or bound is None:
            continue
        (decided if level == "low" else undecided).append(float(bound))
        if r.get("unassessed"):
            continue  # no bound is claimed: the summary names the unassessed families instead
        text = pct(bound)
        if text not in r["summary"]:
            out.append(f"{name}: summary does not state its bound {text}: {r['summary']!r}")
        row = [x for x in results.splitlines() if x.startswith(f"| {r['title']} |")]
        if not row or text not in row[0]:
            out.append(f"{name}: the dossier's results table does not state its bound {text}: {row}")
        if level == "low":
            line = [x for x in residual.splitlines() if x.startswith(f"- {r['title']}:")]
            if not line or text not in line[0]:
                out.append(f"{name}: the dossier's residual risk does not state its bound {text}: "
                           f"{line}")
    summary = v["summary"]
    if v["level"] == "low" and decided and pct(max(decided)) not in summary:
        out.append(f"verdict low: summary does not state the largest bound {pct(max(decided))}: "
                   f"{summary!r}")
    if v["level"] == "inconclusive" and undecided and max(undecided) >= m \
            and pct(max(undecided)) not in summary:
        out.append(f"verdict inconclusive: summary does not state the largest bound reached "
                   f"{pct(max(undecided))}: {summary!r}")
    return out
