"""Files as people really have them (issue 22): copies that must not hide however their values are
written, inputs that are never overwritten, runs that stop when asked, metadata read as written.

Every release below holds 30 % exact copies of training rows; ``exact_matches`` must find them
within one point, whichever way (CSV, Parquet) each table is stored.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
import unicodedata
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synthguard
from tests.console_text import flat

from .test_bad_input import assert_cli_error, run

REPO = Path(__file__).resolve().parents[2]
TRUTH = 0.30


def _people(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({
        "code": [f"{x:05d}" for x in rng.integers(0, 3000, n)],     # zip-like, leading zeros
        "région": rng.choice(["Île-de-France", "Provence-Alpes-Côte d'Azur", "Bretagne", "Hauts-de-France"], n),
        "income": rng.normal(3000, 900, n).round(2),
        "age": rng.integers(18, 90, n),
    })


@pytest.fixture(scope="module")
def people():
    rng = np.random.default_rng(22)
    train, fresh, control = _people(1000, rng), _people(700, rng), _people(1000, rng)
    release = pd.concat([train.sample(300, random_state=1), fresh]).sample(frac=1, random_state=2)
    return {"train": train, "release": release.reset_index(drop=True), "control": control}


def _write(df: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".parquet":
        pytest.importorskip("pyarrow")
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    return path


def _copies(original, release, control=None, metadata=None) -> tuple[float, list[str]]:
    rep = synthguard.evaluate(original, release, control=control, metadata=metadata,
                              metrics=["exact_matches"], seed=0)
    return rep["exact_matches"]["result"]["value"], rep.to_dict()["warnings"]


# --------------------------------------------------------------------------- copies that must not hide


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_leading_zero_codes_keep_their_text(people, tmp_path, fmt):
    """``01234`` is one code in every file: pandas made it 1234 in one file and kept it text in
    another (a non-numeric code anywhere, Parquet strings vs CSV), so identical lines never matched."""
    o = _write(people["train"], tmp_path / f"train.{fmt}")
    r = _write(people["release"], tmp_path / "release.csv")
    value, warns = _copies(o, r)
    assert abs(value - TRUTH) <= 0.01 and not warns
    # one non-numeric code near the end of the release: categorical everywhere, one warning naming it
    rel = people["release"].copy()
    rel.loc[len(rel) - 3, "code"] = "unknown"
    value, warns = _copies(o, _write(rel, tmp_path / "release_unknown.csv"))
    assert abs(value - TRUTH) <= 0.01
    assert len(warns) == 1 and "'code'" in warns[0] and "'unknown'" in warns[0] and "looks numeric" not in warns[0]
    # declared categorical in the metadata: no warning
    meta = {"columns": {"code": {"sdtype": "categorical"}}}
    value, warns = _copies(o, r, metadata=meta)
    assert abs(value - TRUTH) <= 0.01 and not warns


def test_large_csv_with_a_late_non_numeric_code(tmp_path):
    """300k rows, the non-numeric code near the end: read as one typed column, not per chunk
    (pandas found 88 % of the copies and printed a DtypeWarning)."""
    rng = np.random.default_rng(1)
    n = 300_000

    def frame(k):
        return pd.DataFrame({"code": [f"{x:05d}" for x in rng.integers(0, 30000, k)],
                             "money": rng.integers(100, 10**7, k) / 100})

    train = frame(n)
    rel = pd.concat([train.sample(int(n * TRUTH), random_state=1), frame(n - int(n * TRUTH))]).reset_index(drop=True)
    rel.loc[n - 5, "code"] = "unknown"
    o, r = _write(train, tmp_path / "o.csv"), _write(rel, tmp_path / "r.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.DtypeWarning)
        value, warns = _copies(o, r)
    assert abs(value - TRUTH) <= 0.01 and len(warns) == 1 and "'code'" in warns[0]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_accents_in_two_unicode_forms(people, tmp_path, fmt):
    """NFC in one file, NFD in the other (values and header): 11 % found and "missing column
    'région'" before; text and names are NFC-normalised."""
    rel = people["release"].copy()
    rel["région"] = rel["région"].map(lambda s: unicodedata.normalize("NFD", s))
    rel.columns = [unicodedata.normalize("NFD", c) for c in rel.columns]
    assert "région" not in rel.columns
    o = _write(people["train"], tmp_path / f"train.{fmt}")
    value, _ = _copies(o, _write(rel, tmp_path / "release.csv"))
    assert abs(value - TRUTH) <= 0.01


