"""Leak families, defined in the data: how a release can carry a training record.

Each family turns training records into *leak rows*, the rows a generator or an anonymiser that
leaked those records would put into a release. The same builders make the calibration releases
(:mod:`synthguard.calibration`: leak rows replace rows of a fresh real sample, with the ground truth)
and the leaks a run injects into its own release to measure its detection limits (the smallest leak
of each family the run reads ``high``), so both mean the same leak.

========================  =====================================================================
family                    the leak row of training record ``i``
========================  =====================================================================
``exact``                 a verbatim copy
``rare``                  a verbatim copy, of a record unique on the quasi-identifiers among all
                          real records (the people most at risk)
``near1``, ``near2``      a copy with 1 or 2 cells (distinct columns) set to another value of the
                          same column, drawn from the real records
``noise2/5/10``           numeric and datetime cells plus Gaussian noise of 2, 5 or 10 % of the
                          column's standard deviation over the real records (whole-number columns
                          rounded); categorical cells kept: a generator that memorises and adds
                          a little noise
``linkage``               the record's quasi-identifiers and sensitive values, every other cell
                          from another real record: what links a known person to their secret
                          (records unique on their quasi-identifiers among the real records: the
                          others' rows link a group, not a person)
``interpolation``         between the record and its nearest other training record at a uniform
                          random point (categorical cells from the nearer end): a memorised
                          neighbourhood (SMOTE-like)
``person``                every row of a training person (entity-level runs)
``text``                  the record with one word of its document changed (text columns)
========================  =====================================================================

Builders are vectorised over the leak rows (one pass per column) and seeded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.results import LEAK_FAMILIES
from ..errors import ConfigError

__all__ = ["CELLS_CHANGED", "FAMILIES", "FAMILY_NAMES", "FAMILY_OF_CELLS", "NOISE_SCALES", "TABULAR_FAMILIES", "LeakSpec", "build_leak_rows",
           "change_cells", "family_candidates", "noise_rows", "interpolated_rows", "linkage_rows"]

#: Every leak family, in the order reports list them.
FAMILIES = LEAK_FAMILIES
#: The families of one table's rows (not entity- or text-level).
TABULAR_FAMILIES = FAMILIES[:9]
#: Noise families: the noise's standard deviation as a share of the column's.
NOISE_SCALES = {"noise2": 0.02, "noise5": 0.05, "noise10": 0.10}
#: The copy families by the cells their rows differ in from their training record (the copy
#: joins' and the records export's one mapping), and its inverse.
CELLS_CHANGED = {"exact": 0, "near1": 1, "near2": 2}
FAMILY_OF_CELLS = {cells: family for family, cells in CELLS_CHANGED.items()}
#: The families in plain words (reports).
FAMILY_NAMES = {
    "exact": "exact copies", "rare": "copies of rare records", "near1": "copies with one cell changed",
    "near2": "copies with two cells changed", "noise2": "copies with 2 % noise",
    "noise5": "copies with 5 % noise", "noise10": "copies with 10 % noise",
    "linkage": "quasi-identifiers with the sensitive values", "interpolation": "interpolated neighbours",
    "person": "whole persons", "text": "near-verbatim documents"}


@dataclass(frozen=True)
class LeakSpec:
    """What the builders need to know of the table: the columns by kind and the declared roles.

    Parameters
    ----------
    numeric : sequence of str
        Numerical columns (noise and interpolation move them).
    datetime : sequence of str
        Datetime columns (moved like numbers, in their own unit).
    quasi_identifiers, sensitive : sequence of str
        The declared roles (``linkage`` needs both; ``rare`` uses the quasi-identifiers).
    text : sequence of str
        Free-text columns.
    """

    numeric: tuple[str, ...] = ()
    datetime: tuple[str, ...] = ()
    quasi_identifiers: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    text: tuple[str, ...] = ()

    @classmethod
    def from_schema(cls, schema: object) -> LeakSpec:
        """The spec of a :class:`~synthguard.data.schema.Schema`."""
        cols = getattr(schema, "columns", {})
        return cls(tuple(c for c, s in cols.items() if s.sdtype == "numerical"),
                   tuple(c for c, s in cols.items() if s.sdtype == "datetime"),
                   tuple(c for c in getattr(schema, "quasi_identifiers", ()) if c in cols),
                   tuple(c for c in getattr(schema, "sensitive", ()) if c in cols),
                   tuple(c for c, s in cols.items() if s.sdtype == "text"))


def family_candidates(family: str, original: pd.DataFrame, pool: pd.DataFrame, spec: LeakSpec
                      ) -> tuple[np.ndarray | None, str | None]:
    """Which training records can leak as ``family`` (a boolean mask over ``original``'s rows), or
    ``None`` with the reason the family does not apply to this table.

    ``pool`` is every real record, the training records first, then the control: rarity is decided
    on it, label-free.

    Examples
    --------
    >>> o = pd.DataFrame({"a": [1.0, 2.0, 2.0], "g": ["x", "y", "y"]})
    >>> mask, why = family_candidates("rare", o, o, LeakSpec(numeric=("a",), quasi_identifiers=("g",)))
    >>> mask.tolist(), why
    ([True, False, False], None)
    >>> family_candidates("linkage", o, o, LeakSpec(numeric=("a",)))[1]
    'needs declared quasi-identifiers and sensitive columns'
    """
    n = len(original)
    every = np.ones(n, dtype=bool)
    if family in ("exact", "near1", "near2", "interpolation"):
        if family == "near2" and original.shape[1] < 3:
            return None, "needs at least three columns"
        if family == "near1" and original.shape[1] < 2:
            return None, "needs at least two columns"
        if family == "interpolation" and n < 2:
            return None, "needs at least two training records"
        return every, None
    if family in NOISE_SCALES:
        if not (spec.numeric or spec.datetime):
            return None, "needs a numerical or datetime column"
        return every, None
    if family == "rare":
        cols = list(spec.quasi_identifiers) or list(original.columns)
        keys = _exact_keys(pool[cols])  # the pool starts with the training records
        return np.bincount(keys)[keys[:n]] == 1, None
    if family == "linkage":
        if not spec.quasi_identifiers or not spec.sensitive:
            return None, "needs declared quasi-identifiers and sensitive columns"
        if len(set(spec.quasi_identifiers) | set(spec.sensitive)) >= original.shape[1]:
            return None, "every column is a quasi-identifier or sensitive: a linkage row is a copy"
        # only a record unique on its quasi-identifiers is identified by them: the others' rows
        # link a group of people, not a person, to the sensitive values
        keys = _exact_keys(pool[list(spec.quasi_identifiers)])
        return np.bincount(keys)[keys[:n]] == 1, None
    if family == "text":
        if not spec.text:
            return None, "needs a text column"
        return every, None
    if family == "person":
        return None, "needs an entity key (entity-level runs)"
    raise ConfigError(f"unknown leak family {family!r}; one of {list(FAMILIES)}")


def _exact_keys(frame: pd.DataFrame) -> np.ndarray:
    """One integer per row: equal rows (missing equal to missing), equal integers."""
    if frame.shape[1] == 0:
        return np.zeros(len(frame), dtype=np.int64)
    codes = [pd.factorize(frame[c], use_na_sentinel=False)[0] for c in frame.columns]
    return pd.DataFrame(np.column_stack(codes)).groupby(list(range(len(codes))), sort=False).ngroup() \
        .to_numpy(dtype=np.int64)


def change_cells(copies: pd.DataFrame, donors: pd.DataFrame, n_cells: int,
                 rng: np.random.Generator) -> pd.DataFrame:
    """Set ``n_cells`` distinct random columns of every row of ``copies`` to a *different* value
    drawn from that column of ``donors`` (one pass per column, vectorised over the rows).

    Examples
    --------
    >>> c = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    >>> out = change_cells(c, pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}), 1,
    ...                    np.random.default_rng(0))
    >>> int((out != c).sum(axis=1).max())
    1
    """
    k = len(copies)
    if not k or not n_cells:
        return copies

    def pooled(col: str) -> pd.Series:  # one column at a time (donors may be fetched column-wise)
        return pd.concat([copies[col], donors[col]], ignore_index=True)

    changeable = [j for j, c in enumerate(copies.columns) if pooled(c).nunique(dropna=False) > 1]
    if len(changeable) < n_cells:
        raise ConfigError(f"only {len(changeable)} columns can be changed, n_cells={n_cells}")
    choice = np.asarray(changeable)[np.argsort(rng.random((k, len(changeable))), axis=1)[:, :n_cells]]
    out = copies.copy()
    for j in np.unique(choice):
        sel = np.flatnonzero((choice == j).any(axis=1))
        col = copies.columns[j]
        cur = out[col].to_numpy()[sel]
        values = pooled(col).to_numpy()
        new = values[rng.integers(0, len(values), len(sel))]
        same = np.ones(len(sel), dtype=bool)
        for _ in range(64):  # redraw where the donor value equals the copy's (vectorised)
            same = pd.Series(new).eq(pd.Series(cur)).to_numpy() | (pd.isna(new) & pd.isna(cur))
            if not same.any():
                break
            new[same] = values[rng.integers(0, len(values), int(same.sum()))]
        if same.any():  # near-constant columns: the first other value, vectorised over leftovers
            distinct = pd.unique(values)
            left = np.flatnonzero(same)
            first_other = np.array([distinct[0], distinct[1] if len(distinct) > 1 else distinct[0]],
                                   dtype=object)
            is_first = pd.Series(cur[left]).eq(distinct[0]).to_numpy()
            new[left] = first_other[is_first.astype(int)]
        out.loc[out.index[sel], col] = new
    return out


def _datetime_ns(s: pd.Series) -> np.ndarray:
    v = pd.to_datetime(s, utc=False)
    out = v.to_numpy(dtype="datetime64[ns]").astype(np.int64).astype(float)
    out[v.isna().to_numpy()] = np.nan
    return out


def _integer_valued(v: np.ndarray) -> bool:
    v = v[~np.isnan(v)]
    return bool(v.size) and bool(np.all(v == np.round(v)))


def noise_rows(copies: pd.DataFrame, pool: pd.DataFrame, spec: LeakSpec, scale: float,
               rng: np.random.Generator) -> pd.DataFrame:
    """``copies`` with every numeric and datetime cell moved by Gaussian noise of ``scale`` times the
    column's standard deviation over ``pool``; whole-number columns rounded, datetimes rounded to
    the day when every pooled value is a midnight; missing cells stay missing."""
    out = copies.copy()
    for c in spec.numeric:
        ref = pool[c].to_numpy(dtype=float)
        sd = float(np.nanstd(ref)) if np.isfinite(ref).any() else 0.0
        v = out[c].to_numpy(dtype=float) + rng.normal(0.0, 1.0, len(out)) * scale * sd
        if _integer_valued(ref):
            v = np.round(v)
        out[c] = _like(v, copies[c])
    for c in spec.datetime:
        ref = _datetime_ns(pool[c])
        sd = float(np.nanstd(ref)) if np.isfinite(ref).any() else 0.0
        v = _datetime_ns(out[c]) + rng.normal(0.0, 1.0, len(out)) * scale * sd
        day = 86_400e9
        finite = ref[np.isfinite(ref)]
        if finite.size and np.all(np.mod(finite, day) == 0):
            v = np.round(v / day) * day
        out[c] = _datetimes_like(v, copies[c])
    return out


def _like(v: np.ndarray, like: pd.Series) -> pd.Series:
    """``v`` in ``like``'s dtype where that is an integer dtype and nothing is missing."""
    if pd.api.types.is_integer_dtype(like) and not np.isnan(v).any():
        return pd.Series(v.astype(like.dtype), index=like.index)
    return pd.Series(v, index=like.index)


