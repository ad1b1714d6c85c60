"""Schema: one sdtype and role per column, from SynEval-style metadata or inferred from the data.

Metadata shape (SynEval style)::

    {"columns": {name: {"sdtype": "numerical" | "categorical" | "datetime" | "boolean" | "text" | "id",
                        "pii": bool}},
     "quasi_identifiers": [...], "sensitive": [...], "text_columns": [...],
     "target": name, "primary_key": name}
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError

SDTYPES = ("numerical", "categorical", "datetime", "boolean", "text", "id")
_SDTYPE_ALIASES = {"numeric": "numerical", "number": "numerical", "continuous": "numerical",
                   "discrete": "categorical", "ordinal": "categorical", "category": "categorical",
                   "bool": "boolean", "date": "datetime", "string": "categorical"}
#: spellings of booleans read as True/False (compared case-folded, surrounding spaces stripped)
BOOLEAN_PAIRS = (("true", "false"), ("yes", "no"), ("y", "n"), ("t", "f"))
BOOLEAN_VALUES = {"true": True, "false": False, "yes": True, "no": False, "y": True, "n": False,
                  "t": True, "f": False, "1": True, "0": False, "1.0": True, "0.0": False}
_ID_NAME = re.compile(r"(^|_|\b)(id|uuid|key|identifier)($|_|\b)", re.IGNORECASE)
#: the reasons :func:`infer_sdtype` gives for an identifier found by its name and unique values
ID_INTEGERS_REASON = "unique integers in a column named like an identifier"
ID_VALUES_REASON = "unique values in a column named like an identifier"
#: a text column of this many values or fewer is never inferred an identifier by its name
ID_MIN_TEXT_VALUES = 20


def named_like_id(name: object) -> bool:
    """Whether a column's name reads as an identifier (``id``, ``user_id``, ``uuid``, ``key``...)."""
    return bool(_ID_NAME.search(str(name) or ""))


@dataclass(frozen=True)
class ColumnSpec:
    """One column's sdtype, PII flag and whether the sdtype was inferred (and why)."""

    name: str
    sdtype: str
    pii: bool = False
    inferred: bool = False
    reason: str = ""
    #: strptime format of a datetime column (metadata key ``datetime_format``, SDV style)
    datetime_format: str | None = None
    #: unit of numeric epochs in a datetime column (metadata key ``unit``: s, ms, us or ns)
    unit: str | None = None

    @property
    def is_numeric(self) -> bool:
        """Numerical and datetime columns are compared by distance; the rest by equality."""
        return self.sdtype in ("numerical", "datetime")


@dataclass(frozen=True)
class Schema:
    """Column sdtypes and roles for one evaluation."""

    columns: Mapping[str, ColumnSpec]
    quasi_identifiers: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    text_columns: tuple[str, ...] = ()
    target: str | None = None
    primary_key: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(self.columns)

    def sdtype(self, column: str) -> str:
        return self.columns[column].sdtype

    def of_type(self, *sdtypes: str) -> list[str]:
        return [c for c, s in self.columns.items() if s.sdtype in sdtypes]

    def tabular_columns(self) -> list[str]:
        """Columns that take part in row distances and matching: everything but text and id columns."""
        return [c for c, s in self.columns.items() if s.sdtype not in ("text", "id")]

    def inferred(self) -> dict[str, dict[str, str]]:
        """``{column: {"sdtype", "reason"}}`` for every sdtype that was inferred, for the report."""
        return {c: {"sdtype": s.sdtype, "reason": s.reason} for c, s in self.columns.items() if s.inferred}

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": {c: {"sdtype": s.sdtype, "pii": s.pii} for c, s in self.columns.items()},
            "quasi_identifiers": list(self.quasi_identifiers),
            "sensitive": list(self.sensitive),
            "text_columns": list(self.text_columns),
            "target": self.target,
            "primary_key": self.primary_key,
        }

    def restrict(self, columns: Iterable[str]) -> Schema:
        keep = list(columns)
        return replace(self, columns={c: self.columns[c] for c in keep},
                       quasi_identifiers=tuple(c for c in self.quasi_identifiers if c in keep),
                       sensitive=tuple(c for c in self.sensitive if c in keep),
                       text_columns=tuple(c for c in self.text_columns if c in keep))


def infer_sdtype(series: pd.Series) -> tuple[str, str]:
    """Guess the sdtype of one column; returns ``(sdtype, reason)``."""
    s = series.dropna()
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean", "bool dtype"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime", "datetime dtype"
    if pd.api.types.is_numeric_dtype(dtype):
        if (pd.api.types.is_integer_dtype(dtype) and len(s) > 1 and s.is_unique
                and named_like_id(series.name)):
            return "id", ID_INTEGERS_REASON
        return "numerical", f"numeric dtype ({dtype})"
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical", "pandas category dtype"
    if len(s) == 0:
        return "categorical", "no values"
    # the distinct count only when the sample decides nothing
    return text_sample_sdtype(text_sample(s)) or values_sdtype(series.name, len(s), int(s.nunique()))


#: how many non-missing values of a text column :func:`infer_sdtype` reads: a seeded sample
TEXT_SAMPLE = 2000


def reads_as_text(dtype: Any) -> bool:
    """Whether :func:`infer_sdtype` types a column of ``dtype`` by its values as text (not by its
    dtype: booleans, dates, numbers, pandas categories)."""
    return not (pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_datetime64_any_dtype(dtype)
                or pd.api.types.is_numeric_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype))


def text_sample_positions(n: int) -> np.ndarray | None:
    """The positions, among the ``n`` non-missing values of a text column (in table order), of the
    values :func:`infer_sdtype` reads, in the order it reads them (``Series.sample(2000,
    random_state=0)``'s); ``None``: every value, in table order (``n`` is at most
    :data:`TEXT_SAMPLE`). A function of ``n`` alone, so a cluster picks the same values from its
    partitions.

    Examples
    --------
    >>> text_sample_positions(5) is None, text_sample_positions(2500).shape
    (True, (2000,))
    """
    if n <= TEXT_SAMPLE:
        return None
    return _drawn_positions(n).copy()


@lru_cache(maxsize=4)
def _drawn_positions(n: int) -> np.ndarray:
    """:func:`text_sample_positions` of ``n`` values, drawn once per ``n``: the legacy draw without
    replacement shuffles all ``n`` positions (about 0.7 CPU s at 10 million), and every text column
    of a table (and the tables of equal size) has the same ``n`` when nothing is missing."""
    return np.random.RandomState(0).choice(n, TEXT_SAMPLE, replace=False).astype(np.int64)


def sample_strings(values: pd.Series) -> pd.Series:
    """Non-missing values of a text column as the text :func:`text_facts` reads (surrounding
    whitespace stripped)."""
    return values.astype(str).str.strip()


def text_sample(present: pd.Series) -> pd.Series:
    """The sample :func:`infer_sdtype` reads from a text column: its non-missing values
    ``present`` (in table order) at :func:`text_sample_positions`, in that order, as
    :func:`sample_strings` gives them, indexed ``0..n-1``. A cluster gathers the same strings
    from its partitions (:func:`synthguard.distributed._tables.whole_text_samples`) and decides
    with :func:`text_sample_sdtype` on them.

    Examples
    --------
    >>> text_sample(pd.Series([" a", "b "], index=[5, 7])).tolist()
    ['a', 'b']
    """
    pos = text_sample_positions(len(present))
    return sample_strings(present if pos is None else present.iloc[pos]).reset_index(drop=True)