@pytest.mark.parametrize("release_fmt", ["csv", "parquet"])
def test_float32_parquet_against_its_csv(people, tmp_path, release_fmt):
    """Original Parquet with a float32 column, release written from the same float32 data (0.1 %
    found before): float32 values compare at their shortest decimal form."""
    train, rel = people["train"].copy(), people["release"].copy()
    train["ratio"] = (train["income"] / 7).astype(np.float32)
    rel["ratio"] = (rel["income"] / 7).astype(np.float32)
    o = _write(train, tmp_path / "train.parquet")
    value, _ = _copies(o, _write(rel, tmp_path / f"release.{release_fmt}"))
    assert abs(value - TRUTH) <= 0.01


@pytest.mark.parametrize("release_fmt", ["csv", "parquet"])
def test_decimal_money_columns_from_a_database(people, tmp_path, release_fmt):
    """DECIMAL(12,2) through Parquet arrives as ``decimal.Decimal`` objects (read as categories,
    1 % found before): read as numbers equal to their CSV text."""
    pa = pytest.importorskip("pyarrow")
    import decimal

    import pyarrow.parquet as pq

    def table(df):
        money = pa.array([decimal.Decimal(f"{v:.2f}") for v in df["income"]], pa.decimal128(12, 2))
        return pa.table({"code": df["code"], "income": money, "age": df["age"]})

    pq.write_table(table(people["train"]), tmp_path / "train.parquet")
    rel = people["release"][["code", "income", "age"]]
    if release_fmt == "parquet":
        pq.write_table(table(rel), tmp_path / "release.parquet")
    else:
        rel.to_csv(tmp_path / "release.csv", index=False)
    rep = synthguard.evaluate(tmp_path / "train.parquet", tmp_path / f"release.{release_fmt}",
                              metrics=["exact_matches"], seed=0)
    assert abs(rep["exact_matches"]["result"]["value"] - TRUTH) <= 0.01
    assert rep.to_dict()["schema"]["columns"]["income"]["sdtype"] == "numerical"


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_mixed_utc_offsets_are_utc_instants(tmp_path, fmt):
    """ISO 8601 with ``+01:00`` and ``+02:00`` in one column (a DST change) was refused with a
    wrong message on pandas 3; now UTC instants on pandas 2.0 and 3. Offsets mixed with naive
    times: one line naming the column and the fix."""
    ts = ["2021-03-27T10:00:00+01:00", "2021-03-28T10:00:00+02:00", "2021-10-31T01:30:00+02:00",
          "2021-10-31T01:30:00+01:00"] * 25
    df = pd.DataFrame({"ts": ts, "x": np.arange(100.0)})
    o = _write(df, tmp_path / f"o.{fmt}")
    s = _write(df.iloc[::-1], tmp_path / "s.csv")
    from synthguard.data import prepare_tables

    tables = prepare_tables(o, s, None, {"columns": {"ts": {"sdtype": "datetime"}}})
    got = tables.original["ts"].iloc[:4].tolist()
    assert got == [pd.Timestamp("2021-03-27 09:00"), pd.Timestamp("2021-03-28 08:00"),
                   pd.Timestamp("2021-10-30 23:30"), pd.Timestamp("2021-10-31 00:30")]
    assert prepare_tables(o, s).schema.sdtype("ts") == "datetime"
    bad = df.copy()
    bad.loc[0, "ts"] = "2021-03-27T10:00:00"
    res = run(["evaluate", "-o", str(_write(bad, tmp_path / f"bad.{fmt}")), "-s", str(s), "--metrics", "_test_noop"])
    assert_cli_error(res, "'ts'", "UTC offset", "Write every value with its offset")


# ------------------------------------------------------------------------------- data loss, security


