"""Outputs never destroy (issue 33): every output of every command goes through one writer: a file
through a temporary file and a rename, a pipe, a terminal, an open descriptor or ``-`` as a stream,
a link followed only to a regular file that is not an input (or to a stream), anything else refused
with one line before any work; ``demo --out`` never overwrites a file unless ``--force``.

Run on a real shared table (acs12: 300 training rows, a release holding 90 of them, 300 control rows).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from .test_bad_input import assert_cli_error, run

REPO = Path(__file__).resolve().parents[2]
# the command with a test metric that only counts rows (a real process, in seconds)
NOOP_CLI = textwrap.dedent("""
    from synthguard.core.results import MetricResult
    from synthguard.registry import register

    @register("_test_noop", family="test", direction="lower is safer", default=False,
              description="test-only metric")
    def _noop(ctx):
        return MetricResult("_test_noop", "test", float(len(ctx.tables.synthetic)), "lower is safer")

    from synthguard.cli import main
    main()
""")


@pytest.fixture(scope="module")
def acs(shared_data, tmp_path_factory):
    """acs12 split into training / control rows, and a release holding 30 % training rows."""
    d = pd.read_csv(shared_data / "acs12.csv", nrows=900)
    perm = np.random.default_rng(33).permutation(len(d))
    train, control, fresh = (d.iloc[perm[i:i + 300]].reset_index(drop=True) for i in (0, 300, 600))
    release = pd.concat([train.iloc[:90], fresh.iloc[:210]], ignore_index=True)
    folder = tmp_path_factory.mktemp("acs")
    paths = {}
    for role, frame in (("original", train), ("synthetic", release), ("control", control)):
        paths[role] = folder / f"{role}.csv"
        frame.to_csv(paths[role], index=False)
    return paths


def _evaluate(acs, *extra: str):
    return run(["evaluate", "-o", str(acs["original"]), "-s", str(acs["synthetic"]), "--metrics",
                "_test_noop", "--no-progress", *extra])


def _snapshot(acs):
    return {p: p.read_bytes() for p in acs.values()}


def _read_fifo_in_thread(fifo: Path) -> tuple[threading.Thread, list[str]]:
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    return reader, got


def test_json_onto_a_link_to_stdout_writes_through_it_and_keeps_the_link(acs, tmp_path):
    """``--json link`` with ``link -> /proc/self/fd/1`` replaced the link with a regular file. Now the
    report goes down the process's own standard output, after the console text, and the link stays.
    A real process: its descriptor 1 is a pipe read here (``/dev/stdout`` is the same link chain:
    tests/unit/core/test_io.py)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    link = tmp_path / "link.json"
    link.symlink_to("/proc/self/fd/1")
    p = subprocess.run([sys.executable, "-c", NOOP_CLI, "evaluate", "-o", str(acs["original"]), "-s",
                        str(acs["synthetic"]), "--metrics", "_test_noop", "--no-progress", "--json",
                        str(link)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    out = p.stdout
    start, end = out.index("\n{\n"), out.rindex("\n}\n")
    report = json.loads(out[start:end + 2])
    assert report["metrics"]["_test_noop"]["status"] == "ok"
    assert "VERDICT" in out[:start] and f"JSON report written to {link}" in out[end:]


def test_json_onto_a_named_pipe_with_a_reader_streams_and_keeps_the_pipe(acs, tmp_path):
    """``--json fifo`` replaced the named pipe with a file; its reader got nothing and hung."""
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    reader, got = _read_fifo_in_thread(fifo)
    res = _evaluate(acs, "--json", str(fifo))
    assert res.exit_code == 0, res.output
    reader.join(timeout=30)
    assert not reader.is_alive() and json.loads(got[0])["metrics"]["_test_noop"]["status"] == "ok"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_dash_writes_the_output_alone_on_stdout(acs, tmp_path):
    """``-`` is standard output: the report alone goes there, the console text goes to stderr."""
    res = _evaluate(acs, "--json", "-")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["metrics"]["_test_noop"]["status"] == "ok"
    assert "VERDICT" in res.stderr and "JSON report written to -" in res.stderr
    res = _evaluate(acs, "--records-out", "-", "--json", str(tmp_path / "r.json"))
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0] == "metric,risk,action,release_row,training_row,reason,rank,family,tests,round"
    assert res.stdout.count("exact_matches,presence,drop") >= 90  # acs12 repeats a few rows
    res = _evaluate(acs, "--json", "-", "--dossier", "-")
    assert_cli_error(res, "--dossier and --json both write to standard output")


def test_a_link_to_a_regular_file_is_followed_and_kept(acs, tmp_path):
    """A link to a report file that is not an input: the file it points at gets the new report
    (atomically, beside itself); the link stays a link."""
    real = tmp_path / "reports" / "latest.html"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.html"
    link.symlink_to(real)
    res = _evaluate(acs, "--html", str(link))
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and real.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in real.parent.iterdir()) == ["latest.html"]


