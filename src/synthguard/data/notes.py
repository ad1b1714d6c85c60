"""The notes a run keeps on how it normalised a column's values (``inferred_metadata.<column>.normalised``),
worded once for one process (:mod:`synthguard.data.coltypes`, :mod:`synthguard.data.quirks`,
:mod:`synthguard.data.tables`) and for a cluster (:func:`synthguard.distributed._tables.normalisation_notes`).

Examples
--------
>>> whitespace_note(2, "a.csv")
'surrounding whitespace stripped from 2 value(s) in a.csv'
>>> boolean_note(["no", "yes"], "a.csv")
'values no/yes in a.csv read as booleans True/False'
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["boolean_note", "decimal_note", "float32_note", "nfc_note", "whitespace_note"]


def decimal_note(label: str) -> str:
    """A table's decimal values read as numbers."""
    return f"decimal values in {label} read as numbers"


def nfc_note(label: str) -> str:
    """A table's text NFC-normalised."""
    return f"text in {label} NFC-normalised (accents written as one code point)"


def float32_note(labels: Iterable[str]) -> str:
    """The tables holding float32 values; every table's numbers compared at float32 precision."""
    return (f"float32 values in {', '.join(labels)}: numbers of every table compared at float32 "
            "precision (shortest decimal form)")


def whitespace_note(count: int, label: str) -> str:
    """``count`` values of a table stripped of surrounding whitespace."""
    return f"surrounding whitespace stripped from {count} value(s) in {label}"


def boolean_note(spelled: Iterable[str], label: str) -> str:
    """A table's boolean spellings (sorted, lower case) read as booleans."""
    return f"values {'/'.join(spelled)} in {label} read as booleans True/False"
