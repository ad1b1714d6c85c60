"""``synthguard warmup`` compiles the joint max-T test's urn too (the demo run does not reach it)."""

import pytest


def test_warmup_compiles_the_joint_tests_urn_which_the_demo_run_does_not_reach():
    """The demo run's verdict has too few record labels for the compiled urn, so the warm-up
    compiles it on its own: afterwards the kernel holds a compiled signature."""
    kernel = pytest.importorskip("synthguard.stats._maxt_numba")
    from synthguard.cli.warmup import _warm_urn

    _warm_urn()
    assert len(kernel.urn_counts.signatures) >= 1