def test_links_to_nothing_a_folder_or_an_input_are_refused_before_any_work(acs, tmp_path):
    before = _snapshot(acs)
    cases = {"dangling": tmp_path / "gone.json", "folder": tmp_path, "input": acs["original"]}
    for case, dest in cases.items():
        link = tmp_path / f"{case}.json"
        link.symlink_to(dest)
        for option in ("--json", "--records-out", "--dossier"):
            res = _evaluate(acs, option, str(link))
            if case == "folder":  # click's own check (exit 2, its usage lines)
                assert res.exit_code == 2 and "is a directory" in res.output and "Traceback" not in res.output
            else:
                assert_cli_error(res, option, "is the --original input" if case == "input" else "symbolic link")
            assert link.is_symlink() and Path(os.readlink(link)) == dest
    assert _snapshot(acs) == before and not (tmp_path / "gone.json").exists()


@pytest.mark.parametrize("command", ["compare", "profile", "attack", "run"])
def test_every_command_streams_to_a_named_pipe(acs, tmp_path, command):
    """``compare --json``, ``profile -o``, ``attack --json`` and a PETsARD Reporter go through the
    same writer as ``evaluate``: a named pipe stays a pipe and its reader gets the output."""
    fifo = tmp_path / "out.fifo"
    o, s = str(acs["original"]), str(acs["synthetic"])
    if command == "compare":
        args = ["compare", "-o", o, "--metrics", "_test_noop", "--no-progress", "--json", str(fifo), s,
                str(acs["control"])]
    elif command == "profile":
        args = ["profile", o, "-o", str(fifo)]
    elif command == "attack":
        args = ["attack", "-d", o, "--generator", "copula", "--targets", "auto:1", "--attacks",
                "closest_distance", "--shadow", "4", "--test", "4", "--train-size", "60",
                "--no-progress", "--json", str(fifo)]
    else:
        os.mkfifo(tmp_path / "petsard_Reporter[global].csv")
        fifo = tmp_path / "petsard_Reporter[global].csv"
        yaml = tmp_path / "p.yaml"
        yaml.write_text(f"Loader:\n  data:\n    filepath: {o}\nSplitter:\n  s:\n    random_state: 1\n"
                        f"Synthesizer:\n  syn:\n    method: custom_data\n    filepath: {s}\n"
                        "Evaluator:\n  q:\n    method: default\n"
                        "Reporter:\n  r:\n    method: save_report\n    granularity: global\n")
        args = ["run", str(yaml), "--output-dir", str(tmp_path)]
    if not fifo.exists():
        os.mkfifo(fifo)
    reader, got = _read_fifo_in_thread(fifo)
    res = run(args)
    assert res.exit_code == 0, res.output
    reader.join(timeout=60)
    assert not reader.is_alive() and got and got[0].strip()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    if command == "run":
        assert got[0].startswith("full_expt_name,")
    else:
        assert isinstance(json.loads(got[0]), dict)


def test_profile_to_stdout_keeps_its_message_off_stdout(acs):
    res = run(["profile", str(acs["original"]), "-o", "-"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["format"] and "written to -" in res.stderr


def test_demo_out_never_overwrites_the_users_files_unless_forced(tmp_path):
    """``demo --out myproject`` overwrote the user's own ``myproject/original.csv`` without a word.
    Now exit 2 naming the file and ``--force``, before any work; with ``--force`` it writes."""
    folder = tmp_path / "myproject"
    folder.mkdir()
    mine = folder / "original.csv"
    mine.write_text("my,own\n1,2\n")
    args = ["demo", "--rows", "200", "--metrics", "exact_matches", "--no-progress", "--out", str(folder)]
    res = run(args)
    assert_cli_error(res, "--out", "original.csv", "--force")
    assert mine.read_text() == "my,own\n1,2\n" and sorted(p.name for p in folder.iterdir()) == ["original.csv"]
    res = run([*args, "--force"])
    assert res.exit_code == 0, res.output
    assert pd.read_csv(mine).shape[0] == 100 and (folder / "report_leaky.json").exists()
    fresh = tmp_path / "new" / "deeper"
    res = run([*args[:-1], str(fresh)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in fresh.iterdir()) == [
        "control.csv", "leaky.compare.html", "leaky.csv", "leaky.dossier.html", "leaky.html",
        "original.csv", "report_leaky.json", "report_safe.json", "safe.csv"]


def test_petsard_reporter_onto_a_dangling_link_is_refused_before_any_work(acs, tmp_path):
    link = tmp_path / "petsard_Reporter[global].csv"
    link.symlink_to(tmp_path / "elsewhere.csv")
    yaml = tmp_path / "p.yaml"
    yaml.write_text(f"Loader:\n  data:\n    filepath: {acs['original']}\nSplitter:\n  s:\n    random_state: 1\n"
                    f"Synthesizer:\n  syn:\n    method: custom_data\n    filepath: {acs['synthetic']}\n"
                    "Evaluator:\n  q:\n    method: default\n"
                    "Reporter:\n  r:\n    method: save_report\n    granularity: global\n")
    res = run(["run", str(yaml), "--output-dir", str(tmp_path)])
    assert_cli_error(res, "Reporter.r output", "symbolic link", "petsard_Reporter[global].csv")
    assert link.is_symlink() and not (tmp_path / "elsewhere.csv").exists()


def test_an_error_stays_one_line_whatever_a_path_holds(acs, tmp_path):
    """The error names the output as given; a newline or an escape sequence in it is shown as an
    escape, so the error stays one line on the terminal."""
    bad = tmp_path / "no\nsuch\x1b[2J" / "r.json"
    res = _evaluate(acs, "--json", str(bad))
    assert_cli_error(res, "--json", "no\\nsuch\\x1b[2J", "does not exist")
