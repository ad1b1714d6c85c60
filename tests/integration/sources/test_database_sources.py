"""A database table gives the same report as the CSV of the same rows (issue #31.4): PostgreSQL on a
real server started by the test session, DuckDB in process. The rows are loaded into the database
from the CSV files themselves (``COPY``), with SQL column types: TEXT, INTEGER, NUMERIC, DATE,
BOOLEAN. Only the input labels (``inputs.<role>.source``, and where a note or warning names its
table), the fingerprints (``inputs.<role>.sha256``: a file's bytes against a table's content), the timings
(``metrics.<name>.seconds``) and the reason a DATE column is a date (``inferred_metadata.<column>.
reason``: its SQL type, against every CSV value parsing as a date) may differ."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from synthguard.cli import main

DDL = """CREATE TABLE {name} ("State" TEXT, "Individuals_Affected" INTEGER, "Type_of_Breach" TEXT,
  "Location_of_Breached_Information" TEXT, breach_start DATE, breach_end DATE, year INTEGER,
  affected_k NUMERIC(12, 3), paper BOOLEAN)"""
METRICS = "exact_matches,dcr,k_anonymity,cap,quality_report"
DATES = ("breach_start", "breach_end")
META = {"quasi_identifiers": ["State", "Type_of_Breach", "year"], "sensitive": ["paper"]}


@pytest.fixture(scope="module")
def breach_files(tmp_path_factory, shared_data):
    """hhs_breaches as three CSV files: original, control, and a release of 90 verbatim copies."""
    df = pd.read_csv(shared_data / "hhs_breaches.csv", dtype=str)
    df = df[["State", "Individuals_Affected", "Type_of_Breach", "Location_of_Breached_Information",
             "breach_start", "breach_end", "year"]].copy()
    df["affected_k"] = (df["Individuals_Affected"].astype(int) / 1000).round(3).astype(str)
    df["paper"] = (df["Location_of_Breached_Information"] == "Paper").astype(str)
    idx = np.random.default_rng(3).permutation(len(df))
    orig, ctl, fresh = df.iloc[idx[:400]], df.iloc[idx[400:800]], df.iloc[idx[800:1000]]
    # the release: real rows that are in neither table (a control inside the release is refused)
    tables = {"original": orig, "control": ctl,
              "synthetic": pd.concat([fresh, orig.iloc[-90:]], ignore_index=True)}
    folder = tmp_path_factory.mktemp("breaches")
    paths = {}
    for name, frame in tables.items():
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    (folder / "meta.json").write_text(json.dumps(META))
    return folder


def _report(args: list[str], out) -> dict:
    res = CliRunner().invoke(main, ["evaluate", *args, "--metrics", METRICS, "--seed", "5", "--quiet",
                                    "--json", str(out)])
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())


def _without_sources(report: dict) -> dict:
    """The report without what a source may change: input labels (also where notes name the table
    they are about: written ``<role>``) and fingerprints, timings."""
    text = json.dumps(report)
    for role, entry in report["inputs"].items():
        text = text.replace(json.dumps(entry["source"])[1:-1], f"<{role}>")
    report = json.loads(text)
    for entry in report["inputs"].values():
        entry.pop("source"), entry.pop("sha256")
    for entry in report["metrics"].values():
        entry.pop("seconds", None)
    # the re-tests' timings, at any depth
    report = json.loads(re.sub(r'"seconds": [0-9.e-]+', '"seconds": 0', json.dumps(report)))
    for col in DATES:  # how the type was known: the SQL type DATE, or every CSV value parsing as one
        report["inferred_metadata"][col].pop("reason")
    return report


def _csv_report(folder):
    return _report(["-o", str(folder / "original.csv"), "-s", str(folder / "synthetic.csv"),
                    "-c", str(folder / "control.csv"), "-m", str(folder / "meta.json")],
                   folder / "csv.json")


def test_postgresql_tables_give_the_report_of_their_csv_files(postgres_url, breach_files):

    import psycopg

    with psycopg.connect(postgres_url) as conn, conn.cursor() as cur:
        for name in ("original", "synthetic", "control"):
            cur.execute(f"DROP TABLE IF EXISTS {name}")
            cur.execute(DDL.format(name=name))
            with cur.copy(f"COPY {name} FROM STDIN WITH (FORMAT csv, HEADER true)") as copy:
                copy.write((breach_files / f"{name}.csv").read_bytes())
    csv = _csv_report(breach_files)
    pg = _report(["-o", "table:original", "-s", "table:synthetic", "-c", "sql:SELECT * FROM control",
                  "--db", postgres_url, "-m", str(breach_files / "meta.json")], breach_files / "pg.json")
    assert pg["inputs"]["original"]["source"] == f"table original of {postgres_url}"
    for col in DATES:  # the SQL type says it, no value is parsed; the CSV's values are
        assert pg["inferred_metadata"][col] == {"sdtype": "datetime", "reason": "datetime dtype"}
        assert csv["inferred_metadata"][col]["reason"].startswith("every value parses as a date")
    assert pg["metrics"]["exact_matches"]["result"]["synthetic_match_rate"]["k"] >= 90
    assert _without_sources(pg) == _without_sources(csv)


def test_duckdb_file_tables_give_the_report_of_their_csv_files(breach_files, tmp_path):
    duckdb = pytest.importorskip("duckdb", reason="DuckDB is not installed: pip install 'synthguard[duckdb]'")
    db = tmp_path / "breaches.duckdb"
    con = duckdb.connect(str(db))
    for name in ("original", "synthetic", "control"):
        con.execute(DDL.format(name=name))
        con.execute(f"COPY {name} FROM '{breach_files / f'{name}.csv'}' (HEADER)")
    con.close()
    csv = _csv_report(breach_files)
    duck = _report(["-o", "table:original", "-s", "table:synthetic", "-c", "table:control",
                    "--db", f"duckdb:///{db}", "-m", str(breach_files / "meta.json")], tmp_path / "d.json")
    assert _without_sources(duck) == _without_sources(csv)


def _cli(args: list[str]):
    return CliRunner().invoke(main, ["evaluate", *args, "--metrics", "exact_matches", "--quiet"])


def _one_line_exit_2(res, *needles: str) -> None:
    lines = [ln for ln in res.output.strip().splitlines() if ln.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and "Traceback" not in res.output, res.output
    for needle in needles:
        assert needle in res.output, (needle, res.output)


def test_bad_database_arguments_are_one_line_and_exit_2(breach_files, tmp_path):
    csv = str(breach_files / "original.csv")
    _one_line_exit_2(_cli(["-o", "table:train", "-s", csv]), "table:train needs the database", "--db")
    _one_line_exit_2(_cli(["-o", csv, "-s", csv, "--db", "sqlite:///x.db"]), "--db names the database")
    pytest.importorskip("duckdb", reason="DuckDB is not installed: pip install 'synthguard[duckdb]'")
    _one_line_exit_2(_cli(["-o", f"sql:SELECT * FROM '{tmp_path}/none.parquet'", "-s", csv]),
                     "original sql:SELECT", "DuckDB could not run it")
    pytest.importorskip("sqlalchemy", reason="SQLAlchemy is not installed: pip install 'synthguard[sql]'")
    _one_line_exit_2(_cli(["-o", "table:nope", "-s", csv, "--db", f"sqlite:///{tmp_path / 'h.db'}"]),
                     "no table 'nope' in the database")
