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


def _warm_query_order() -> None:
    """Compile the tree search's query order (``split_leaves``), which the demo run does not reach:
    the neighbour engine sorts the queries by the tree leaf they fall into only from 1,024 query
    rows on (``engine._query_order``), and the demo's tables are smaller, so the first large run
    after a warm-up compiled it (measured: docs/performance.md, session 27). One search of 1,100
    rows against 1,100 under a Gower distance (the kernel's argument types do not depend on the
    distance's parameters or the tables' columns)."""
    import numpy as np

    from ..data.encoding import Block
    from ..engine.neighbors import engine
    from ..engine.neighbors.metric import gower

    rng = np.random.default_rng(0)
    n = 1100
    block = Block(rng.random((n, 2)), rng.integers(0, 5, (n, 2)), ("a", "b"), ("c", "d"))
    engine.kneighbors(block, block.take(np.arange(n)[::-1]), gower(np.ones(2)), 1)


def _warm_partners() -> None:
    """Compile the multivariate singling-out search's partners (``metrics.anonymeter.partners``:
    the run's, and a drop-and-retest's from the run's), which only a long search asks for
    (``PARTNERS_MIN_LEFT`` attempts still to come: the demo's ends sooner)."""
    import numpy as np

    from ..metrics.anonymeter.partners import partners_of, release_partners

    X = np.array([[0.0, 1.0], [0.0, 2.0], [1.0, np.nan]])
    own = release_partners(X, np.array([False, True]), np.array([np.nan, 1.5]))
    own.shared(np.array([0, 1]), np.array([[0, 1], [0, 1]]))
    partners_of(X, np.array([False, True]), np.array([np.nan, 1.5]), own.ids)  # a re-test's


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
    _warm_query_order()
    _warm_partners()
    from numba.core import config

    where = config.CACHE_DIR or os.environ.get("NUMBA_CACHE_DIR") or (
        "next to the installed package (__pycache__), or numba's user cache directory when that is "
        "read-only (else a folder under the temp dir; see synthguard._jit)")
    click.echo(f"numba kernels ready in {time.perf_counter() - t0:.1f} s; cache: {where}")