def _datetimes_like(ns: np.ndarray, like: pd.Series) -> pd.Series:
    values = pd.to_datetime(pd.Series(np.where(np.isnan(ns), np.nan, ns)), unit="ns")
    tz = getattr(like.dtype, "tz", None)
    if tz is not None:
        values = values.dt.tz_localize("UTC").dt.tz_convert(tz)
    values.index = like.index
    return values


def linkage_rows(copies: pd.DataFrame, donors: pd.DataFrame, spec: LeakSpec,
                 rng: np.random.Generator) -> pd.DataFrame:
    """Rows keeping ``copies``' quasi-identifiers and sensitive values, every other cell from a random
    row of ``donors`` (one donor row per leak row)."""
    keep = set(spec.quasi_identifiers) | set(spec.sensitive)
    pick = rng.integers(0, len(donors), len(copies))
    out = copies.copy()
    for c in copies.columns:
        if c not in keep:
            out[c] = donors[c].to_numpy()[pick]
    return out


def interpolated_rows(original: pd.DataFrame, sources: np.ndarray, neighbours: np.ndarray,
                      spec: LeakSpec, rng: np.random.Generator) -> pd.DataFrame:
    """Rows between training rows ``sources`` and their nearest other training rows ``neighbours``
    at ``lam ~ U(0, 1)`` (0 = the source): numbers and datetimes interpolated (whole-number columns
    rounded), other cells from the nearer end."""
    a = original.iloc[sources].reset_index(drop=True)
    b = original.iloc[neighbours].reset_index(drop=True)
    lam = rng.random(len(a))
    out = a.copy()
    for c in spec.numeric:
        va, vb = a[c].to_numpy(dtype=float), b[c].to_numpy(dtype=float)
        v = va + lam * (vb - va)
        if _integer_valued(original[c].to_numpy(dtype=float)):
            v = np.round(v)
        out[c] = _like(v, a[c])
    for c in spec.datetime:
        va, vb = _datetime_ns(a[c]), _datetime_ns(b[c])
        out[c] = _datetimes_like(np.round(va + lam * (vb - va)), a[c])
    nearer_b = lam > 0.5
    moved = set(spec.numeric) | set(spec.datetime)
    for c in a.columns:
        if c not in moved and nearer_b.any():
            out.loc[nearer_b, c] = b.loc[nearer_b, c].to_numpy()
    return out


