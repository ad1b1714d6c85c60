"""``synthguard warmup`` compiles the joint max-T test's urn too (the demo run does not reach it)."""

import os
import subprocess
import sys
import textwrap

import pytest

#: the warm-up command with its demo evaluation stubbed out: only what the command itself compiles
_SCRIPT = textwrap.dedent("""
    import synthguard.api as api
    api.evaluate = lambda *a, **k: None
    from click.testing import CliRunner
    from synthguard.cli.warmup import command
    r = CliRunner().invoke(command, [])
    assert r.exit_code == 0, r.output
""")


def test_warmup_writes_the_joint_tests_urn_into_numbas_cache(tmp_path):
    """The demo run's verdict has too few record labels for the compiled urn, so the command
    compiles it on its own: a fresh process with an empty cache folder leaves the urn's index
    file there (it would not, were the command not to compile it)."""
    pytest.importorskip("numba")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", _SCRIPT], env=env, check=True, timeout=600)
    assert list(tmp_path.rglob("*urn_counts*.nbi")), sorted(p.name for p in tmp_path.rglob("*"))
