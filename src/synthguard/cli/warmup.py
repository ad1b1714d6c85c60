"""``synthguard warmup``: compile the numba kernels into their on-disk cache once, after installing."""

from __future__ import annotations

import time

import click


def warmup_metrics() -> list[str]:
    """The metrics whose kernels a privacy run uses (their card says ``warmup=True``): neighbour
    search (k-NN, radius counts, tree) and the singling-out query counters."""
    from ..registry import metric_infos

    infos = sorted((i for i in metric_infos() if i.card.get("warmup")), key=lambda i: (i.order, i.name))
    return [i.name for i in infos]


def _warm_urn() -> None:
    """Compile the joint max-T test's urn (its verdict uses it only above
    ``stats.maxt.COMPILED_CELLS`` record labels, which the demo run does not reach)."""
    import numpy as np

    from ..stats._maxt_numba import urn_counts

    urn_counts(1, 1, np.arange(3, dtype=np.int64), np.zeros(2, dtype=np.int64), 1, 3, 1)


@click.command("warmup")
def command() -> None:
    """Compile the numba kernels once (cached on disk), so later runs start fast."""
    import os

    from ..api import evaluate
    from ..demo import DEMO_METADATA, make_demo

    t0 = time.perf_counter()
    data = make_demo(400, 0)
    evaluate(data["original"], data["leaky"], control=data["control"], metadata=DEMO_METADATA,
             metrics=warmup_metrics(), jobs=1)
    _warm_urn()
    from numba.core import config

    where = config.CACHE_DIR or os.environ.get("NUMBA_CACHE_DIR") or (
        "next to the installed package (__pycache__), or numba's user cache directory when that is "
        "read-only (else a folder under the temp dir; see synthguard._jit)")
    click.echo(f"numba kernels ready in {time.perf_counter() - t0:.1f} s; cache: {where}")
