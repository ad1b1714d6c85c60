"""Reading tables (CSV, Parquet or DataFrame) and metadata (JSON or YAML), with precise errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError

TableLike = pd.DataFrame | str | Path


def load_table(source: TableLike, name: str) -> tuple[pd.DataFrame, str]:
    """Load one input table.

    Parameters
    ----------
    source : DataFrame, str or Path
        A DataFrame (copied, never mutated) or a path ending in ``.csv``, ``.csv.gz``, ``.tsv``,
        ``.parquet`` or ``.pq``.
    name : str
        The role of the table (``"original"``, ``"synthetic"``, ``"control"``), used in messages.

    Returns
    -------
    frame : DataFrame
        A private copy of the data.
    label : str
        A human label for messages: the file path, or ``"<name> DataFrame"``.
    """
    if isinstance(source, pd.DataFrame):
        return source.copy(deep=True), f"{name} DataFrame"
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
        if suffix in {".csv", ".txt"} or suffixes.endswith(".csv.gz"):
            frame = pd.read_csv(path)
        elif suffix == ".tsv":
            frame = pd.read_csv(path, sep="\t")
        elif suffix in {".parquet", ".pq"}:
            try:
                frame = pd.read_parquet(path)
            except ImportError as exc:
                raise InputError(f"{name} file {label}: reading Parquet needs pyarrow; "
                                 "install it with: pip install 'synthguard[parquet]'") from exc
        else:
            raise InputError(f"{name} file {label}: unknown file type {path.suffix or '(none)'!r}; "
                             "use .csv, .tsv or .parquet")
    except InputError:
        raise
    except pd.errors.EmptyDataError as exc:
        raise InputError(f"{name} file {label} is empty: it has no header and no rows") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{name} file {label} is not UTF-8 text: is it really a CSV? "
                         "Re-save it as UTF-8 CSV or Parquet") from exc
    except (pd.errors.ParserError, OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{name} file {label} could not be read ({first}): check that it is a "
                         f"valid {suffix.lstrip('.') or 'data'} file") from exc
    return frame, label


def load_metadata(source: dict[str, Any] | str | Path | None) -> dict[str, Any] | None:
    """Load SynEval-style metadata from a dict, or a JSON/YAML file. ``None`` stays ``None``."""
    if source is None:
        return None
    if isinstance(source, dict):
        return json.loads(json.dumps(source))  # deep copy, and proves it is plain JSON
    path = Path(source)
    if not path.exists():
        raise InputError(f"metadata file {path} does not exist: check the path")
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        if path.suffix.lower() in {".yaml", ".yml"}:
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # noqa: BLE001 - parser errors of two libraries
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"metadata file {path} is not valid JSON/YAML ({first}): fix its syntax") from exc
    if not isinstance(data, dict):
        raise InputError(f"metadata file {path} must hold an object with a 'columns' key, "
                         f"got {type(data).__name__}")
    return data