def text_sample_sdtype(sample: pd.Series) -> tuple[str, str] | None:
    """The sdtype (and reason) :func:`infer_sdtype` reads from a text column's whole sample
    (:func:`text_sample`): booleans, free text or dates (:func:`sample_sdtype` on its
    :func:`text_facts`; dates of no fixed kind parsed in one call over the whole sample, since
    pandas 3 infers one resolution from all the values parsed together); ``None`` when none fits.

    Examples
    --------
    >>> text_sample_sdtype(pd.Series(["yes", "No"]))
    ('boolean', 'only the values yes/no (read as booleans)')
    >>> text_sample_sdtype(pd.Series(["a", "b", "c"])) is None
    True
    """
    facts = text_facts(sample)
    if facts.dates_undecided:
        from .dates import parse_like_first

        facts = replace(facts, parsed=parse_like_first(sample))
    return sample_sdtype(facts)


@dataclass(frozen=True)
class TextFacts:
    """What :func:`infer_sdtype` reads from the sampled values of a text column
    (:func:`text_facts`)."""

    #: sampled values
    values: int
    #: their distinct lower-case spellings when at most two, else ``None`` (no boolean pair)
    lowered: frozenset[str] | None
    #: words (whitespace-separated) over the values
    words: int
    #: the sorted distinct 64-bit hashes of the values (:func:`~synthguard.data.hashing.value_hashes`)
    distinct: np.ndarray
    #: every value holds a digit and one of ``- / : .``
    dated: bool
    #: every value is ISO 8601 / ``a/b/yyyy`` (:func:`~synthguard.data.dates.date_kinds`)
    iso: bool
    dmy: bool
    #: every value parses as a date with the format pandas guesses from the sample's first value,
    #: the whole sample parsed at once (:func:`~synthguard.data.dates.parse_like_first`); ``None``
    #: until asked
    parsed: bool | None = None

    @property
    def dates_undecided(self) -> bool:
        """Whether the datetime rule needs :attr:`parsed` (dated values of no fixed kind)."""
        return self.dated and not (self.iso or self.dmy) and self.parsed is None


def text_facts(sample: pd.Series) -> TextFacts:
    """The :class:`TextFacts` of the sampled values of a text column, as :func:`sample_strings`
    gives them (:attr:`TextFacts.parsed` left unasked)."""
    from .hashing import value_hashes

    if not len(sample):
        return TextFacts(0, frozenset(), 0, np.zeros(0, dtype=np.uint64), True, True, True)
    low = set(sample.str.lower().unique())
    dated = bool(sample.str.contains(r"\d").all() and sample.str.contains(r"[-/:.]").all())
    iso = dmy = False
    if dated:
        from .dates import date_kinds

        iso, dmy = date_kinds(sample)
    return TextFacts(len(sample), frozenset(low) if len(low) <= 2 else None,
                     int(sample.str.split().str.len().sum()),
                     value_hashes(pd.Series(sample.to_numpy(dtype=object), dtype=object)), dated, iso, dmy)


def sample_sdtype(facts: TextFacts) -> tuple[str, str] | None:
    """The sdtype :func:`infer_sdtype` reads from a text column's sampled values (boolean, free
    text, dates), with its reason; ``None`` when none fits (then :func:`values_sdtype`)."""
    if facts.lowered:
        for pair in BOOLEAN_PAIRS:
            if facts.lowered <= set(pair):
                return "boolean", f"only the values {'/'.join(pair)} (read as booleans)"
    mean = facts.words / facts.values
    if mean >= 5 and facts.distinct.size > 0.5 * facts.values:
        return "text", f"free text (mean {mean:.1f} words per value)"
    if facts.dated:
        if facts.dates_undecided:
            raise ValueError("sample_sdtype: the parse of the sampled dates was not asked for")
        if facts.iso or facts.dmy or facts.parsed:
            return "datetime", "every value parses as a date/time (one format for the column)"
    return None


def values_sdtype(name: object, n_values: int, n_distinct: int) -> tuple[str, str]:
    """The sdtype of a text column whose sampled values are not booleans, free text nor dates: an
    identifier when named like one with ``n_values`` (more than :data:`ID_MIN_TEXT_VALUES`) unique
    values, else categorical."""
    if n_distinct == n_values and n_values > ID_MIN_TEXT_VALUES and named_like_id(name):
        return "id", ID_VALUES_REASON
    return "categorical", text_values_reason(n_distinct)