def _snapshot(paths):
    return {p: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode)) for p in paths}


@pytest.mark.parametrize("option", ["--json", "--html"])
def test_outputs_never_overwrite_inputs(people, tmp_path, option):
    """``--html mine.csv`` where mine.csv is the original exited 0 and replaced the training data;
    ``--json meta.json`` beside ``--metadata meta.json`` overwrote the metadata. Now one line,
    exit 2, before any work, for every input (also through a symlink) and for the two outputs."""
    o = _write(people["train"], tmp_path / "mine.csv")
    s = _write(people["release"], tmp_path / "release.csv")
    c = _write(people["control"], tmp_path / "control.csv")
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"columns": {"code": {"sdtype": "categorical"}}}))
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("seed: 1\n")
    link = tmp_path / "link.csv"
    link.symlink_to(o)
    before = _snapshot([o, s, c, meta, cfg])
    base = ["evaluate", "-o", str(o), "-s", str(s), "-c", str(c), "-m", str(meta), "--config", str(cfg),
            "--metrics", "_test_noop", "--no-progress"]
    for target, named in ((o, "--original"), (s, "--synthetic"), (c, "--control"), (meta, "--metadata"),
                          (cfg, "--config"), (link, "--original"), (tmp_path / "sub" / ".." / "mine.csv",
                                                                    "--original")):
        if target.parent.name == "..":
            (tmp_path / "sub").mkdir(exist_ok=True)
        res = run([*base, option, str(target)])
        assert_cli_error(res, option, named, "overwritten")
    other = "--html" if option == "--json" else "--json"
    res = run([*base, option, str(tmp_path / "r.out"), other, str(tmp_path / "r.out")])
    assert_cli_error(res, "--json", "--html", "r.out")
    assert not (tmp_path / "r.out").exists()
    # inputs named by a config's data: block
    cfg2 = tmp_path / "cfg2.yaml"
    cfg2.write_text(f"data:\n  original: {o.name}\n  synthetic: {s.name}\nmetrics: [_test_noop]\n")
    res = run(["evaluate", "--config", str(cfg2), option, str(s)])
    assert_cli_error(res, option, "config data.synthetic", "overwritten")
    # compare and profile too
    res = run(["compare", "-o", str(o), option, str(s), str(s)])
    assert_cli_error(res, option, "overwritten")
    res = run(["profile", str(o), "-o", str(o)])
    assert_cli_error(res, "--output", "ORIGINAL")
    assert _snapshot([o, s, c, meta, cfg]) == before  # no input was modified


def test_petsard_reporter_writes_only_under_output_dir(people, tmp_path):
    """A PETsARD YAML whose Reporter ``output`` is ``../../somewhere`` or absolute wrote outside
    ``--output-dir``; refused (exit 2) unless ``--allow-outside-output-dir``."""
    from synthguard.cli import main  # noqa: F401  (run() uses it)

    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    people["train"][["income", "age"]].to_csv(work / "ori.csv", index=False)
    head = ("Loader:\n  data:\n    filepath: ori.csv\nSplitter:\n  s:\n    random_state: 1\n"
            "Synthesizer:\n  d:\n    method: default\nEvaluator:\n  q:\n    method: default\n"
            "Reporter:\n  r:\n    method: save_report\n    granularity: global\n    output: {}\n")
    out = work / "out"
    for output in ("../../somewhere", str(tmp_path / "abs"), "ori"):
        cfg = work / "p.yaml"
        cfg.write_text(head.format(json.dumps(output)))
        res = run(["run", str(cfg), "--output-dir", str(out if output != "ori" else work)])
        if output == "ori":  # inside the folder, not an input: fine
            assert res.exit_code == 0, res.output
            continue
        assert_cli_error(res, "outside the output folder", "--allow-outside-output-dir")
    assert not list(tmp_path.glob("somewhere*")) and not list(tmp_path.glob("abs*"))
    cfg.write_text(head.format(json.dumps(str(tmp_path / "abs"))))
    res = run(["run", str(cfg), "--output-dir", str(out), "--allow-outside-output-dir"])
    assert res.exit_code == 0, res.output
    assert list(tmp_path.glob("abs_Reporter*.csv"))


