"""Neighbour searches a drop-and-retest answers from the run it re-tests.

The drop-and-retest (:func:`synthguard.run.actions.drop_retest`) runs every verdict test again on
the same tables without some release rows. Much of that second run's searching is already done:

- a search on tables that did not change (training against control, ...) has the same answer;
- a search with the release rows as queries has, for every kept release row, the answer it had
  (a sampled run asks some release rows: the re-test reads the rows its sample shares with the
  run's and searches the others);
- a search with the release as reference has the same answer for every query none of whose ``k``
  nearest release rows was dropped: removing rows that are not among a query's ``k`` nearest
  cannot change them, and ties still go to the lower row because the kept release rows keep
  their order (checked: otherwise nothing of such a search is reused). Only the queries that lost
  a neighbour are searched again.

So the re-test gives the same numbers, byte for byte, as a re-test that searches everything again
(``tests/unit/engine/test_reuse.py`` compares the two reports). Nothing is taken on trust: a block
of the re-test is reused only when its bytes equal the run's block at the kept rows. An encoding
that moved (a category or the earliest datetime went with the dropped rows) makes the search run
again in full.

One process's searches (:class:`~synthguard.engine.backend.LocalBackend`) and a cluster's
(``DaskBackend``: its partitioned searches, the answers on the driver) both go through
:func:`search`; a cluster's are keyed by the run's tables (``DaskBackend.reuse_key``), as are
the run's results of the training and control rows alone (:func:`real_memo`), its near-copy
pairs and copy crowds of release rows (:func:`release_pairs_memo`) and its release structures
(:func:`keep_release_structure`). There no block is encoded again to be compared: the tables say
what is unchanged (``column_same`` of :func:`derive_searches`: a release filtered of rows, the
other tables the run's own, each column typed and coded as in the run; a search in seconds is
keyed by its datetime origins as well, ``DaskBackend._seconds_kind``), and the driver keeps at
most a budget of bytes (:func:`keep_searches`; its re-tests keep no answer of their own).
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pandas.api.types import is_datetime64_any_dtype

__all__ = ["RELEASE", "block_name", "derive_searches", "first_positions_memo", "forget_searches",
           "keep_release_structure",
           "keep_searches", "real_memo", "release_counts", "release_pairs_memo", "renumbering",
           "run_release_structure", "search", "tracked"]

#: The role whose rows a drop-and-retest removes.
RELEASE = "synthetic"

#: Rows compared at a time when a re-test's release block is checked against the run's.
_CHECK_ROWS = 1 << 18

#: The trees of the whole release a run keeps for its re-tests, in bytes at most: a re-test's
#: search of its release reads them without the dropped rows instead of building a tree of it
#: (at 1M release rows of 15 columns, two trees of about 170 and 140 MB; at 10M, none).
TREE_BYTES = 512 * 2**20

#: The largest structure of the release's rows a run keeps for its re-tests
#: (:func:`keep_release_structure`): the singling-out search's partners of 1M release rows are
#: 32 MB (with their rows, 40 MB).
STRUCTURE_BYTES = 256 * 2**20

Result = tuple[np.ndarray, np.ndarray]


@dataclass
class _Ledger:
    """The searches of one run: key -> (distances, indices), both read-only; ``some``: the
    searches of some release rows as queries, key -> (those rows, their answers); ``among``: the
    searches among some release rows, key -> (those rows, the answers); ``real``: results of the
    training and control rows alone (:func:`real_memo`), key -> result."""

    done: dict[tuple, Result] = field(default_factory=dict)
    real: dict[Any, Any] = field(default_factory=dict)
    some: dict[tuple, tuple[np.ndarray, Result]] = field(default_factory=dict)
    among: dict[tuple, tuple[np.ndarray, Result]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: the trees of the whole release the run's searches read (:data:`TREE_BYTES` at most): a
    #: re-test's search of its release reads them without the dropped rows
    trees: list = field(default_factory=list)
    #: the most bytes of arrays ``real`` keeps, and as many the searches (``None``: no limit;
    #: :func:`keep_searches`), and how many each keeps
    real_bytes: int | None = None
    kept_bytes: int = 0
    searched_bytes: int = 0
    #: whether the trees of the release the run's searches build here are kept (one process:
    #: a cluster's trees are its workers')
    keeps_trees: bool = True

    def keep(self, key: Any, value: Any) -> Any:
        """``real.setdefault(key, value)`` within :attr:`real_bytes`: a result past it is
        returned, not kept (a re-test computes it again)."""
        with self.lock:
            if key in self.real:
                return self.real[key]
            size = 0 if self.real_bytes is None else _result_bytes(value)  # measured under a limit
            if self.real_bytes is None or self.kept_bytes + size <= self.real_bytes:
                self.real[key] = value
                self.kept_bytes += size
            return value

    def put(self, table: dict, key: Any, value: Any) -> None:
        """``table.setdefault(key, value)`` (a table of searches) within :attr:`real_bytes` of
        searches (a budget of their own: a search of every real record does not crowd out the
        results of :attr:`real`): a search past it is not kept (a re-test searches again)."""
        size = 0 if self.real_bytes is None else _result_bytes(value)  # measured under a limit
        with self.lock:
            if key in table:
                return
            if self.real_bytes is None or self.searched_bytes + size <= self.real_bytes:
                table[key] = value
                self.searched_bytes += size


@dataclass
class _Derivation:
    """A re-test's link to the run it re-tests: the run's encoded view and searches, and for every
    release row of the re-test its position in the run; ``answers``: the re-test's own answers, by
    search (a search asked again in the re-test, say by two tests that do not share a memo, reads
    its first answer: the same inputs, the same bytes)."""

    parent: Any
    ledger: _Ledger
    rows: np.ndarray
    monotone: bool
    #: ``(role, column) -> bool``, whether the re-test's column of ``role`` is the run's (the
    #: release's at the kept rows), typed and coded alike, said by the tables (a cluster's: no
    #: block to compare); ``None``: the blocks compared byte for byte
    column_same: Callable[[str, str], bool] | None = None
    same: dict[tuple, bool] = field(default_factory=dict)
    answers: dict[tuple, Result] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_LEDGERS: weakref.WeakKeyDictionary[Any, _Ledger] = weakref.WeakKeyDictionary()
_DERIVED: weakref.WeakKeyDictionary[Any, _Derivation] = weakref.WeakKeyDictionary()


def keep_searches(view: Any, real_bytes: int | None = None, trees: bool = True) -> None:
    """Keep the searches of the run on ``view`` (an :class:`~synthguard.data.encoding.EncodedView`,
    or a cluster run's tables) for its re-tests; ``real_bytes``: the most bytes of results (of the
    real records alone, release rows' pairs and structures) kept, and as many of searches,
    ``None`` for no limit (one process: they are held in its memory anyway). ``trees``: keep the
    trees of the release its searches build here (one process's; a cluster's are its workers').

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.data.tables import prepare_tables
    >>> from synthguard.data.encoding import EncodedView
    >>> t = prepare_tables(pd.DataFrame({"x": [1.0, 2.0]}), pd.DataFrame({"x": [1.0, 3.0]}))
    >>> keep_searches(EncodedView(t))
    """
    _LEDGERS[view] = _Ledger(real_bytes=real_bytes, keeps_trees=trees)


def forget_searches(view: Any) -> None:
    """Stop keeping the searches of the run on ``view`` (its drop-and-retest rounds are over:
    the memory goes back).

    Examples
    --------
    >>> class View:  # stands for an EncodedView
    ...     pass
    >>> v = View()
    >>> keep_searches(v); forget_searches(v); forget_searches(v)  # twice is harmless
    """
    _LEDGERS.pop(view, None)


def derive_searches(view: Any, parent: Any, release_rows: np.ndarray,
                    column_same: Callable[[str, str], bool] | None = None) -> bool:
    """Let the re-test on ``view`` answer from the searches kept on ``parent``
    (:func:`keep_searches`); ``release_rows``: for each release row of ``view``, its position in
    ``parent``'s release. ``False`` when ``parent`` kept none (nothing to reuse). While ``view``
    lives, a search of its release reads the run's tree of the release, kept or spare, without
    the dropped rows (:func:`~synthguard.engine.neighbors.engine.searched_subset`).

    ``view`` and ``parent`` have ``tables`` (``roles``, ``get(role)`` with a length): encoded
    views, or a cluster run's tables (``DaskBackend.reuse_key``). ``column_same(role, column)``: whether ``view``'s column of
    ``role`` holds the run's values (the release's at the kept rows), typed and coded as the run's,
    as the caller knows it from how ``view``'s tables were made; without it each column is encoded
    again and compared byte for byte (one process).

    Examples
    --------
    >>> import numpy as np
    >>> class View:  # stands for an EncodedView
    ...     pass
    >>> derive_searches(View(), View(), np.arange(3))  # the parent kept no search
    False
    """
    ledger = _LEDGERS.get(parent)
    if ledger is None:
        return False
    rows = np.asarray(release_rows, dtype=np.int64)
    monotone = bool(rows.size < 2 or np.all(np.diff(rows) > 0))
    _DERIVED[view] = _Derivation(parent, ledger, rows, monotone, column_same)
    if monotone and column_same is None:
        # a search of the release reads the run's tree of it without the dropped rows (one
        # process: a cluster keeps no tree)
        from .neighbors.engine import searched_subset

        with ledger.lock:
            trees = tuple(ledger.trees)
        weakref.finalize(view, searched_subset(len(parent.tables.get(RELEASE)), rows, trees))
    return True


def tracked(view: Any) -> bool:
    """Whether ``view`` keeps its searches for re-tests or is a re-test's (derives from a run).

    Examples
    --------
    >>> class View:  # stands for an EncodedView
    ...     pass
    >>> v = View()
    >>> tracked(v), keep_searches(v), tracked(v)
    (False, None, True)
    """
    return view in _LEDGERS or view in _DERIVED


def _digest(*parts: Any) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:  # loop over the key's parts (a handful)
        if isinstance(p, np.ndarray):
            a = np.ascontiguousarray(p)
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes())
        else:
            h.update(repr(p).encode())
        h.update(b"|")
    return h.hexdigest()


def _metric_key(metric: Any) -> str:
    """The distance's parameters as a key (arrays by their bytes)."""
    fields = getattr(metric, "__dataclass_fields__", None)
    if fields is None:
        return _digest(repr(metric))
    return _digest(type(metric).__name__, *(getattr(metric, f) for f in fields))


def _rows_key(rows: np.ndarray | None) -> str | None:
    return None if rows is None else _digest(np.asarray(rows, dtype=np.int64))


def _column_rows(view: Any, frame: Any, column: str, exact: bool, at: np.ndarray | slice) -> np.ndarray:
    """The encoded values of ``frame``'s ``column`` at rows ``at``, as ``view``'s block of
    ``frame`` holds them (numbers as float64, categories as int64 codes): a categorical column of a
    frame the view's encoder learnt once (its run's tables) is read from the factorisation it keeps,
    ``lookup[factor[at]]`` (the codes its blocks are made of: no value looked up again); any other
    column is encoded at those rows alone, cell by cell as a block encodes it."""
    enc = view.encoder
    if not enc.is_numeric(column):
        got = enc.kept_codes(frame, column, at)
        if got is not None:
            return got
    part = frame[[column]].iloc[at]
    block = view.encode(part, [column], exact_datetimes=exact)
    return block.num[:, 0] if block.num.shape[1] else block.cat[:, 0]


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


def block_name(block: Any) -> str:
    """The name :func:`search` knows rows the caller holds by (an encoded
    :class:`~synthguard.data.encoding.Block`, not a role of the tables): their bytes' digest."""
    return "rows " + _digest(block.num, block.cat, tuple(block.num_columns), tuple(block.cat_columns))


def _unchanged(d: _Derivation, view: Any, role: str, columns: tuple[str, ...], exact: bool) -> bool:
    """Is ``role``'s block on ``columns`` in ``view`` byte for byte the parent's (the release's at
    the kept rows)? Memoised per block. Rows the caller holds (:func:`block_name`) are named by
    their bytes: unchanged by definition."""
    if role.startswith("rows "):
        return True
    if "+" in role:  # roles pooled (in this order)
        return all(_unchanged(d, view, r, columns, exact) for r in role.split("+"))
    key = (role, columns, exact)
    with d.lock:
        if key in d.same:
            return d.same[key]
    # a block's bytes are its columns' side by side, each column encoded alone: checked a column
    # at a time, each column once per re-test whatever blocks it is part of (at 10M release rows
    # a block of 15 columns encoded again for every check cost several seconds)
    same = all(_column_unchanged(d, view, role, c, exact) for c in columns)
    with d.lock:
        d.same[key] = same
    return same


def _column_unchanged(d: _Derivation, view: Any, role: str, column: str, exact: bool) -> bool:
    """Is ``role``'s ``column`` in ``view`` encoded byte for byte as the parent's (the release's at
    the kept rows)? Memoised per column; compared a row block at a time (bounded memory), the
    parent's categorical codes read from the factorisation its encoder keeps
    (:func:`_column_rows`); said by ``d.column_same`` when the re-test's tables say it."""
    if d.column_same is not None:
        key = (role, (column,), "said")
        with d.lock:
            if key not in d.same:
                d.same[key] = bool(d.column_same(role, column))
            return d.same[key]
    frame, theirs = view.tables.get(role), d.parent.tables.get(role)
    # seconds or days tell apart datetime columns only: one check of any other column
    timed = any(is_datetime64_any_dtype(f[column].dtype) for f in (frame, theirs))
    key = (role, (column,), bool(exact and timed))
    with d.lock:
        if key in d.same:
            return d.same[key]
    # the parent's rows behind each of mine: the kept release rows, the same rows of another role
    rows = d.rows if role == RELEASE else np.arange(len(theirs), dtype=np.int64)
    same = len(frame) == rows.size
    for a in range(0, rows.size, _CHECK_ROWS):  # row blocks: bounded memory
        if not same:
            break
        at = rows[a:a + _CHECK_ROWS]
        same = _same_bytes(_column_rows(view, frame, column, exact, slice(a, a + at.size)),
                           _column_rows(d.parent, theirs, column, exact, at))
    with d.lock:
        d.same[key] = same
    return same


def real_memo(view: Any, key: Any, compute: Callable[[], Any], columns: Sequence[str]) -> Any:
    """``compute()``, a result of the training and control rows alone on ``columns`` (it reads no
    release row: the leak rows built from training records, a record's crowd among the real
    records, ...): kept for the re-tests (and the run's later askers) when ``view`` keeps its
    searches, and read by a re-test
    from the run it derives from when the training and control blocks on ``columns`` are byte for
    byte the run's (:func:`_unchanged`; the tables differ in release rows only). ``key`` names the
    result and everything it depends on beside those rows. Read-only, shared like the memo's
    entries.

    Examples
    --------
    >>> class View:  # stands for an EncodedView
    ...     pass
    >>> real_memo(View(), "answer", lambda: 42, ["x"])
    42
    """
    d = _DERIVED.get(view)
    if d is not None:
        with d.ledger.lock:
            got = d.ledger.real.get(key, _ABSENT)
        cols = tuple(columns)
        roles = [r for r in ("original", "control") if r in d.parent.tables.roles]
        if got is not _ABSENT and all(_unchanged(d, view, r, cols, False) for r in roles):
            return got
        return compute()
    ledger = _LEDGERS.get(view)
    if ledger is not None:  # asked again in the run (a memo freed after its first users): kept
        with ledger.lock:
            got = ledger.real.get(key, _ABSENT)
        if got is not _ABSENT:
            return got
    out = compute()
    if ledger is not None:
        out = ledger.keep(key, out)
    return out


_ABSENT = object()


def first_positions_memo(view: Any, key: Any, compute: Callable[[], dict[str, np.ndarray]],
                         columns: Sequence[str]) -> dict[str, np.ndarray]:
    """``compute()``: per role of ``view``'s tables, each row's identity on ``columns``, the
    smallest position, over the roles' rows pooled in their order, of a row with the same content
    (a cluster's row identities, ``distributed._backend.first_positions``): kept for the re-tests
    when ``view`` keeps its searches (read-only; on a bounded budget only while they take at most a
    quarter of it), and derived by a re-test from the run's where
    every table on ``columns`` is the run's (the release's at the kept rows, :func:`_unchanged`):
    rows equal in the run are equal in the re-test, so a row's identity there is the smallest
    pooled position, in the re-test's tables, among the kept rows of its run's group
    (:func:`pooled_first_positions`; no pass over the tables). ``key`` names the result beside
    those rows.

    Examples
    --------
    >>> import numpy as np
    >>> class View:  # stands for a cluster run's tables
    ...     pass
    >>> first_positions_memo(View(), "ids", lambda: {"original": np.array([0, 0])}, ["x"])
    {'original': array([0, 0])}
    """
    d = _DERIVED.get(view)
    if d is not None:
        with d.ledger.lock:
            got = d.ledger.real.get(("first positions", key), _ABSENT)
        cols = tuple(columns)
        roles = tuple(view.tables.roles)
        if got is not _ABSENT and tuple(d.parent.tables.roles) == roles and set(got) == set(roles) \
                and all(_unchanged(d, view, r, cols, False) for r in roles):
            labels = {r: got[r][d.rows] if r == RELEASE else got[r] for r in roles}
            return pooled_first_positions(labels, roles)
        return compute()
    out = compute()
    ledger = _LEDGERS.get(view)
    # kept when they take at most a quarter of a bounded budget (at 10M pooled rows, 176 MB:
    # not kept, the re-test computes them, so they crowd out no other result)
    if ledger is not None and (ledger.real_bytes is None or _result_bytes(out) <= ledger.real_bytes // 4):
        for a in out.values():  # the roles' arrays
            a.setflags(write=False)
        out = ledger.keep(("first positions", key), out)
    return out


def pooled_first_positions(labels: dict[str, np.ndarray], roles: Sequence[str]) -> dict[str, np.ndarray]:
    """Per role of ``roles``, each row's smallest position, over the roles' rows pooled in that
    order, among the rows with its label (equal labels: equal rows).

    Examples
    --------
    >>> import numpy as np
    >>> got = pooled_first_positions({"a": np.array([7, 3]), "b": np.array([3, 9, 7])}, ["a", "b"])
    >>> got["a"].tolist(), got["b"].tolist()
    ([0, 1], [1, 3, 0])
    """
    from ..core.arrays import first_per_key

    pooled = np.concatenate([np.asarray(labels[r], dtype=np.int64) for r in roles]) if roles \
        else np.zeros(0, dtype=np.int64)
    ids = first_per_key(pooled, int(pooled.max()) + 1 if pooled.size else 0)[pooled]
    ends = np.cumsum([len(labels[r]) for r in roles])
    return {r: part for r, part in zip(roles, np.split(ids, ends[:-1]), strict=True)}


def _result_bytes(value: Any, depth: int = 0) -> int:
    """The bytes of the arrays a kept result holds: arrays, pandas objects, and those inside its
    tuples, mappings and fields, a few levels deep (a result is a handful of them)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if hasattr(value, "memory_usage") and hasattr(value, "index"):  # a pandas frame or series
        return int(np.sum(value.memory_usage(index=False)))
    if depth >= 4:
        return 0
    if isinstance(value, dict):
        items: Any = value.values()
    elif isinstance(value, (tuple, list)):
        items = value
    elif hasattr(value, "__dict__") or hasattr(value, "__slots__"):
        names = getattr(value, "__slots__", None) or vars(value)
        items = [getattr(value, n, None) for n in names]
    else:
        return 0
    return sum(_result_bytes(v, depth + 1) for v in items)  # loop over a result's few parts


def keep_release_structure(view: Any, key: Any, value: tuple[np.ndarray, ...]) -> None:
    """Keep ``value`` (arrays the caller does not change again: kept as given, not copied), a
    structure the run on ``view`` built over some of its release rows (the singling-out search's
    partners), for its re-tests to start from (:func:`run_release_structure`): kept when ``view``
    keeps its searches and the arrays hold at most :data:`STRUCTURE_BYTES`. A re-test uses it only
    where any answer is right (a partner is a row to compare with) or checks what it derives from
    it.

    Examples
    --------
    >>> import numpy as np
    >>> class View:  # stands for an EncodedView
    ...     pass
    >>> v = View()
    >>> keep_release_structure(v, "k", (np.arange(3),))  # the view keeps no searches: nothing kept
    >>> run_release_structure(v, "k") is None
    True
    """
    ledger = _LEDGERS.get(view)
    if ledger is None or sum(int(np.asarray(a).nbytes) for a in value) > STRUCTURE_BYTES:
        return
    ledger.keep(("release structure", key), value)


def run_release_structure(view: Any, key: Any) -> tuple[tuple[np.ndarray, ...], np.ndarray] | None:
    """For a re-test on ``view``: what its run kept under ``key`` (:func:`keep_release_structure`)
    and, for each release row of the re-test, its position in the run's release; ``None`` when
    ``view`` is no re-test's or its run kept nothing under ``key``."""
    d = _DERIVED.get(view)
    if d is None:
        return None
    with d.ledger.lock:
        got = d.ledger.real.get(("release structure", key), _ABSENT)
    return None if got is _ABSENT else (got, d.rows)


def renumbering(theirs: np.ndarray, mine: np.ndarray) -> np.ndarray:
    """For each of ``theirs`` (distinct positions, at least 0), the index of the same position in
    ``mine`` (distinct), ``-1`` where ``mine`` lacks it (a lookup table over the positions): the
    rows of a run's structure renumbered as a re-test's (``mine``: the re-test's rows as
    positions of the run's release).

    Examples
    --------
    >>> import numpy as np
    >>> renumbering(np.array([7, 3, 5]), np.array([5, 7])).tolist()
    [1, -1, 0]
    """
    theirs, mine = np.asarray(theirs, dtype=np.int64), np.asarray(mine, dtype=np.int64)
    if theirs.size == 0 or mine.size == 0:
        return np.full(theirs.size, -1, dtype=np.int64)
    return _places(mine, int(max(theirs.max(), mine.max())) + 1)[theirs]


def _places(mine: np.ndarray, size: int) -> np.ndarray:
    """Per position ``0 .. size - 1``: its index in ``mine`` (distinct positions), ``-1`` where
    ``mine`` lacks it (the run's release rows renumbered as a re-test's: ``mine = d.rows``)."""
    at = np.full(size, -1, dtype=np.int64)
    at[mine] = np.arange(mine.size)
    return at


def release_pairs_memo(view: Any, key: Any, compute: Callable[[], Result], columns: Sequence[str]
                       ) -> Result:
    """``compute()``: pairs ``(release rows, partners)`` (read-only arrays), the release rows
    ascending, where each release row's pairs depend on that row and the training and control rows
    alone (the near-copy join: the one real record within ``k`` cells of a release row, by the
    row's values alone; a copy's crowd, the real records within ``k`` cells of it): kept for the re-tests when ``view`` keeps its searches, and read by a
    re-test from the run it derives from when its release (at the kept rows, which keep their
    order), training and control blocks on ``columns`` are byte for byte the run's (:func:`_unchanged`, datetimes in seconds):
    the run's pairs of the kept rows, renumbered; the pairs of the dropped rows left out. ``key``
    names the result and everything it depends on beside those rows.

    Examples
    --------
    >>> import numpy as np
    >>> class View:  # stands for an EncodedView
    ...     pass
    >>> rows, partners = release_pairs_memo(View(), "pairs",
    ...                                     lambda: (np.array([1, 4]), np.array([0, 2])), ["x"])
    >>> rows, rows.flags.writeable  # read-only: the re-tests read the same arrays
    (array([1, 4]), False)
    """
    d = _DERIVED.get(view)
    if d is not None:
        with d.ledger.lock:
            got = d.ledger.real.get(("release pairs", key), _ABSENT)
        cols = tuple(columns)
        if got is not _ABSENT and d.monotone and all(
                _unchanged(d, view, r, cols, True) for r in d.parent.tables.roles):
            rows, partners = got
            new_of = _places(d.rows, len(d.parent.tables.get(RELEASE)))
            mapped = new_of[rows]
            kept = mapped >= 0
            return _frozen((mapped[kept], partners[kept]))
        return _frozen(compute())
    out = _frozen(compute())
    ledger = _LEDGERS.get(view)
    if ledger is not None:
        out = ledger.keep(("release pairs", key), out)
    return out


def release_counts(view: Any, key: Any, query: str, columns: Sequence[str],
                   count: Callable[[Any, Any], np.ndarray]) -> np.ndarray:
    """Per ``query`` row (training or control, every row), how many release rows match it, where
    a pair's match depends on its two rows alone (a sum over the release rows: the
    ``new_row_synthesis`` evidence's tolerance join): ``count(query block, release block)``,
    the blocks on ``columns`` (datetimes in days).

    Kept for the re-tests when ``view`` keeps its searches. A re-test whose ``query`` and release
    blocks are byte for byte the run's (the release at the kept rows, :func:`_unchanged`) reads
    the run's counts and takes off, for the rows that had one, the counts against the dropped
    release rows alone (encoded as the run encoded them): the counts against the kept rows, by
    integer subtraction, without a join of the whole release again. ``key`` names the count and
    everything it depends on beside the rows (the tolerance).

    Examples
    --------
    >>> import numpy as np
    >>> class View:  # stands for an EncodedView
    ...     def block(self, role, columns):
    ...         return role
    >>> release_counts(View(), "c", "original", ["x"], lambda q, r: np.array([2, 0]))
    array([2, 0])
    """
    cols = list(columns)
    d = _DERIVED.get(view)
    if d is not None:
        with d.ledger.lock:
            got = d.ledger.real.get(("release counts", query, key), _ABSENT)
        if got is not _ABSENT and _unchanged(d, view, query, tuple(cols), False) \
                and _unchanged(d, view, RELEASE, tuple(cols), False):
            gone = np.ones(len(d.parent.tables.get(RELEASE)), dtype=bool)
            gone[d.rows] = False
            out = np.array(got, dtype=np.int64)
            had = np.flatnonzero(out > 0)
            if had.size and gone.any():
                theirs = d.parent.tables.get(RELEASE)
                dropped = d.parent.encode(theirs.iloc[np.flatnonzero(gone)], cols)
                out[had] -= count(view.block(query, cols).take(had), dropped)
            return out
        return count(view.block(query, cols), view.block(RELEASE, cols))
    out = count(view.block(query, cols), view.block(RELEASE, cols))
    ledger = _LEDGERS.get(view)
    if ledger is not None:
        out.setflags(write=False)
        out = ledger.keep(("release counts", query, key), out)
    return out


def _frozen(result: Result) -> Result:
    for a in result:  # the two arrays
        a.setflags(write=False)
    return result


def search(view: Any, kind: str, query: str, reference: str, columns: Sequence[str], metric: Any,
           k: int, run: Callable[[np.ndarray | None, np.ndarray | None], Result], *,
           query_rows: np.ndarray | None = None, reference_rows: np.ndarray | None = None,
           exact_datetimes: bool = False, renumber: bool = True) -> Result:
    """The k nearest ``reference`` rows of the ``query`` rows, from the searches of the run this
    re-test derives from where they answer it (see the module docstring), else from
    ``run(query_rows, reference_rows)``; kept for the re-tests when ``view`` keeps its searches.

    ``query`` and ``reference`` are roles, or for rows the caller holds their :func:`block_name`
    (a query, or a reference of rows the caller holds: searched against those same bytes, the
    answer is the run's); a reference of several roles pooled in order is named ``"a+b"``. ``kind`` names the search family (its key); ``exact_datetimes``: the blocks the search reads
    (see :meth:`~synthguard.data.encoding.EncodedView.block`). ``renumber=False``: the answer is
    not the k nearest rows by their positions in ``reference`` (say, positions among its distinct
    rows, or counts beside the distances), so a re-test with the release as (part of) the
    reference searches again in full. Returns ``(distances, indices)``, read-only.

    Examples
    --------
    >>> import numpy as np
    >>> class View:  # stands for an EncodedView
    ...     pass
    >>> calls = []
    >>> def run(q, r):
    ...     calls.append(1)
    ...     return np.zeros((2, 1)), np.zeros((2, 1), dtype=np.int64)
    >>> d, i = search(View(), "demo", "original", "control", ["x"], None, 1, run)
    >>> len(calls), d.flags.writeable
    (1, False)
    """
    cols = tuple(columns)
    mk = _metric_key(metric)
    d = _DERIVED.get(view)
    if d is not None:
        asked = (kind, query, reference, cols, mk, int(k), _rows_key(query_rows),
                 _rows_key(reference_rows), bool(exact_datetimes), bool(renumber))
        with d.lock:
            again = d.answers.get(asked)
        if again is not None:
            return again
        got = _reuse(d, view, kind, query, reference, cols, mk, k, run, query_rows, reference_rows,
                     exact_datetimes, renumber)
        out = _frozen(got if got is not None else run(query_rows, reference_rows))
        if d.ledger.real_bytes is None:  # kept unless the run's memory is bounded (a cluster's)
            with d.lock:
                out = d.answers.setdefault(asked, out)
        if got is not None:
            return out
    else:
        ledger = _LEDGERS.get(view)
        if ledger is not None and ledger.keeps_trees and reference == RELEASE and query != RELEASE \
                and renumber:
            from .neighbors.engine import recording

            with recording() as trees:  # the trees of the release it reads, kept for re-tests
                out = _frozen(run(query_rows, reference_rows))
            _keep_trees(ledger, trees, len(view.tables.get(RELEASE)))
        else:
            out = _frozen(run(query_rows, reference_rows))
    ledger = _LEDGERS.get(view)
    # kept only when a re-test can read it
    if ledger is not None and _reusable(query, reference, renumber):
        if reference == RELEASE and reference_rows is not None:
            # some release rows as reference (the trio's distinct rows): kept with those rows
            key = (kind, query, reference, cols, mk, int(k), _rows_key(query_rows))
            ledger.put(ledger.among, key, (np.array(reference_rows, dtype=np.int64), out))
            return out
        if query == RELEASE and query_rows is not None:
            # some release rows as queries (a sampled run's): kept with their positions, a
            # re-test reads the rows its own sample shares with them
            key = (kind, query, reference, cols, mk, int(k), _rows_key(reference_rows))
            ledger.put(ledger.some, key, (np.array(query_rows, dtype=np.int64), out))
            return out
        key = (kind, query, reference, cols, mk, int(k), _rows_key(query_rows), _rows_key(reference_rows))
        ledger.put(ledger.done, key, out)
    return out


def _keep_trees(ledger: _Ledger, trees: Sequence[Any], n_release: int) -> None:
    """Keep, for the re-tests, the trees among ``trees`` of every release row (``n_release``
    rows), while the kept trees' bytes stay within :data:`TREE_BYTES`."""
    with ledger.lock:
        for tree in trees:
            if tree.perm.size == n_release and not any(t is tree for t in ledger.trees) \
                    and sum(t.nbytes for t in ledger.trees) + tree.nbytes <= TREE_BYTES:
                ledger.trees.append(tree)


#: Search kinds whose answer is the ``k`` nearest rows in columns, ascending by (distance, row):
#: the first ``k`` columns of a wider search of theirs are the ``k``-nearest search. Matched
#: whole: a kind whose answer packs more beside its neighbours (a cluster's ``"seconds ..."``,
#: tie counts after the indices) must not be cut.
_NEAREST_COLUMNS = frozenset({"days", "seconds", "held", "among"})

#: Where ``k`` sits in a ledger key.
_K_AT = 5


def _first_columns(result: Result, k: int) -> Result:
    return np.ascontiguousarray(result[0][:, :k]), np.ascontiguousarray(result[1][:, :k])


def _kept(ledger: _Ledger, table: dict[tuple, Any], kind: str, key: tuple, k: int,
          with_rows: bool = False, cut: bool = True) -> Any:
    """``table[key]``, or when the run searched the same with more neighbours (a ``kind`` of
    :data:`_NEAREST_COLUMNS`), the narrowest such answer cut to its first ``k`` columns: the
    ``k`` nearest rows are the first ``k`` of the ``k' > k`` nearest (ties go to the lower row
    either way). A re-test asks fewer when its ``k`` follows the release's size (the membership
    attacks' release search: ``k`` times the release rows over the reference rows). ``with_rows``:
    the entries are ``(rows, answer)``. ``cut=False``: the wider answer whole (the release as
    reference: a query that lost some of its ``k'`` nearest may keep ``k`` of them,
    :func:`_renumbered`)."""
    got = table.get(key)
    if got is not None or kind not in _NEAREST_COLUMNS:
        return got
    with ledger.lock:
        entries = list(table.items())
    best: tuple[int, Any] | None = None
    for other, value in entries:  # loop over the run's kept searches (a few dozen)
        if len(other) == len(key) and other[_K_AT] > k and other[:_K_AT] == key[:_K_AT] \
                and other[_K_AT + 1:] == key[_K_AT + 1:] and (best is None or other[_K_AT] < best[0]):
            best = (other[_K_AT], value)
    if best is None:
        return None
    if not cut:
        return best[1]
    if with_rows:
        return best[1][0], _first_columns(best[1][1], k)
    return _first_columns(best[1], k)


def _reusable(query: str, reference: str, renumber: bool) -> bool:
    """Whether a re-test can answer from a search of ``query`` against ``reference`` (else it
    searches again in full, and the run does not keep the search): not with the release on both
    sides, nor pooled into the reference, nor as a reference whose answer is not release
    positions (``renumber=False``)."""
    if query == RELEASE and reference == RELEASE or ("+" in reference and RELEASE in reference.split("+")):
        return False
    return reference != RELEASE or renumber


def _reuse(d: _Derivation, view: Any, kind: str, query: str, reference: str, cols: tuple[str, ...],
           mk: str, k: int, run: Callable[[np.ndarray | None, np.ndarray | None], Result],
           query_rows: np.ndarray | None, reference_rows: np.ndarray | None, exact: bool,
           renumber: bool = True) -> Result | None:
    """The re-test's answer from the run's searches, or ``None`` (search in full)."""
    if not _reusable(query, reference, renumber):
        return None
    rk = _rows_key(reference_rows)
    if query == RELEASE:  # the kept release rows: the run's answers at their positions
        kept = _kept(d.ledger, d.ledger.done, kind, (kind, query, reference, cols, mk, int(k), None, rk), k)
        if kept is None:
            return _some_release_rows(d, view, kind, reference, cols, mk, k, run, query_rows,
                                      reference_rows, exact)
        if not (_unchanged(d, view, query, cols, exact) and _unchanged(d, view, reference, cols, exact)):
            return None
        at = d.rows if query_rows is None else d.rows[np.asarray(query_rows, dtype=np.int64)]
        return kept[0][at], kept[1][at]
    if reference == RELEASE and reference_rows is not None:
        return _among_release_rows(d, view, kind, query, cols, mk, k, run, query_rows,
                                   reference_rows, exact)
    kept = _kept(d.ledger, d.ledger.done, kind, (kind, query, reference, cols, mk, int(k), _rows_key(query_rows),
                                                 None if reference == RELEASE else rk), k,
                 cut=reference != RELEASE)
    if kept is None or not _unchanged(d, view, query, cols, exact):
        return None
    if reference != RELEASE:  # nothing changed
        if not _unchanged(d, view, reference, cols, exact):
            return None
        return kept  # read-only: shared, not copied
    if reference_rows is not None or not d.monotone or not _unchanged(d, view, reference, cols, exact):
        return None
    # the release as reference: the run's neighbours renumbered; queries that lost one searched again
    new_of = _places(d.rows, len(d.parent.tables.get(RELEASE)))
    return _renumbered(kept, new_of, run, query_rows, None, k)


def _renumbered(kept: Result, new_of: np.ndarray, run: Callable[[np.ndarray | None, np.ndarray | None], Result],
                query_rows: np.ndarray | None, reference_rows: np.ndarray | None,
                k: int | None = None) -> Result:
    """The run's answers with the release as reference, its reference positions renumbered by
    ``new_of`` (-1: dropped), for the ``k`` nearest (default: as many as the run searched).

    A query that lost none of its ``k`` nearest keeps them. One that lost some but still holds
    ``k`` of the run's ``k' >= k`` nearest has those (the first ``k`` kept, in the run's order):
    every release row outside the run's ``k'`` nearest comes after all of them by (distance,
    row), and the kept rows keep their order (renumbering is monotone), so no row can come
    between. The others are searched again."""
    dist_w, idx = kept
    k = idx.shape[1] if k is None else int(k)
    mapped = np.where(idx >= 0, new_of[np.maximum(idx, 0)], -1)
    valid = mapped >= 0
    lost = ((idx[:, :k] >= 0) & ~valid[:, :k]).any(axis=1)
    dist = np.array(dist_w[:, :k])  # a copy of the first k columns, in the run's layout
    out = np.ascontiguousarray(mapped[:, :k])
    if lost.any():
        at = np.flatnonzero(lost)
        if idx.shape[1] > k:  # queries still holding k of the run's k' nearest: no search
            hold = at[valid[at].sum(axis=1) >= k]
            if hold.size:
                first = np.argsort(~valid[hold], axis=1, kind="stable")[:, :k]
                dist[hold] = np.take_along_axis(dist_w[hold], first, axis=1)
                out[hold] = np.take_along_axis(mapped[hold], first, axis=1)
                at = np.setdiff1d(at, hold, assume_unique=True)
        if at.size:
            again = at if query_rows is None else np.asarray(query_rows, dtype=np.int64)[at]
            nd, ni = run(again, reference_rows)
            dist[at] = nd
            out[at] = ni
    return dist, out


def _some_release_rows(d: _Derivation, view: Any, kind: str, reference: str, cols: tuple[str, ...],
                       mk: str, k: int, run: Callable[[np.ndarray | None, np.ndarray | None], Result],
                       query_rows: np.ndarray | None, reference_rows: np.ndarray | None,
                       exact: bool) -> Result | None:
    """Some release rows as queries when the run searched some release rows (a sampled run asks
    a seeded content sample of the release, and the re-test the same rule over the rows it
    keeps): the run's answers for the rows both samples hold (an answer is the query row's
    alone), a search for the others; ``None`` when the run kept no such search or a block
    moved."""
    if query_rows is None:
        return None
    got = _kept(d.ledger, d.ledger.some, kind, (kind, RELEASE, reference, cols, mk, int(k),
                                                _rows_key(reference_rows)), k, with_rows=True)
    if got is None or not (_unchanged(d, view, RELEASE, cols, exact)
                           and _unchanged(d, view, reference, cols, exact)):
        return None
    theirs, (dist, idx) = got
    mine = np.asarray(query_rows, dtype=np.int64)
    order = np.argsort(theirs, kind="stable")
    asked = d.rows[mine]  # my query rows as positions in the run's release
    pos = np.minimum(np.searchsorted(theirs[order], asked), max(theirs.size - 1, 0))
    hit = theirs[order][pos] == asked if theirs.size else np.zeros(mine.size, dtype=bool)
    out_d = np.empty((mine.size, *dist.shape[1:]), dtype=dist.dtype)
    out_i = np.empty((mine.size, *idx.shape[1:]), dtype=idx.dtype)
    out_d[hit] = dist[order[pos[hit]]]
    out_i[hit] = idx[order[pos[hit]]]
    if not hit.all():
        nd, ni = run(mine[~hit], reference_rows)
        out_d[~hit] = nd
        out_i[~hit] = ni
    return out_d, out_i


def _among_release_rows(d: _Derivation, view: Any, kind: str, query: str, cols: tuple[str, ...],
                        mk: str, k: int, run: Callable[[np.ndarray | None, np.ndarray | None], Result],
                        query_rows: np.ndarray | None, reference_rows: np.ndarray, exact: bool
                        ) -> Result | None:
    """Some release rows as reference (the trio's distinct release rows, in content-hash order)
    when the run searched among some release rows: the re-test's reference rows, as positions in
    the run's release, must be some of the run's reference rows in the same order (a distinct row
    whose first row went with the dropped rows is at another position: searched in full). Then
    the run's neighbours renumbered, and the queries that lost one searched again."""
    got = _kept(d.ledger, d.ledger.among, kind, (kind, query, RELEASE, cols, mk, int(k), _rows_key(query_rows)),
                k, with_rows=True, cut=False)
    if got is None or not (_unchanged(d, view, query, cols, exact)
                           and _unchanged(d, view, RELEASE, cols, exact)):
        return None
    theirs, kept = got
    mine = d.rows[np.asarray(reference_rows, dtype=np.int64)]  # positions in the run's release
    if not theirs.size or not mine.size:
        return None
    new_of = renumbering(theirs, mine)  # each of the run's reference rows: its place among mine
    placed = new_of[new_of >= 0]
    # every one of my reference rows is one of the run's, in the run's order
    if placed.size != mine.size or not bool(np.all(np.diff(placed) > 0)):
        return None
    return _renumbered(kept, new_of, run, query_rows, reference_rows, k)
