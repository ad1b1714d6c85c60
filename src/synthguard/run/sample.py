"""Sampled queries (``max_records``): above ``max_records`` training or control records, every test
of a run in one process runs on a seeded uniform sample of them, against the whole release.

Every verdict test compares the share of training records it flags with the share of control
records; such a share is estimated from a uniform sample to within its binomial interval, which is
what the report then states (intervals and detection limits are those of the sample: the tests run
on the sampled tables, and the limits are measured by injecting leak rows built from the sampled
training records). The release is never sampled: a copy hidden in an unsampled release row would be
missed. Exact copies are still found for every training record, by a full-table join of the
release's row identities against all of them (:func:`exact_copies`), and listed in the records
export, those of records outside the sample marked so (:func:`copy_records`).

The sample is drawn in the tables' canonical content order
(:meth:`~synthguard.data.tables.Tables.in_canonical_order`) from the run's seed, so that the order of
the input rows cannot change it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from ..data.tables import Tables
from ..stats import make_rng

__all__ = ["DEFAULT_MAX_RECORDS", "copy_records", "draw_sample", "exact_copies", "list_copies",
           "resolve_max_records", "sample_tables"]

#: The default ``max_records``: ``0``, never sample. A sample of 200,000 estimates every share up to
#: 5 % to +-0.1 % (``docs/scaling.md``), but a sampled run changes what some values mean (the share
#: of release rows copying a *sampled* training record) and, with the release never sampled, the one
#: measurement at 1M rows showed no saving: sampling is what a user asks for, not a default.
DEFAULT_MAX_RECORDS = 0
_ROLES = ("original", "control")


def resolve_max_records(value: int | None) -> int:
    """The number of records above which a run samples (``None``: :data:`DEFAULT_MAX_RECORDS`;
    ``0``: never).

    Examples
    --------
    >>> resolve_max_records(None), resolve_max_records(0), resolve_max_records(500)
    (0, 0, 500)
    """
    return DEFAULT_MAX_RECORDS if value is None else int(value)


def sample_tables(tables: Tables, max_records: int | None, seed: int
                  ) -> tuple[Tables, dict[str, Any] | None, dict[str, np.ndarray] | None]:
    """The tables a run tests (``tables`` in canonical order, or their sample when the training or
    the control table holds more than ``max_records`` rows: :func:`draw_sample`), the report's
    ``sample`` header entry and the full-table exact copies (:func:`exact_copies`); ``None, None``
    when nothing was sampled."""
    limit = resolve_max_records(max_records)
    sampled, info = draw_sample(tables, limit, seed)
    if info is None:
        return tables, None, None
    at = info["original"].pop("positions", None)
    info.get("control", {}).pop("positions", None)
    copies = exact_copies(tables, at)
    info.update(seed=int(seed), max_records=limit,
                exact_copies={"release_rows": int(copies["release"].size),
                              "outside_sample": int(copies["outside"].sum())})
    return sampled, info, copies


def list_copies(out: Any, copies: Mapping[str, np.ndarray], metric_of: Callable[[str], str]) -> Any:
    """The run's output ``out`` (a :class:`~synthguard.run.executor.RunOutput`) with every
    full-table exact copy its own rows do not list added to the header's ``records``
    (:func:`copy_records`), under the copy test: the metric whose card lists every verbatim copy,
    by the name the run gives it (``metric_of``: a run name's registered metric; a named run of
    the copy test lists its copies under its run name only, as its own rows do)."""
    from ..registry import metric_infos
    from .drops import ALARM

    copier = str(next((i.name for i in metric_infos()
                       if (i.card.get("records") or {}).get("complete")), None))
    name = next((n for n in out.results if metric_of(n) == copier), copier)
    own = list(out.header.get("records") or ())
    res = out.results.get(name)
    listed = {r.get("release_row") for r in own
              if name in str(r.get("tests") or r.get("metric")).split(", ")}
    more = copy_records(copies, listed, res is not None and str(res.risk_level) in ALARM, name)
    if more:
        out.header["records"] = own + more
    return out


def draw_sample(tables: Tables, max_records: int, seed: int) -> tuple[Tables, dict[str, Any] | None]:
    """``tables`` with the training and control tables cut to a seeded uniform sample of
    ``max_records`` rows each when they hold more (the release untouched), and the report's
    ``sample`` header entry (``None`` when nothing was sampled: then ``tables`` come back as given).

    ``tables`` must be in canonical content order; each sampled table keeps that order, and its
    ``row_numbers`` still point at the input rows.

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.data.tables import prepare_tables
    >>> o = pd.DataFrame({"a": range(100), "b": ["x", "y"] * 50})
    >>> t = prepare_tables(o, o.head(5), o.tail(30)).in_canonical_order()
    >>> small, info = draw_sample(t, 40, seed=1)
    >>> len(small.original), len(small.control), info["original"]["of"], info["control"]
    (40, 30, 100, {'rows': 30, 'of': 30})
    >>> draw_sample(t, 100, seed=1)[1] is None
    True
    """
    if max_records <= 0 or getattr(tables, "original_stats", None) is not None:
        return tables, None
    sizes = {r: len(tables.get(r)) for r in _ROLES if r in tables.roles}
    if all(n <= max_records for n in sizes.values()):
        return tables, None
    frames: dict[str, Any] = {}
    rows = dict(tables.row_numbers)
    prints = {r: dict(fp) for r, fp in tables.fingerprints.items()}
    info: dict[str, Any] = {}
    for role, n in sizes.items():
        if n <= max_records:
            info[role] = {"rows": n, "of": n}
            continue
        keep = np.sort(make_rng(seed, "max_records", role).choice(n, size=max_records,
                                                                  replace=False))
        frames[role] = tables.get(role).iloc[keep].reset_index(drop=True)
        if role in rows:
            rows[role] = np.asarray(rows[role])[keep]
        info[role] = {"rows": int(max_records), "of": int(n), "positions": keep}
        # a cached result of the whole table is not one of the sample (engine/cache.py's key)
        prints[role] = dict(prints.get(role, {}), sample={"rows": int(max_records), "seed": int(seed)})
    return replace(tables, row_numbers=rows, fingerprints=prints, **frames), info


def exact_copies(tables: Tables, sampled: np.ndarray | None) -> dict[str, np.ndarray]:
    """The full-table join: every release row equal to some training row over ALL training rows
    of ``tables`` (canonical positions), by the exact-copy test's own join
    (:func:`synthguard.metrics.privacy.matching.first_copies`: every column but ``id`` columns,
    missing equal to missing).

    Returns ``release`` (input row numbers of the release), ``training`` (the input row of the
    first sampled training row it equals, else of the first training row, in canonical order) and
    ``outside`` (True when it equals no sampled training row); ``sampled``: the canonical positions
    of the sampled training rows (``None``: all of them).
    """
    from ..metrics.privacy.matching import first_copies

    in_sample = np.zeros(len(tables.original), dtype=bool)
    in_sample[slice(None) if sampled is None else sampled] = True
    release, training = first_copies(tables, in_sample)
    outside = ~in_sample[training]
    for role, pos in (("synthetic", release), ("original", training)):
        nums = tables.row_numbers.get(role)
        if nums is not None:
            pos[:] = np.asarray(nums)[pos]
    return {"release": release, "training": training, "outside": outside}


def copy_records(copies: Mapping[str, np.ndarray], listed: set[Any], alarm: bool,
                 metric: str) -> list[dict[str, Any]]:
    """The records-export rows of the full-table copies not already ``listed`` (release rows the
    run's own rows name as copies), under the copy test ``metric``: input row numbers, action
    ``drop`` when that test alarms (``alarm``), else ``review``; a copy of a record outside the
    sample says so in its reason."""
    release, training = copies["release"], copies["training"]
    out = []
    keep = ~np.isin(release, np.fromiter((r for r in listed if r is not None), dtype=np.int64))
    for r, t, outside in zip(release[keep].tolist(), training[keep].tolist(),
                             copies["outside"][keep].tolist(), strict=True):
        where = ("a record outside the sample: found by the full-table join, not tested"
                 if outside else "found by the full-table join")
        out.append({"metric": metric, "risk": "presence",
                    "action": "drop" if alarm else "review", "release_row": int(r),
                    "training_row": int(t), "reason": f"verbatim copy of a training row ({where})",
                    "rank": None, "family": "exact", "tests": metric, "round": None})
    return out