def test_reports_keep_the_mode_of_an_existing_file(people, tmp_path):
    """Rewriting an existing report reset its mode to 0600; it now keeps it, and a new report
    follows the umask."""
    o = _write(people["train"], tmp_path / "o.csv")
    s = _write(people["release"], tmp_path / "s.csv")
    old = tmp_path / "old.json"
    old.write_text("{}")
    old.chmod(0o640)
    res = run(["evaluate", "-o", str(o), "-s", str(s), "--metrics", "_test_noop", "--json", str(old),
               "--html", str(tmp_path / "new.html"), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert stat.S_IMODE(old.stat().st_mode) == 0o640 and json.loads(old.read_text())["metrics"]
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.html").stat().st_mode) == 0o666 & ~mask


# ------------------------------------------------------------------------- crashes, runs that stop


def test_read_only_install_and_home_still_run_the_numba_kernels(tmp_path):
    """numba's ``cache=True`` at import died with "cannot cache function '_holds': no locator
    available" when the install and HOME are read-only. Simulated here (the suite may run as root,
    for whom file modes do not hold) by taking numba's in-tree and user-wide cache folders away:
    the kernels cache in a temp folder; with no folder at all they run uncached, one warning."""
    script = textwrap.dedent("""
        import sys, warnings
        import numba.core.caching as c
        none = classmethod(lambda cls, py_func, py_file: None)
        names = ["InTreeCacheLocator", "_InTreeCacheLocator", "UserWideCacheLocator",
                 "_UserWideCacheLocator", "InTreeCacheLocatorFsAgnostic"]
        if sys.argv[1] == "nowhere":
            names += ["UserProvidedCacheLocator", "_UserProvidedCacheLocator"]
        for name in names:
            if hasattr(c, name):
                getattr(c, name).from_function = none
        import synthguard
        import synthguard.engine.neighbors._numba  # every kernel module is decorated (where it died)
        import synthguard.engine.queries
        import synthguard.stats._maxt_numba  # the joint test's urn, decorated the same way
        from synthguard.demo import DEMO_METADATA, make_demo
        d = make_demo(120, 0)
        # one metric whose kernels compile quickly: the neighbour-tree kernels take ~25 s to compile
        # cold, in each of the two processes, and add nothing to what is proved here
        rep = synthguard.evaluate(d["original"], d["leaky"], control=d["control"], metadata=DEMO_METADATA,
                                  metrics=["singling_out_univariate"], seed=0)
        print("statuses", sorted({e["status"] for e in rep.to_dict()["metrics"].values()}))
    """)
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": os.pathsep.join(
        [str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    env.pop("NUMBA_CACHE_DIR", None)
    for mode in ("temp", "nowhere"):
        res = subprocess.run([sys.executable, "-c", script, mode], capture_output=True, text=True, env=env,
                             timeout=600)
        assert res.returncode == 0, res.stderr[-2000:]
        assert "statuses ['ok']" in res.stdout
        assert res.stderr.count("NumbaCacheWarning") == (1 if mode == "nowhere" else 0), res.stderr


def test_ctrl_c_under_jobs_2_exits_130_at_once(tmp_path):
    """Ctrl-C with ``--jobs 2`` took 21-28 s (the pool waited for queued metrics) and exited 1 with
    click's "Aborted!". Now queued metrics are cancelled, exit 130, one line, no report file.
    (Measured: well under 1 s; the bound here is generous for a loaded machine.)"""
    marker = tmp_path / "started"
    # the child gets the Ctrl-C handling of a terminal: a shell that starts a job in the background
    # (``cmd &`` without job control, as CI harnesses and ``nohup ... &`` do) makes it ignore SIGINT,
    # the child would inherit that, and no Ctrl-C could reach it
    script = textwrap.dedent(f"""
        import signal, time, pathlib
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from synthguard.registry import register
        from synthguard.core.results import MetricResult
        for i in range(6):
            @register(f"_test_slow{{i}}", family="test", direction="lower is safer", default=False,
                      description="test-only: sleeps")
            def _slow(ctx):
                pathlib.Path({str(marker)!r}).touch()
                time.sleep(60)
                return MetricResult("x", "test", 0.0, "lower is safer")
        from synthguard.cli import main
        main()
    """)
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=50), "b": rng.integers(0, 3, 50)})
    df.to_csv(tmp_path / "o.csv", index=False)
    df.iloc[:30].to_csv(tmp_path / "s.csv", index=False)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "r.json"
    p = subprocess.Popen([sys.executable, "-c", script, "evaluate", "-o", str(tmp_path / "o.csv"), "-s",
                          str(tmp_path / "s.csv"), "--metrics", ",".join(f"_test_slow{i}" for i in range(6)),
                          "--jobs", "2", "--json", str(out), "--no-progress"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 300
    while not marker.exists():
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.05)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=30)
    took = time.monotonic() - t0
    assert p.returncode == 130, (stdout, stderr)
    assert took < 10, took
    assert stderr.strip().splitlines() == ["interrupted (Ctrl-C): stopped; no partial file written"]
    assert "Aborted" not in stdout + stderr
    assert not out.exists() and not list(tmp_path.glob(".r.json*"))


