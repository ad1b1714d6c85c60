"""``synthguard warmup`` compiles what the demo run does not reach: the joint max-T test's urn,
the tree search's query order (``split_leaves``) and the singling-out search's partners (a
run's and a re-test's)."""

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


@pytest.fixture(scope="module")
def warmed(tmp_path_factory):
    """A fresh process with an empty cache folder, after the command (demo run stubbed out)."""
    pytest.importorskip("numba")
    cache = tmp_path_factory.mktemp("numba_cache")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-c", _SCRIPT], env=env, check=True, timeout=600)
    return cache


def test_warmup_writes_the_joint_tests_urn_into_numbas_cache(warmed):
    """The demo run's verdict has too few record labels for the compiled urn, so the command
    compiles it on its own: its index file is in the cache folder (it would not be, were the
    command not to compile it)."""
    assert list(warmed.rglob("*urn_counts*.nbi")), sorted(p.name for p in warmed.rglob("*"))


def test_warmup_writes_the_query_order_into_numbas_cache(warmed):
    """The demo's tables are below the 1,024 query rows from which a tree search sorts its
    queries by leaf, so the command searches 1,100 rows on its own: ``split_leaves``' index file
    is in the cache folder (before session 27 the first large run after a warm-up compiled it)."""
    assert list(warmed.rglob("*split_leaves*.nbi")), sorted(p.name for p in warmed.rglob("*"))


def test_warmup_writes_the_singling_out_partners_into_numbas_cache(warmed):
    """Only a long multivariate singling-out search asks for its release rows' partners, and the
    demo's ends sooner, so the command builds partners of a small matrix on its own: its three
    kernels' index files are in the cache folder."""
    names = sorted(p.name for p in warmed.rglob("*"))
    for kernel in ("_codes_kernel", "_shared_kernel", "_id_masks"):  # (the masks: one kernel, run and re-test)
        assert list(warmed.rglob(f"partners.{kernel}*.nbi")), (kernel, names)