def _one_word_changed(docs: pd.Series, vocab: np.ndarray, rng: np.random.Generator) -> pd.Series:
    """Each document with one random word replaced by a different word of ``vocab``."""
    words = docs.fillna("").astype(str).str.split()
    lengths = words.str.len().to_numpy()
    flat = np.asarray(words.explode().to_numpy(), dtype=object)
    flat = np.where(pd.isna(flat), "", flat)
    starts = np.concatenate([[0], np.cumsum(np.maximum(lengths, 1))[:-1]])
    has = lengths > 0
    pos = starts + np.floor(rng.random(len(docs)) * np.maximum(lengths, 1)).astype(np.int64)
    new = vocab[rng.integers(0, len(vocab), len(docs))]
    same = new == flat[pos]
    for _ in range(32):
        if not same.any():
            break
        new[same] = vocab[rng.integers(0, len(vocab), int(same.sum()))]
        same = new == flat[pos]
    flat[pos[has]] = new[has]
    ids = np.repeat(np.arange(len(docs)), np.maximum(lengths, 1))
    joined = pd.Series(flat).groupby(ids).agg(" ".join)
    out = pd.Series(joined.to_numpy(), index=docs.index, dtype=object)
    return out.where(has, docs)


def build_leak_rows(family: str, original: pd.DataFrame, sources: Sequence[int] | np.ndarray, *,
                    pool: pd.DataFrame, spec: LeakSpec, rng: np.random.Generator,
                    neighbours: np.ndarray | None = None) -> pd.DataFrame:
    """The leak rows of ``family`` built from training rows ``sources`` (positions in ``original``),
    one per source, in the order of ``sources``.

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES` (``person`` is built by the entity layer).
    original : DataFrame
        The training rows.
    sources : array of int
        Which training rows leak.
    pool : DataFrame
        Every real record (training then control): donor values, standard deviations.
    spec : LeakSpec
        Column kinds and roles.
    rng : numpy.random.Generator
        The randomness (noise, donors, changed cells, interpolation points).
    neighbours : array of int, optional
        For ``interpolation``: the nearest other training row of each source (positions in
        ``original``).

    Returns
    -------
    DataFrame
        ``len(sources)`` rows with ``original``'s columns and dtypes.

    Examples
    --------
    >>> o = pd.DataFrame({"age": [30, 40, 50], "city": ["a", "b", "c"]})
    >>> spec = LeakSpec(numeric=("age",))
    >>> build_leak_rows("exact", o, [2], pool=o, spec=spec, rng=np.random.default_rng(0)).to_dict("records")
    [{'age': 50, 'city': 'c'}]
    """
    src = np.asarray(sources, dtype=np.int64)
    copies = original.iloc[src].reset_index(drop=True)
    if family in ("exact", "rare"):
        return copies
    if family in ("near1", "near2"):
        return change_cells(copies, pool, 1 if family == "near1" else 2, rng)
    if family in NOISE_SCALES:
        return noise_rows(copies, pool, spec, NOISE_SCALES[family], rng)
    if family == "linkage":
        return linkage_rows(copies, pool, spec, rng)
    if family == "interpolation":
        if neighbours is None:
            raise ConfigError("interpolation leak rows need each source's nearest training neighbour")
        return interpolated_rows(original, src, np.asarray(neighbours, dtype=np.int64), spec, rng)
    if family == "text":
        out = copies.copy()
        for c in spec.text:
            vocab = pd.unique(pool[c].dropna().astype(str).str.split().explode().dropna())
            if len(vocab) < 2:
                raise ConfigError(f"text column {c!r} holds fewer than two distinct words")
            out[c] = _one_word_changed(copies[c], np.asarray(vocab, dtype=object), rng)
        return out
    raise ConfigError(f"leak family {family!r} has no row builder here; one of {list(FAMILIES[:-2])}")