def test_stata_missing_sentinel_is_missing(people, tmp_path):
    """Stata's missing code 8.988e307 in a few cells: distinguishability failed on float32
    infinity and numpy RuntimeWarnings reached the console. Read as missing with one warning."""
    train, rel = people["train"].copy(), people["release"].copy()
    train.loc[[3, 7, 11], "income"] = 8.98846567431158e307
    o, s = _write(train, tmp_path / "o.csv"), _write(rel, tmp_path / "s.csv")
    res = run(["evaluate", "-o", str(o), "-s", str(s), "--metrics", "distinguishability,exact_matches",
               "--no-progress"])
    assert res.exit_code == 0, res.output
    out = flat(res.output)  # the warning names the file: where its path is long, the console wraps it
    assert "holds 3 value(s) beyond +/-1e300" in out
    assert "RuntimeWarning" not in out and " error " not in out and "Traceback" not in out


# ----------------------------------------------------------------------------------------- metadata


def test_metadata_with_a_bom_and_a_typo(people, tmp_path):
    """A UTF-8 BOM (Windows editors) was refused; a typo in a key (``quasi_identifer``) was ignored
    silently. Now read, and warned with the key it probably meant."""
    o = _write(people["train"], tmp_path / "o.csv")
    s = _write(people["release"], tmp_path / "s.csv")
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"columns": {"code": {"sdtype": "categorical", "sdtyp": "x"}},
                                "quasi_identifer": ["age"]}), encoding="utf-8-sig")
    assert meta.read_bytes().startswith(b"\xef\xbb\xbf")
    res = run(["evaluate", "-o", str(o), "-s", str(s), "-m", str(meta), "--metrics", "exact_matches",
               "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "unknown key 'quasi_identifer' ignored (did you mean 'quasi_identifiers'?)" in flat(res.output)
    assert "unknown key 'sdtyp' ignored (did you mean 'sdtype'?)" in flat(res.output)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"seed": 3}), encoding="utf-8-sig")  # configs too
    res = run(["evaluate", "-o", str(o), "-s", str(s), "--config", str(cfg), "--metrics", "exact_matches",
               "--no-progress"])
    assert res.exit_code == 0, res.output


def test_metadata_column_differing_only_in_case_gets_a_hint(people, tmp_path):
    """``Age`` in the metadata, ``age`` in the data: the error says so."""
    o = _write(people["train"], tmp_path / "o.csv")
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"columns": {"Age": {"sdtype": "numerical"}}}))
    res = run(["evaluate", "-o", str(o), "-s", str(o), "-m", str(meta), "--metrics", "_test_noop"])
    assert_cli_error(res, "'Age' vs 'age'")
    meta.write_text(json.dumps({"quasi_identifiers": ["AGE"]}))
    res = run(["evaluate", "-o", str(o), "-s", str(o), "-m", str(meta), "--metrics", "_test_noop"])
    assert_cli_error(res, "'AGE' vs 'age'")
