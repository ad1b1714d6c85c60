"""The program's entry (``python -m synthguard``, the ``synthguard`` script): the command, then an
exit without cyclic garbage collections; the click group invoked in-process leaves the collector as
it was."""

from __future__ import annotations

import gc
import subprocess
import sys
import tomllib
from pathlib import Path

from click.testing import CliRunner

from synthguard.cli import main

# runs the package as ``python -m synthguard`` does and reports, once the command has exited,
# whether the garbage collector's objects are frozen (an atexit hook runs after SystemExit)
_PROBE = """
import atexit, gc, runpy, sys
atexit.register(lambda: print("frozen" if gc.get_freeze_count() else "not frozen", file=sys.stderr))
sys.argv = ["synthguard", *sys.argv[1:]]
runpy.run_module("synthguard", run_name="__main__", alter_sys=True)
"""


def _probe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120)


def test_python_dash_m_synthguard_freezes_the_collector_once_the_command_is_done():
    res = _probe("--version")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("synthguard, version")
    assert res.stderr.strip().splitlines()[-1] == "frozen"


def test_a_failing_command_still_exits_with_its_code_and_a_frozen_collector():
    res = _probe("evaluate", "-o", "/nonexistent/original.csv", "-s", "/nonexistent/synthetic.csv")
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().splitlines()[-1] == "frozen"


def test_the_installed_script_starts_at_the_same_entry_as_python_dash_m():
    pyproject = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["synthguard"] == "synthguard.cli:program"


def test_the_click_group_invoked_in_process_leaves_the_callers_collector_alone():
    before = gc.get_freeze_count()
    res = CliRunner().invoke(main, ["--version"])
    assert res.exit_code == 0, res.output
    assert gc.get_freeze_count() == before