def text_values_reason(n_distinct: int) -> str:
    """The reason :func:`infer_sdtype` gives for a categorical column of ``n_distinct`` values."""
    return f"text values ({n_distinct} distinct)"


# SDV's semantic sdtypes (personal data recognised by SDV / Faker): compared by equality like
# categories, and flagged PII
SDV_PII_SDTYPES = frozenset("""address administrative_unit city country country_code email first_name
last_name name phone_number postcode zipcode state state_abbr street_address ssn iban swift11 swift8
credit_card_number license_plate ipv4_address ipv6_address mac_address company job user_name
latitude longitude""".split())


def _normalise_sdtype(value: Any, column: str, label: str) -> str:
    sd = str(value).strip().lower()
    sd = _SDTYPE_ALIASES.get(sd, sd)
    if sd in SDV_PII_SDTYPES:
        return "categorical"
    if sd not in SDTYPES:
        raise InputError(f"metadata {label}: column {column!r} has unknown sdtype {value!r}; "
                         f"use one of {', '.join(SDTYPES)}")
    return sd


def _as_list(value: Any, key: str, label: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    raise InputError(f"metadata {label}: {key!r} must be a list of column names, got {type(value).__name__}")


def infer_schema(frame: pd.DataFrame, metadata: Mapping[str, Any] | None = None,
                 label: str = "metadata") -> Schema:
    """Build the schema of ``frame`` (the original table) from metadata, inferring what is missing.

    Parameters
    ----------
    frame : DataFrame
        The original data; sdtypes not given in the metadata are inferred from it.
    metadata : mapping, optional
        SynEval-style metadata. Columns it names must exist in ``frame``.
    label : str
        Where the metadata came from, for error messages.
    """
    metadata = sdv_to_syneval(dict(metadata or {}), label)
    declared = metadata.get("columns") or {}
    if not isinstance(declared, Mapping):
        raise InputError(f"metadata {label}: 'columns' must be an object {{name: {{'sdtype': ...}}}}")
    unknown = [c for c in declared if c not in frame.columns]
    if unknown:
        raise InputError(f"metadata {label} names column(s) {', '.join(map(repr, unknown))} that the "
                         f"original data does not have: fix the names or remove them from the metadata"
                         + case_hint(unknown, list(frame.columns)))
    text_cols = _as_list(metadata.get("text_columns"), "text_columns", label)
    specs: dict[str, ColumnSpec] = {}
    for col in frame.columns:
        info = declared.get(col)
        if info is not None and not isinstance(info, Mapping):
            info = {"sdtype": info}
        if info and info.get("sdtype"):
            sd = _normalise_sdtype(info["sdtype"], col, label)
            pii = bool(info.get("pii", str(info["sdtype"]).strip().lower() in SDV_PII_SDTYPES))
            fmt, unit = info.get("datetime_format"), info.get("unit")
            if unit is not None and str(unit) not in EPOCH_UNITS:
                raise InputError(f"metadata {label}: column {col!r} has unit {unit!r}; use one of "
                                 f"{', '.join(EPOCH_UNITS)} (seconds, milli-, micro-, nanoseconds)")
            specs[col] = ColumnSpec(col, sd, pii, datetime_format=str(fmt) if fmt else None,
                                    unit=str(unit) if unit else None)
        elif col in text_cols:
            specs[col] = ColumnSpec(col, "text", bool((info or {}).get("pii", False)))
        else:
            sd, reason = infer_sdtype(frame[col])
            specs[col] = ColumnSpec(col, sd, bool((info or {}).get("pii", False)), inferred=True,
                                    reason=reason)
    roles: dict[str, list[str]] = {}
    for key in ("quasi_identifiers", "sensitive", "text_columns"):
        names = _as_list(metadata.get(key), key, label)
        missing = [c for c in names if c not in frame.columns]
        if missing:
            raise InputError(f"metadata {label}: {key} names column(s) {', '.join(map(repr, missing))} "
                             "that the data does not have: fix the names"
                             + case_hint(missing, list(frame.columns)))
        roles[key] = list(dict.fromkeys(names))  # a name listed twice counts once (warned)
    texts = text_columns_of(roles["text_columns"], specs)
    for key in ("target", "primary_key"):
        val = metadata.get(key)
        if val is not None and val not in frame.columns:
            raise InputError(f"metadata {label}: {key} {val!r} is not a column of the data: fix the name")
    extra = {k: v for k, v in metadata.items()
             if k not in {"columns", "quasi_identifiers", "sensitive", "text_columns", "target", "primary_key"}}
    return Schema(columns=specs, quasi_identifiers=tuple(roles["quasi_identifiers"]),
                  sensitive=tuple(roles["sensitive"]), text_columns=texts,
                  target=metadata.get("target"), primary_key=metadata.get("primary_key"), extra=extra)


EPOCH_UNITS = ("s", "ms", "us", "ns")


def text_columns_of(declared: Sequence[str], specs: Mapping[str, ColumnSpec]) -> tuple[str, ...]:
    """A schema's ``text_columns``: the declared ones in their order, then every other column
    typed ``text`` in column order (one rule for one process and a cluster, which types columns
    again after its first partitions).

    Examples
    --------
    >>> specs = {"a": ColumnSpec("a", "text"), "b": ColumnSpec("b", "categorical"),
    ...          "c": ColumnSpec("c", "text")}
    >>> text_columns_of(["b"], specs)
    ('b', 'a', 'c')
    """
    return tuple(dict.fromkeys([*declared, *(c for c, s in specs.items() if s.sdtype == "text")]))


def declared_text_columns(metadata: Any) -> list[str]:
    """The ``text_columns`` a metadata mapping declares (a name once; none for no metadata or a
    :class:`Schema`, whose ``text_columns`` are its own)."""
    if not isinstance(metadata, Mapping):
        return []
    return list(dict.fromkeys(_as_list(metadata.get("text_columns"), "text_columns", "metadata")))


def case_hint(names: list[str], columns: list[str]) -> str:
    """`` (the names differ only in case ...: 'Age' vs 'age'; ...)`` when some of ``names`` match a
    column of ``columns`` once case and surrounding spaces are ignored, else ``""``."""
    key = {str(c).strip().casefold(): c for c in columns}
    pairs = [(n, key[str(n).strip().casefold()]) for n in names if str(n).strip().casefold() in key]
    if not pairs:
        return ""
    shown = ", ".join(f"{a!r} vs {b!r}" for a, b in pairs[:3])
    return f" (the names differ only in case or surrounding spaces: {shown}; rename them to match)"


#: top-level metadata keys synthguard reads (SynEval, SDV single/multi-table and sequential,
#: entity-level and verdict keys); anything else is kept under ``Schema.extra`` and warned about
KNOWN_KEYS = frozenset({
    "columns", "quasi_identifiers", "sensitive", "text_columns", "target", "primary_key",
    "release_type", "entity_key", "sequence_key", "sequence_index", "context", "context_columns",
    "tables", "relationships", "METADATA_SPEC_VERSION", "alternate_keys", "fields"})
#: per-column keys synthguard reads, and SDV's column keys it accepts without using
COLUMN_KEYS = frozenset({"sdtype", "pii", "datetime_format", "unit", "type", "computer_representation",
                         "regex_format", "order", "order_by"})


def _did_you_mean(key: str, known: frozenset[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def metadata_warnings(metadata: Mapping[str, Any] | None, label: str = "metadata") -> list[str]:
    """One warning per metadata key synthguard does not know (a typo such as
    ``quasi_identifer`` would otherwise be ignored silently), with the closest known key. Unknown
    per-column keys are warned about only when they look like a typo of a known one (SDV files
    carry keys of their own)."""
    if not metadata:
        return []
    meta = sdv_to_syneval(dict(metadata), label)
    warns = [f"metadata {label}: unknown key {k!r} ignored{_did_you_mean(str(k), KNOWN_KEYS)}"
             for k in meta if k not in KNOWN_KEYS]
    for key in ("quasi_identifiers", "sensitive", "text_columns"):
        names = meta.get(key)
        if isinstance(names, (list, tuple)):
            twice = [n for n, k in pd.Series([str(n) for n in names]).value_counts(sort=False).items() if k > 1]
            warns += [f"metadata {label}: {key} lists column {n!r} twice: read once" for n in twice]
    cols = meta.get("columns")
    if isinstance(cols, Mapping):
        for col, info in cols.items():
            if not isinstance(info, Mapping):
                continue
            for k in info:
                if k not in COLUMN_KEYS and _did_you_mean(str(k), COLUMN_KEYS):
                    warns.append(f"metadata {label}: column {col!r}: unknown key {k!r} ignored"
                                 f"{_did_you_mean(str(k), COLUMN_KEYS)}")
    return warns


def nfc_metadata(metadata: dict[str, Any] | None) -> dict[str, Any] | None:
    """``metadata`` (a private copy) with every column name NFC-normalised, like the tables'
    headers: a name typed in another Unicode form still names the column."""
    import unicodedata

    if not metadata:
        return metadata

    def nfc(v: Any) -> Any:
        return unicodedata.normalize("NFC", v) if isinstance(v, str) else v

    out = dict(metadata)
    if isinstance(out.get("columns"), Mapping):
        cols: dict[Any, Any] = {}
        for k, v in out["columns"].items():
            if nfc(k) in cols:
                raise InputError(f"metadata declares column {nfc(k)!r} twice (the two names differ only in "
                                 "their Unicode form, e.g. an accent typed as two code points): keep one of "
                                 "them")
            cols[nfc(k)] = v
        out["columns"] = cols
    for key in ("quasi_identifiers", "sensitive", "text_columns"):
        if isinstance(out.get(key), (list, tuple)):
            out[key] = [nfc(v) for v in out[key]]
        elif isinstance(out.get(key), str):
            out[key] = nfc(out[key])
    for key in ("target", "primary_key", "entity_key", "sequence_key"):
        if isinstance(out.get(key), str):
            out[key] = nfc(out[key])
    return out


def sdv_to_syneval(metadata: dict[str, Any], label: str = "metadata") -> dict[str, Any]:
    """Accept SDV metadata as it is: single-table (``METADATA_SPEC_VERSION``, ``columns`` with
    ``sdtype``, ``primary_key``) and a multi-table file holding exactly one table. The SDV keys
    synthguard does not use (``alternate_keys``, ``relationships``...) are kept under ``extra``."""
    tables = metadata.get("tables")
    if "METADATA_SPEC_VERSION" in metadata and isinstance(tables, Mapping) and "columns" not in metadata:
        if len(tables) != 1:
            raise InputError(f"metadata {label} is SDV multi-table metadata with {len(tables)} tables "
                             f"({', '.join(map(str, tables))}): give the metadata of the one table "
                             "evaluated (its entry under 'tables')")
        inner = dict(next(iter(tables.values())))
        rest = {k: v for k, v in metadata.items() if k != "tables"}
        return {**rest, **inner}
    return metadata


def numeric_view(series: pd.Series) -> np.ndarray:
    """Float64 values of a numerical or datetime column (datetimes as days since 1970-01-01; NaT -> NaN)."""
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        s = series
        if getattr(s.dt, "tz", None) is not None:
            s = s.dt.tz_convert("UTC").dt.tz_localize(None)
        ns = s.astype("datetime64[ns]").to_numpy().astype("int64").astype("float64")
        ns[s.isna().to_numpy()] = np.nan
        return ns / 86_400e9
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.astype("float64").to_numpy()
    return pd.to_numeric(series, errors="coerce").astype("float64").to_numpy()
