"""Reading tables (CSV, Parquet or DataFrame) and metadata (JSON or YAML), with precise errors."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError

TableLike = pd.DataFrame | str | Path

#: keyword arguments every ``pd.read_csv`` of synthguard passes: pandas 2's default decimal parser
#: can be one unit in the last place off the correctly rounded float (e.g. ``-2.3025850929940455``),
#: pandas 3 always rounds correctly (and deprecates the option); asking pandas 2 for the correctly
#: rounded parser makes the same file give the same floats, hence the same results, on both.
CSV_FLOAT_KW: dict[str, str] = ({"float_precision": "round_trip"}
                                if int(pd.__version__.split(".", 1)[0]) < 3 else {})


def load_table(source: TableLike, name: str, *, as_text: bool = False) -> tuple[pd.DataFrame, str]:
    """Load one input table.

    Parameters
    ----------
    source : DataFrame, str, Path or source
        A DataFrame (copied, never mutated), a path ending in ``.csv``, ``.csv.gz``, ``.tsv``,
        ``.parquet`` or ``.pq``, or what :mod:`synthguard.data.sources` reads (a Parquet folder,
        glob or URL, ``sql:``/``table:`` sources), typed from its schema.
    name : str
        The role of the table (``"original"``, ``"synthetic"``, ``"control"``), used in messages.
    as_text : bool
        Read a CSV's values as text (missing values stay missing), for one typing decision over
        every table (:func:`synthguard.data.coltypes.decide_types`); otherwise pandas types the
        columns of the whole file at once (never chunk by chunk).

    Returns
    -------
    frame : DataFrame
        A private copy of the data.
    label : str
        A human label for messages: the file path, or ``"<name> DataFrame"``.
    """
    if isinstance(source, pd.DataFrame):
        return source.copy(deep=True), f"{name} DataFrame"
    from .sources import is_source, read_source

    if is_source(source):  # a Parquet folder, glob or URL; a database table or query
        return read_source(source, name)
    if not isinstance(source, (str, Path)):
        raise InputError(f"{name}: expected a pandas DataFrame or a file path, got {type(source).__name__}")
    path = Path(source)
    label = str(path)
    if not path.exists():
        raise InputError(f"{name} file {label} does not exist: check the path")
    if path.is_dir():
        raise InputError(f"{name} file {label} is a directory: give a .csv or .parquet file")
    suffixes = "".join(path.suffixes[-2:]).lower()
    suffix = path.suffix.lower()
    try:
        if suffix in {".csv", ".txt", ".tsv"} or suffixes.endswith(".csv.gz"):
            _check_utf8(path, f"{name} file {label}", quick=True)
            head = _head_lines(path)
            sep = "\t" if suffix == ".tsv" else sniff_delimiter(head)
            _check_header(head, sep, name, label)
            if as_text:
                frame = pd.read_csv(path, sep=sep, dtype=str, low_memory=False)
            else:
                frame = pd.read_csv(path, sep=sep, low_memory=False, **CSV_FLOAT_KW)
            _check_single_column(frame, sep, name, label)
        elif suffix in {".parquet", ".pq"}:
            try:
                frame = pd.read_parquet(path)
            except ImportError as exc:
                raise InputError(f"{name} file {label}: reading Parquet needs pyarrow; "
                                 "install it with: pip install pyarrow") from exc
        else:
            raise InputError(f"{name} file {label}: unknown file type {path.suffix or '(none)'!r}; "
                             "use .csv, .tsv or .parquet")
    except InputError:
        raise
    except pd.errors.EmptyDataError as exc:
        raise InputError(f"{name} file {label} is empty: it has no header and no rows") from exc
    except UnicodeDecodeError as exc:
        _check_utf8(path, f"{name} file {label}")
        raise InputError(f"{name} file {label} is not UTF-8 text: is it really a CSV? "
                         "Re-save it as UTF-8 CSV or Parquet") from exc
    except (pd.errors.ParserError, OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{name} file {label} could not be read ({first}): check that it is a "
                         f"valid {suffix.lstrip('.') or 'data'} file") from exc
    return frame, label


def _check_utf8(path: Path, what: str, quick: bool = False) -> None:
    """An :class:`InputError` naming the file's encoding and the fix when it is UTF-16/32 (from its
    first bytes) or, unless ``quick``, Latin-1 (from its first line that is not UTF-8)."""
    from .charset import HEAD, not_utf8, sniff_utf16_32

    if quick:
        opener = gzip.open if path.suffix.lower() == ".gz" else open
        with opener(path, "rb") as fh:
            if sniff_utf16_32(fh.read(HEAD)) is None:
                return
    reason = not_utf8(path, what)
    if reason is not None:
        raise InputError(reason)


def is_text_file(path: Path) -> bool:
    """Whether ``path`` names a delimited text file (``.csv``, ``.tsv``, ``.txt``, ``.csv.gz``)."""
    return path.suffix.lower() in {".csv", ".txt", ".tsv"} or "".join(path.suffixes[-2:]).lower().endswith(".csv.gz")


_DELIMITERS = (";", "\t", "|")


def _head_lines(path: Path, n: int = 50) -> list[str]:
    """The first ``n`` lines of a (possibly gzipped) text file, decoded as UTF-8."""
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    lines: list[str] = []
    with opener(path, "rt", encoding="utf-8-sig", newline="") as fh:
        for line in fh:
            lines.append(line.rstrip("\r\n"))
            if len(lines) >= n:
                break
    return [ln for ln in lines if ln.strip()]


def sniff_delimiter(lines: list[str]) -> str:
    """The field separator of a delimited text file: ``,`` unless the header holds no comma and one
    of ``;``, tab or ``|`` splits the header and the first lines into the same number of fields."""
    if not lines or "," in lines[0]:
        return ","
    best, best_n = ",", 0
    for cand in _DELIMITERS:
        widths = {len(next(csv.reader([ln], delimiter=cand))) for ln in lines[:20]}
        n = len(next(csv.reader([lines[0]], delimiter=cand)))
        if n > best_n and n > 1 and widths == {n}:
            best, best_n = cand, n
    return best


def _check_header(lines: list[str], sep: str, name: str, label: str) -> None:
    """Duplicate column names are an error (pandas would silently rename the second ``age.1``)."""
    if not lines:
        return
    header = [h.strip() for h in next(csv.reader([lines[0]], delimiter=sep))]
    seen: set[str] = set()
    for h in header:
        if h in seen and h:
            raise InputError(f"{label}: column {h!r} appears more than once: rename or drop the duplicate")
        seen.add(h)


def _check_single_column(frame: pd.DataFrame, sep: str, name: str, label: str) -> None:
    if frame.shape[1] != 1:
        return
    header = str(frame.columns[0])
    found = [d for d in _DELIMITERS + (",",) if d != sep and d in header]
    if found:
        shown = {"\t": "tab", ";": "';'", "|": "'|'", ",": "','"}[found[0]]
        raise InputError(f"{name} file {label} was read as one column, but its header holds {shown}: "
                         f"is the file separated by {shown} rather than {'tab' if sep == chr(9) else repr(sep)}? "
                         "Re-save it comma-separated (or as .tsv for tabs)")


def load_metadata(source: dict[str, Any] | str | Path | None) -> dict[str, Any] | None:
    """Load SynEval-style metadata from a dict, or a JSON/YAML file. ``None`` stays ``None``."""
    if source is None:
        return None
    if isinstance(source, dict):
        return json.loads(json.dumps(source))  # deep copy, and proves it is plain JSON
    if not isinstance(source, (str, Path)):
        from ..errors import ConfigError

        raise ConfigError(f"metadata must be a mapping like {{'columns': {{name: {{'sdtype': ...}}}}}} or "
                          f"the path of a JSON/YAML file, got {type(source).__name__}")
    path = Path(source)
    if not path.exists():
        raise InputError(f"metadata file {path} does not exist: check the path")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM (Windows editors) is fine
    except UnicodeDecodeError:
        _check_utf8(path, f"metadata file {path}")
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    if "\x00" in text:
        _check_utf8(path, f"metadata file {path}", quick=True)
    try:
        if path.suffix.lower() in {".yaml", ".yml"}:
            data = _yaml_once(text)
        else:
            data = json.loads(text, object_pairs_hook=_pairs_once)
    except _Twice as exc:
        raise InputError(f"metadata file {path} names {exc.key!r} twice in one object (only one of the two "
                         "would be read): keep one of them") from None
    except Exception as exc:  # noqa: BLE001 - parser errors of two libraries
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"metadata file {path} is not valid JSON/YAML ({first}): fix its syntax") from exc
    if not isinstance(data, dict):
        raise InputError(f"metadata file {path} must hold an object with a 'columns' key, "
                         f"got {type(data).__name__}")
    return data


class _Twice(ValueError):
    """A key written twice in one JSON/YAML object."""

    def __init__(self, key: Any) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key


def _pairs_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a key written twice (``json`` keeps the last silently)."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Twice(k)
        out[k] = v
    return out


def _yaml_once(text: str) -> Any:
    """``yaml.safe_load``, refusing a key written twice in one mapping (PyYAML keeps the last)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
        loader.flatten_mapping(node)
        seen: set = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in seen:
                raise _Twice(key)
            seen.add(key)
        return loader.construct_mapping(node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass
