"""Sampled queries (``max_records``): above ``max_records`` training or control records, every test
of a run in one process runs on a seeded uniform sample of them, against the whole release.

Every verdict test compares the share of training records it flags with the share of control
records; such a share is estimated from a uniform sample to within its binomial interval, which is
what the report then states (intervals and detection limits are those of the sample: the tests run
on the sampled tables, and the limits are measured by injecting leak rows built from the sampled
training records). The release is never sampled as the reference of a test whose queries are real
records: a copy hidden in an unsampled release row would be missed. The few tests whose queries
are release rows (their card's ``queries="release"``, :func:`release_query_tests`: shares of release rows, the DCR family's and
``new_row_synthesis``'s headlines) ask, above ``max_records`` release rows, of a seeded content
sample of that many (:meth:`~synthguard.registry.Context.release_query_rows`), stated in the
header (``sample["release_queries"]``) and the verdict's sentence. Exact copies are still found for every training record, by a full-table join of the
release's row identities against all of them (:func:`exact_copies`), and so are the copies with one
cell changed that identify their training record when the run tests for them
(:func:`near_copies_of`: the near-copy test's own join over every real record); both are listed
in the records export when their test reads high or medium, in the unsampled export's words, those
of records outside the sample marked so (:func:`copy_records`).

The sample is drawn in the tables' canonical content order
(:meth:`~synthguard.data.tables.Tables.in_canonical_order`) from the run's seed, so that the order of
the input rows cannot change it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..data.leaks import CELLS_CHANGED
from ..data.quirks import identifier_candidates
from ..data.tables import Tables
from ..stats import make_rng

__all__ = ["DEFAULT_MAX_RECORDS", "copy_records", "draw_sample", "dropped_with_copies", "exact_copies",
           "hash_candidates", "list_copies", "near_copies_of", "release_query_tests", "resolve_max_records",
           "sample_positions", "sample_tables", "with_release_queries"]

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


def sample_tables(tables: Tables, max_records: int | None, seed: int, *, near: bool = False,
                  retest: bool = True
                  ) -> tuple[Tables, dict[str, Any] | None, dict[str, dict[str, np.ndarray]] | None]:
    """The tables a run tests (``tables`` in canonical order, or their sample when the training or
    the control table holds more than ``max_records`` rows: :func:`draw_sample`), the report's
    ``sample`` header entry and the full-table copies: ``{"exact": exact_copies(...)}`` and, with
    ``near`` (the run tests one-cell copies), ``"near1"``: :func:`near_copies_of`; ``None, None``
    when nothing was sampled. ``retest``: whether the run can re-test its release without some
    rows (:func:`draw_sample`'s)."""
    limit = resolve_max_records(max_records)
    sampled, info = draw_sample(tables, limit, seed, retest=retest)
    if info is None:
        return tables, None, None
    at = info["original"].pop("positions", None)
    info.get("control", {}).pop("positions", None)
    codes = _compared_codes(tables, near)
    # the cell hashes of both joins, hashed once: the one-cell join's own, whose row sums the
    # exact join reads (none without the one-cell join: the exact join then sums a block at a time)
    cells = _compared_cells(codes) if near else None
    copies = {"exact": exact_copies(tables, at, codes, cells)}
    if near:
        copies["near1"] = near_copies_of(tables, at, codes, cells)
    del codes, cells
    return sampled, sample_header(info, seed, limit, copies), copies


def sample_header(info: dict[str, Any], seed: int, limit: int,
                  copies: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, Any]:
    """The report's ``sample`` entry: ``info`` (the rows sampled per role) with the seed, the
    limit and, per full-table join, its release rows and how many of them copy a training
    record outside the sample (one process and a cluster run alike).

    Examples
    --------
    >>> import numpy as np
    >>> sample_header({"original": {"rows": 2, "of": 5}}, 0, 2,
    ...               {"exact": {"release": np.array([3, 4]), "outside": np.array([True, False])}})
    {'original': {'rows': 2, 'of': 5}, 'seed': 0, 'max_records': 2, 'exact_copies': {'release_rows': 2, 'outside_sample': 1}}
    """
    info.update(seed=int(seed), max_records=limit)
    for family, key in (("exact", "exact_copies"), ("near1", "one_cell_copies")):
        if family in copies:
            info[key] = {"release_rows": int(copies[family]["release"].size),
                         "outside_sample": int(copies[family]["outside"].sum())}
    return info


def release_query_tests(metrics: Iterable[str]) -> list[str]:
    """The tests among ``metrics`` whose queries are release rows (their card's ``queries`` is
    ``"release"``), sorted: each states a share (or a distribution) over release rows, which a
    seeded sample of them estimates within its interval. Above ``max_records`` release rows a
    sampled run asks them of that many release rows
    (:meth:`~synthguard.registry.Context.release_query_rows`); every other test's queries are real
    records, against the whole release. Their one per-record statistic, the real records a release
    row is nearest to (``dcr_overfitting_protection``'s evidence), saturates when the release
    outnumbers the sampled real records (ten release rows per real record win nearly every real
    record by chance), so the sample costs it no power it had.

    Examples
    --------
    >>> release_query_tests(["exact_matches", "nndr", "dcr"])
    ['dcr', 'nndr']
    """
    from ..registry.lookup import info_of

    return sorted({m for m in metrics
                   if (i := info_of(m)) is not None and i.card.get("queries") == "release"})


def with_release_queries(sample: dict[str, Any], release_queries: int, tables: Tables,
                         metrics: list[str]) -> dict[str, Any]:
    """The header's ``sample`` entry with ``release_queries`` (``{"rows", "of", "tests"}``) when the
    run's tests with release rows as queries (:func:`release_query_tests` among ``metrics``) asked
    of a sample of the release (more release rows than ``release_queries``); else ``sample``.

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.data.tables import prepare_tables
    >>> t = prepare_tables(pd.DataFrame({"a": range(9)}), pd.DataFrame({"a": range(20)}))
    >>> with_release_queries({"max_records": 5}, 5, t, ["dcr", "exact_matches"])["release_queries"]
    {'rows': 5, 'of': 20, 'tests': ['dcr']}
    """
    n = len(tables.synthetic)
    tests = release_query_tests(metrics)
    if not release_queries or n <= release_queries or not tests:
        return sample
    return {**sample, "release_queries": {"rows": int(release_queries), "of": int(n), "tests": tests}}


def dropped_with_copies(copies: Mapping[str, Mapping[str, np.ndarray]] | None
                        ) -> dict[int, np.ndarray] | None:
    """The full-table copies as the drop-and-retest takes them
    (:func:`synthguard.run.actions.drop_retest`'s ``also``): ``{cells changed: canonical release
    positions}`` (``None``: no join ran). A first round drops them with the run's own copies of as
    many cells when it drops any; :func:`list_copies` marks those it dropped ``drop``.

    Examples
    --------
    >>> import numpy as np
    >>> dropped_with_copies({"exact": {"release_at": np.array([4, 1])}})
    {0: array([4, 1])}
    """
    if not copies:
        return None
    return {CELLS_CHANGED[f]: np.asarray(c["release_at"], dtype=np.int64) for f, c in copies.items()}


#: the test whose card lists copies with one cell changed (its ``max_diff`` 1 run), and the
#: family of those copies
NEAR_TEST, NEAR_FAMILY = "near_copies", "near1"


def runs_near_copies(run_config: Any) -> bool:
    """Whether a run configuration tests copies with one cell changed (a run of
    :data:`NEAR_TEST` at ``max_diff`` 1), so that a sampled run joins them over the full tables."""
    return any(run_config.metric_of(n) == NEAR_TEST and int((p or {}).get("max_diff", 1)) == 1
               for n, p in run_config.metrics.items())


def list_copies(out: Any, copies: Mapping[str, Mapping[str, np.ndarray]],
                metric_of: Callable[[str], str], params: Mapping[str, Any] | None = None) -> Any:
    """The run's output ``out`` (a :class:`~synthguard.run.executor.RunOutput`) with every
    full-table copy its own rows do not list added to the header's ``records``
    (:func:`copy_records`): the exact copies under the copy test (the metric whose card lists
    every verbatim copy), the one-cell copies (``copies["near1"]``) under the near-copy test's
    one-cell run, each by the name the run gives it (``metric_of``: a run name's registered metric;
    ``params``: each run's parameters; a named run lists its copies under its run name only, as
    its own rows do)."""
    from ..registry import metric_infos
    from .drops import ALARM

    copier = str(next((i.name for i in metric_infos()
                       if (i.card.get("records") or {}).get("complete")), None))
    own = list(out.header.get("records") or ())
    more: list[dict[str, Any]] = []
    for family, metric in (("exact", copier), (NEAR_FAMILY, NEAR_TEST)):
        if family not in copies:
            continue
        runs = [n for n in out.results if metric_of(n) == metric
                and (family == "exact" or int(((params or {}).get(n) or {}).get("max_diff", 1)) == 1)]
        if not runs and family != "exact":
            continue
        name = runs[0] if runs else metric
        res = out.results.get(name)
        listed = {r.get("release_row") for r in own
                  if name in str(r.get("tests") or r.get("metric")).split(", ")}
        finding = res is not None and str(res.risk_level) in ALARM
        alarm = finding
        # after an in-run drop-and-retest: to drop exactly the copies it dropped (those of a
        # family whose own copies the run drops: :func:`dropped_with_copies`), in its first round
        joined = (((out.header.get("actions") or {}).get("drop_retest") or {})
                  .get("full_table_copies"))
        if joined is not None:
            alarm = alarm and joined.get(family, 0) > 0
        more += copy_records(copies[family], listed, alarm, name, family,
                             1 if joined is not None and alarm else None,
                             None if finding else str(getattr(res, "risk_level", "not run")))
    if more:
        out.header["records"] = own + more
    return out


def draw_sample(tables: Tables, max_records: int, seed: int, *, retest: bool = True
                ) -> tuple[Tables, dict[str, Any] | None]:
    """``tables`` with the training and control tables cut to a seeded uniform sample of
    ``max_records`` rows each when they hold more (the release untouched), and the report's
    ``sample`` header entry (``None`` when nothing was sampled: then ``tables`` come back as given).

    ``tables`` must be in canonical content order; each sampled table keeps that order, and its
    ``row_numbers`` still point at the input rows. ``retest`` (the run can re-test its release
    without some rows): the whole tables' columns that could read as an identifier are kept
    (``Tables.whole_columns``, for that re-test's typing); without, none is looked for or copied.

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
    if getattr(tables, "original_stats", None) is not None:
        return tables, None
    drawn = sample_positions({r: len(tables.get(r)) for r in _ROLES if r in tables.roles},
                             max_records, seed)
    if drawn is None:
        return tables, None
    frames: dict[str, Any] = {}
    # the whole tables' columns that could read as an identifier, for the re-test's typing
    sampled = [r for r, (_, keep) in drawn.items() if keep is not None] if retest else []
    can = [set(identifier_candidates(tables.get(r), tables.schema)) for r in sampled]
    cols = [c for c in tables.schema.columns if all(c in k for k in can)]
    whole = {r: tables.get(r)[cols].copy() for r in sampled}
    rows = dict(tables.row_numbers)
    prints = {r: dict(fp) for r, fp in tables.fingerprints.items()}
    info: dict[str, Any] = {}
    for role, (n, keep) in drawn.items():
        if keep is None:
            info[role] = {"rows": n, "of": n}
            continue
        frames[role] = tables.get(role).iloc[keep].reset_index(drop=True)
        if role in rows:
            rows[role] = np.asarray(rows[role])[keep]
        info[role] = {"rows": int(max_records), "of": int(n), "positions": keep}
        # a cached result of the whole table is not one of the sample (engine/cache.py's key)
        prints[role] = dict(prints.get(role, {}), sample={"rows": int(max_records), "seed": int(seed)})
    return replace(tables, row_numbers=rows, fingerprints=prints, whole_columns=whole, **frames), info


def sample_positions(sizes: Mapping[str, int], max_records: int, seed: int
                     ) -> dict[str, tuple[int, np.ndarray | None]] | None:
    """The seeded sample of :func:`draw_sample` from the tables' rows alone: per role of ``sizes``
    (role -> rows; the training and control tables), ``(rows, kept canonical positions)``, the
    positions sorted, ``None`` for a table of at most ``max_records`` rows (kept whole); ``None``
    when nothing is sampled (``max_records`` 0, or no table above it). One draw per table, from
    the run's seed and the table's role: the same positions in one process and on a cluster
    (:mod:`synthguard.run.cluster`).

    Examples
    --------
    >>> got = sample_positions({"original": 10, "control": 3}, 4, seed=1)
    >>> got["original"][1].size, got["control"]
    (4, (3, None))
    >>> sample_positions({"original": 10}, 0, seed=1) is None
    True
    """
    if max_records <= 0 or all(n <= max_records for n in sizes.values()):
        return None
    return {role: (int(n), None if n <= max_records else np.sort(
        make_rng(seed, "max_records", role).choice(n, size=max_records, replace=False)))
        for role, n in sizes.items()}


def _compared_codes(tables: Tables, near: bool) -> dict[str, np.ndarray] | None:
    """The exact-value codes (``categorical_only``) of the compared columns of the training and
    release tables, encoded once for both full-table joins; with ``near`` (the one-cell join, which
    pools the real records) and a control also ``"real"``: the training then the control codes
    in one matrix, ``"original"`` and ``"control"`` its two parts (no table's codes held twice,
    each written in place: :meth:`~synthguard.data.encoding.Encoder.fill_codes`), and
    ``"distinct"``: per column, the number of distinct codes of the three tables, read from the
    encoder's vocabularies (learnt from these tables alone), for the one-cell join's block join.
    Encoded training, control, release, the order each join encoded them in alone (the codes of
    values first seen in a later table follow the earlier tables'). ``None`` when no column is
    compared."""
    from ..data.encoding import EncodedView
    from ..metrics.privacy.matching import compared_columns

    cols = compared_columns(tables.schema)
    if not cols:
        return None
    enc = EncodedView(tables).encoder
    codes = {}
    if near and tables.control is not None:
        n_o = len(tables.original)
        real = np.empty((n_o + len(tables.control), len(cols)), dtype=np.int64)
        enc.fill_codes(tables.original, cols, real[:n_o])
        enc.fill_codes(tables.control, cols, real[n_o:])
        codes.update(real=real, original=real[:n_o], control=real[n_o:])
    else:
        codes["original"] = enc.encode(tables.original, cols, categorical_only=True).cat
    codes["synthetic"] = enc.encode(tables.synthetic, cols, categorical_only=True).cat
    if "real" in codes:
        codes["distinct"] = enc.distinct_codes([tables.get(r) for r in tables.roles], cols)
    return codes


def _compared_cells(codes: Mapping[str, np.ndarray] | None) -> dict[str, np.ndarray] | None:
    """The cell hashes (:func:`~synthguard.metrics.privacy._copies.masked_hashes`' first part: chain 0,
    keyed by column position) of the pooled real codes and of the release codes of
    :func:`_compared_codes` (``"real"``, ``"synthetic"``), for the one-cell join and the row sums of
    the exact join; ``None`` without the pooled codes (no control)."""
    from ..data.hashing import cell_hashes

    if codes is None or "real" not in codes:
        return None
    ids = np.arange(codes["real"].shape[1], dtype=np.uint64)
    return {"real": cell_hashes(codes["real"], ids), "synthetic": cell_hashes(codes["synthetic"], ids)}


def _row_sums(codes: np.ndarray, cells: np.ndarray | None = None) -> np.ndarray:
    """Every row's hash on all the columns of the code matrix ``codes``: the wrapping sum of its
    cell hashes (``cells`` when given, else hashed a row block at a time); equal rows, equal sums."""
    from ..data.hashing import cell_hashes

    if cells is not None:
        return cells.sum(axis=1, dtype=np.uint64)
    ids = np.arange(codes.shape[1], dtype=np.uint64)
    out = np.empty(codes.shape[0], dtype=np.uint64)
    step = 1 << 16
    for s in range(0, codes.shape[0], step):  # row blocks: one block's cells at a time
        out[s:s + step] = cell_hashes(codes[s:s + step], ids).sum(axis=1, dtype=np.uint64)
    return out


def hash_candidates(h_a: np.ndarray, h_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of two tables that may equal a row of the other, from their row hashes ``h_a``,
    ``h_b`` (equal rows have equal hashes): the positions (ascending) of the rows of ``a`` whose
    hash some row of ``b`` has, and of the rows of ``b`` whose hash one of those has. Every pair
    of equal rows is among them (a hash collision only adds rows).

    Examples
    --------
    >>> import numpy as np
    >>> a, b = hash_candidates(np.array([5, 1, 9, 5], dtype=np.uint64), np.array([2, 5, 7], dtype=np.uint64))
    >>> a.tolist(), b.tolist()
    ([0, 3], [1])
    """
    from ..core.arrays import isin_codes

    at_a = np.flatnonzero(isin_codes(h_a, h_b))
    at_b = np.flatnonzero(isin_codes(h_b, h_a[at_a]))
    return at_a.astype(np.int64), at_b.astype(np.int64)


def exact_copies(tables: Tables, sampled: np.ndarray | None,
                 codes: Mapping[str, np.ndarray] | None = None,
                 cells: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The full-table join: every release row equal to some training row over ALL training rows
    of ``tables`` (canonical positions), by the exact-copy test's own join
    (:func:`synthguard.metrics.privacy.matching.first_copies`: every column but ``id`` columns,
    missing equal to missing).

    Returns ``release`` (input row numbers of the release), ``training`` (the input row of the
    first sampled training row it equals, else of the first training row, in canonical order) and
    ``outside`` (True when it equals no sampled training row); ``sampled``: the canonical positions
    of the sampled training rows (``None``: all of them); ``codes``: :func:`_compared_codes`
    (``None``: encoded here); ``cells``: :func:`_compared_cells` of those codes, when held.

    With ``codes``, the join's exact row identities are those of the rows the other table holds a
    row of the same hash of (:func:`hash_candidates` on the rows' cell-hash sums): every equal
    pair is among them, and they keep their order, so the first training row each release row
    equals is the same as over every row; the rows of a hash the other table lacks are not
    numbered (at 10 million training and release rows, the identities of 20 million rows were
    most of the join).
    """
    from ..data.encoding import Block, row_identities
    from ..metrics.privacy.matching import first_copies

    in_sample = _in_sample(len(tables.original), sampled)
    if codes is None:
        return _found(tables, *first_copies(tables, in_sample), in_sample)
    n_o = len(tables.original)
    real_cells = None if cells is None else cells["real"][:n_o]
    at_o, at_s = hash_candidates(_row_sums(codes["original"], real_cells),
                                 _row_sums(codes["synthetic"], None if cells is None else cells["synthetic"]))
    roles = ("original", "synthetic")
    sub = {"original": codes["original"][at_o], "synthetic": codes["synthetic"][at_s]}
    ids = dict(zip(roles, row_identities(
        *(Block(np.zeros((len(sub[r]), 0)), sub[r], (), ()) for r in roles)), strict=True))
    release, training = first_copies(tables, in_sample[at_o], ids=ids)
    return _found(tables, at_s[release], at_o[training], in_sample)


def _in_sample(n: int, sampled: np.ndarray | None) -> np.ndarray:
    """Per training row (canonical position), whether it is among the ``sampled`` ones."""
    in_sample = np.zeros(n, dtype=bool)
    in_sample[slice(None) if sampled is None else sampled] = True
    return in_sample


def _found(tables: Tables, release: np.ndarray, training: np.ndarray, in_sample: np.ndarray
           ) -> dict[str, np.ndarray]:
    """A full-table join's pairs (canonical positions) as input row numbers, with ``outside``
    and ``release_at`` (the release rows' canonical positions, for the drop-and-retest)."""
    outside = ~in_sample[training]
    at = release.copy()
    for role, pos in (("synthetic", release), ("original", training)):
        nums = tables.row_numbers.get(role)
        if nums is not None:
            pos[:] = np.asarray(nums)[pos]
    return {"release": release, "training": training, "outside": outside, "release_at": at}


def near_copies_of(tables: Tables, sampled: np.ndarray | None,
                   codes: Mapping[str, np.ndarray] | None = None,
                   cells: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The full-table join of the one-cell copies: every release row that differs in exactly one
    compared cell from a training row which is the only real record (training or control, ALL of
    them) within one cell of it, by the near-copy test's own join
    (:func:`synthguard.metrics.privacy._copies.identifying_matches` on the exact-value codes of
    :func:`~synthguard.metrics.privacy.matching.compared_columns`).

    Returns ``release`` and ``training`` (input row numbers, by release row) and ``outside`` (True
    when the training row is not among the ``sampled`` canonical positions; ``None``: all are);
    nothing without a control table (the test needs one). ``codes``: :func:`_compared_codes`
    with the control (``None``: encoded here); ``cells``: :func:`_compared_cells` of those codes,
    when held (the block join's cell hashes, not computed again).

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.data.tables import prepare_tables
    >>> o = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"], "c": [5, 6, 7]})
    >>> c = pd.DataFrame({"a": [8, 9], "b": ["u", "v"], "c": [1, 2]})
    >>> s = pd.DataFrame({"a": [1, 2, 4], "b": ["x", "y", "q"], "c": [0, 6, 0]})
    >>> t = prepare_tables(o, s, c).in_canonical_order()
    >>> found = near_copies_of(t, None)  # release row 1 is a verbatim copy, row 2 copies no one
    >>> found["release"].tolist(), found["training"].tolist(), found["outside"].tolist()
    ([0], [0], [False])
    """
    from ..metrics.privacy._copies import identifying_matches
    from ..metrics.privacy.matching import compared_columns

    none = np.zeros(0, dtype=np.int64)
    cols = compared_columns(tables.schema)
    if not cols or tables.control is None:
        return {"release": none, "training": none, "outside": np.zeros(0, dtype=bool)}
    if codes is None or "real" not in codes:
        codes, cells = _compared_codes(tables, True), None
    real, rel = codes["real"], codes["synthetic"]
    n_o = len(tables.original)
    release, record = identifying_matches(real, rel, 1, cells=None if cells is None else
                                          (cells["synthetic"], cells["real"]),
                                          distinct=codes.get("distinct"))
    keep = record < n_o
    release, record = release[keep], record[keep]
    changed = (real[record] != rel[release]).sum(axis=1) == 1  # not a verbatim copy
    return _found(tables, release[changed], record[changed], _in_sample(n_o, sampled))


def copy_records(copies: Mapping[str, np.ndarray], listed: set[Any], alarm: bool,
                 metric: str, family: str = "exact", round_: int | None = None,
                 level: str | None = None) -> list[dict[str, Any]]:
    """The records-export rows of the full-table copies of ``family`` (``"exact"`` or
    ``"near1"``) not already ``listed`` (release rows the run's own rows name), under the test
    ``metric``: input row numbers, action ``drop`` when that test alarms (``alarm``; after an
    in-run drop-and-retest, when it dropped them, in round ``round_``), else ``review``; or, when
    the test reads ``level`` (low, inconclusive...: not a finding), action ``context``, its
    reason saying so (:func:`synthguard.run.wording.context_reason`). The reason is in the
    unsampled export's words (:func:`synthguard.run.wording.joined_copy_reason`), saying whether
    the copied record is among the sampled records. Vectorised: one reason per (family, sampled
    or not), the rows built column by column.

    Examples
    --------
    >>> rows = copy_records({"release": np.array([4, 7]), "training": np.array([1, 9]),
    ...                      "outside": np.array([False, True])}, {4}, True, "exact_matches")
    >>> [(r["release_row"], r["action"], r["reason"]) for r in rows]
    [(7, 'drop', 'verbatim copy of its training row (exact_matches); found by the join of the release against every training record: its training row is not among the sampled records the tests ran on')]
    """
    from .drops import CONTEXT, plain_records
    from .wording import context_reason, joined_copy_reason

    release = np.asarray(copies["release"], dtype=np.int64)
    keep = ~np.isin(release, np.fromiter((r for r in listed if r is not None), dtype=np.int64))
    outside = np.asarray(copies["outside"], dtype=bool)[keep]
    cells = CELLS_CHANGED[family]
    words = [joined_copy_reason(cells, metric, False), joined_copy_reason(cells, metric, True)]
    if level is not None:
        words = [context_reason(w, metric, level) for w in words]
    words = np.asarray(words, dtype=object)
    action = "drop" if alarm else ("review" if level is None else CONTEXT)
    n = int(keep.sum())
    frame = pd.DataFrame({"metric": np.full(n, metric, dtype=object),
                          "risk": np.full(n, "presence", dtype=object),
                          "action": np.full(n, action, dtype=object),
                          "release_row": release[keep],
                          "training_row": np.asarray(copies["training"], dtype=np.int64)[keep],
                          "reason": words[outside.astype(np.int64)],
                          "rank": np.full(n, None, dtype=object),
                          "family": np.full(n, family, dtype=object),
                          "tests": np.full(n, metric, dtype=object),
                          "round": np.full(n, round_ if alarm else None, dtype=object)})
    return plain_records(frame)
