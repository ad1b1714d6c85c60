"""Data in: loading files or frames, the schema (sdtypes and roles), validation, fingerprints."""

from .loading import load_metadata, load_table
from .schema import SDTYPES, ColumnSpec, Schema, infer_schema
from .tables import Tables, prepare_tables

__all__ = ["SDTYPES", "ColumnSpec", "Schema", "Tables", "infer_schema", "load_metadata", "load_table",
           "prepare_tables"]
