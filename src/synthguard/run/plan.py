"""The plan of a run, shown before any metric runs: the tables and their sizes, the tests that will
run, an estimate of time and memory from the sizes, and what makes a plan large (``--dry-run``
prints it and stops); and the progress bars of the run's stages.

The estimate
------------
Every test is costed alike (a neutral default until a metric's ``@register`` card declares its own
cost), from what the data of whole-process runs show: a cost per test, plus a part that grows with
the cells (rows x columns) of the real records the tests ask about (training and control: the
sample's when ``--max-records`` samples them) and a part that grows with the release's cells, each
to its own power (the query and the release cost differently: at the same 1M release, 200,000 +
200,000 sampled records took 67 s, all 1.25M 158 s); a test that runs once per
column (its card's ``per_column`` parameter left unset, e.g. ``inference``'s ``secret``) counts as
``(columns / 15) ** COLUMN_EXPONENT`` tests, the power fitted on tables of 15 to 401 columns; and a
fixed start-up per run. Memory: a fixed part plus a part per query cells and one per release cells,
each to its power. The constants come from ``benchmarks/plan_calibration.py`` (the runs, the
command and the load in ``docs/scaling.md``); the plan states the estimate as a range
(:data:`SPREAD`), from the worst misfit of those runs and a margin for load.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["LARGE_SECONDS", "Plan", "PlanOnly", "estimate", "make_plan", "stage"]

# Fitted by benchmarks/plan_calibration.py (2 cores, 2026-12-05, session 30, main bde218f; load
# 0.9-3.4: docs/scaling.md has the runs, the command and each run's load): the default and privacy
# presets at 2,000 and 10,000 rows, the privacy preset at 200,000 rows and sampled at 200,000:50,000,
# 1M:50,000, 1M:200,000 and 3M:200,000 and 1M unsampled (15 columns; control a quarter; the two 1M
# runs measured quiet in session 29), and the default preset on nhefs widened to 15, 50, 100, 200
# and 401 columns (700 + 700 rows, and 350 + 350 at 100 and 401). "Query" cells: rows x columns of
# the real records the tests ask about (training and control; the sample's when sampled);
# "release" cells: the release's.
#: seconds of a run whatever its size and tests (start-up: imports, reading)
FIXED_SECONDS = 0.807
#: seconds per test whatever the size
METRIC_SECONDS = 0.0047
#: seconds per test per million query cells to the power :data:`QUERY_EXPONENT`
SECONDS_PER_QUERY_MCELL = 0.554
QUERY_EXPONENT = 0.6
#: seconds per test per million release cells to the power :data:`RELEASE_EXPONENT` (the fit's
#: grid stops at 1.5: a power of 2 fits the runs as well but says 2,000 s for the 10M sampled
#: run, whose first run took about 610 s at load 2.6-4 in session 24; 1.5 says 830 s)
SECONDS_PER_RELEASE_MCELL = 0.0152
RELEASE_EXPONENT = 1.5
#: a test that runs once per column counts as ``(columns / CALIBRATION_COLUMNS) ** COLUMN_EXPONENT``
#: tests (at least one), fitted on nhefs widened to 15-401 columns
COLUMN_EXPONENT = 1.65
#: peak memory of a run whatever its size, per million query cells to the power
#: :data:`MB_QUERY_EXPONENT` and per million release cells to the power :data:`MB_RELEASE_EXPONENT`
#: (1, not fitted: the release is held whole; a fitted power, 0.3, said 3.5 GB for the 10M
#: sampled run that peaked at 11 GB)
FIXED_MB = 239.0
MB_PER_QUERY_MCELL = 738.0
MB_QUERY_EXPONENT = 0.4
MB_PER_RELEASE_MCELL = 47.1
MB_RELEASE_EXPONENT = 1.0
#: the estimate's range: from estimate / SPREAD to estimate * SPREAD (the fitted runs fell within
#: x0.77 to x1.37 of the estimate at load 0.9-3.4; the rest is room for a busier machine)
SPREAD = 1.75
#: columns of the calibration tables (a once-per-column test counts as ``(columns / this) **
#: COLUMN_EXPONENT`` tests)
CALIBRATION_COLUMNS = 15
#: a plan estimated above this many seconds is called large and says what to declare
LARGE_SECONDS = 600.0
#: a large plan offers a sample of the records (``--max-records``) when the training or the control
#: table holds more rows than this: a sample of 200,000 estimates every share up to 5 % to +-0.1 %
#: (docs/scaling.md); a sample of a smaller table saves little
SAMPLE_ADVICE_ROWS = 200_000


class PlanOnly(Exception):  # noqa: N818 - a signal, not an error: the caller asked for the plan only
    """Raised by a plan callback to stop a run after its plan (``--dry-run``); carries the plan."""

    def __init__(self, plan: Plan) -> None:
        super().__init__("plan only")
        self.plan = plan


@dataclass(frozen=True)
class Plan:
    """What a run will do, before it does it.

    Attributes
    ----------
    tables : mapping
        Role -> ``{"rows", "columns"}``.
    sample : str or None
        The records the tests run on when they are a sample (``None``: every record).
    metrics : tuple of str
        The tests that will run, in order.
    unavailable : mapping
        Tests of the preset that will not run, with the reason.
    per_column : mapping
        Metric -> parameter that makes it run once per column (left unset in this run).
    seconds : float
        Estimated wall time (range ``seconds / spread`` .. ``seconds * spread``).
    memory_mb : float
        Estimated peak memory.
    spread : float
        Factor of the estimate's range.
    large : tuple of str
        Why the plan is large and what to declare; empty for a plan of ordinary size.
    retests : int
        At most this many more runs of the verdict's tests, made only when a risk alarms: the
        advice's drop-and-retest rounds and coarsened columns (0: none can run).
    retest_seconds : float
        Estimated wall time of those runs together (not part of ``seconds``).
    """

    tables: Mapping[str, Mapping[str, int]]
    metrics: tuple[str, ...]
    seconds: float
    memory_mb: float
    spread: float = SPREAD
    sample: str | None = None
    unavailable: Mapping[str, str] = field(default_factory=dict)
    per_column: Mapping[str, str] = field(default_factory=dict)
    large: tuple[str, ...] = ()
    retests: int = 0
    retest_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The plan as plain JSON data."""
        return asdict(self)

    def render(self) -> str:
        """The plan as a few lines of text (``--dry-run``, and stderr before a run).

        Examples
        --------
        >>> print(Plan({"original": {"rows": 2000, "columns": 15}}, ("exact_matches",), 5.0, 500.0).render())
        plan: original 2,000 rows x 15 columns; every record (no sample)
          1 test: exact_matches
          estimated 3 s to 9 s, about 500 MB peak memory
        """
        sizes = ", ".join(f"{role} {t['rows']:,} rows x {t['columns']:,} columns" for role, t in self.tables.items())
        lines = [f"plan: {sizes}; {self.sample or 'every record (no sample)'}",
                 f"  {len(self.metrics)} test{'s' if len(self.metrics) != 1 else ''}: {', '.join(self.metrics)}"]
        reasons: dict[str, list[str]] = {}
        for m, why in self.unavailable.items():
            reasons.setdefault(why, []).append(m)
        lines += [f"  not run ({why}): {', '.join(ms)}" for why, ms in reasons.items()]
        lines.append(f"  estimated {_duration(self.seconds / self.spread)} to "
                     f"{_duration(self.seconds * self.spread)}, about {_megabytes(self.memory_mb)} peak memory")
        if self.retests:
            lines.append(f"  then, only if a risk alarms: up to {self.retests} more run"
                         f"{'s' if self.retests != 1 else ''} of the verdict's tests to re-test the "
                         f"advice, up to about {_duration(self.retest_seconds * self.spread)} more "
                         "(retest_rows and retest_columns 0: none)")
        lines += [f"  large plan: {why}" for why in self.large]
        return "\n".join(lines)


def _duration(seconds: float) -> str:
    """``42 s``, ``7 min``, ``2.5 h``."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def _megabytes(mb: float) -> str:
    return f"{round(mb, -1):,.0f} MB" if mb < 10_000 else f"{mb / 1024:.0f} GB"


def per_column_parameter(spec: Any, params: Mapping[str, Any]) -> str | None:
    """The parameter that makes ``spec`` run once per column when unset (its card's
    ``per_column``; ``params``: the run's values), ``None`` when it is set or the card names none."""
    name = getattr(spec, "per_column", None)
    if name and params.get(name) is None:
        return str(name)
    return None


def query_release_cells(sizes: Mapping[str, tuple[int, int]]) -> tuple[float, float]:
    """The cells (rows x columns) of the real records the tests ask about (training and control:
    the sample's when sampled) and of the release, from ``sizes`` (role -> ``(rows, columns)``).

    Examples
    --------
    >>> query_release_cells({"original": (2000, 15), "synthetic": (2000, 15), "control": (500, 15)})
    (37500.0, 30000.0)
    """
    query = float(sum(r * c for role, (r, c) in sizes.items() if role != "synthetic"))
    r, c = sizes.get("synthetic", (0, 0))
    return query, float(r * c)


def tried_columns(sizes: Mapping[str, tuple[int, int]], quasi_identifiers: Sequence[str] = ()) -> int:
    """The columns a once-per-column test runs over: every column, less the declared
    quasi-identifiers (never fewer than 1 when some are declared).

    Examples
    --------
    >>> tried_columns({"original": (700, 401), "synthetic": (700, 401)}, ["age_0", "sex_0"])
    399
    """
    columns = max((c for _, c in sizes.values()), default=0)
    return max(columns - len(quasi_identifiers), 1) if quasi_identifiers else columns


def estimate(query_cells: float, release_cells: float, columns: int, n_metrics: int,
             n_per_column: int = 0) -> tuple[float, float]:
    """Estimated seconds and peak MB of a run of ``n_metrics`` tests asking about ``query_cells``
    real cells (training and control: the sample's when sampled) against ``release_cells``
    release cells, ``n_per_column`` of the tests once per column of ``columns``.

    Every test costs ``METRIC_SECONDS + SECONDS_PER_QUERY_MCELL x query Mcells ** QUERY_EXPONENT
    + SECONDS_PER_RELEASE_MCELL x release Mcells ** RELEASE_EXPONENT``; a once-per-column test
    counts as ``(columns / CALIBRATION_COLUMNS) ** COLUMN_EXPONENT`` tests (at least one); the run
    adds ``FIXED_SECONDS``. Memory: ``FIXED_MB + MB_PER_QUERY_MCELL x query Mcells **
    MB_QUERY_EXPONENT + MB_PER_RELEASE_MCELL x release Mcells ** MB_RELEASE_EXPONENT``.

    Examples
    --------
    >>> s, mb = estimate(2500 * 15, 2000 * 15, 15, 28)
    >>> round(s), round(mb)
    (3, 439)

    The sampled 1M run (200,000 training and 200,000 control records against the whole 1M
    release) against the unsampled one:

    >>> round(estimate(400_000 * 15, 1e6 * 15, 11, 28)[0]), round(estimate(1_250_000 * 15, 1e6 * 15, 11, 28)[0])
    (71, 116)
    """
    query, release = query_cells / 1e6, release_cells / 1e6
    unit = (METRIC_SECONDS + SECONDS_PER_QUERY_MCELL * query ** QUERY_EXPONENT
            + SECONDS_PER_RELEASE_MCELL * release ** RELEASE_EXPONENT)
    tests = n_metrics + n_per_column * (max(1.0, columns / CALIBRATION_COLUMNS) ** COLUMN_EXPONENT - 1.0)
    return FIXED_SECONDS + unit * tests, (FIXED_MB + MB_PER_QUERY_MCELL * query ** MB_QUERY_EXPONENT
                                          + MB_PER_RELEASE_MCELL * release ** MB_RELEASE_EXPONENT)


def make_plan(sizes: Mapping[str, tuple[int, int]], metrics: Sequence[str], specs: Mapping[str, Any],
              params: Mapping[str, Mapping[str, Any]], *, quasi_identifiers: Sequence[str] = (),
              sensitive: Sequence[str] = (), unavailable: Mapping[str, str] | None = None,
              sample: str | None = None, retests: int = 0) -> Plan:
    """The plan of a run.

    Parameters
    ----------
    sizes : mapping
        Role -> ``(rows, columns)``.
    metrics : sequence of str
        The run's metric names, in order.
    specs : mapping
        Run name -> the metric's registry card (:class:`synthguard.registry.MetricSpec`).
    params : mapping
        Run name -> the parameters the run gives it.
    quasi_identifiers, sensitive : sequence of str
        Declared in the metadata.
    unavailable : mapping, optional
        Metrics of the preset that will not run, with the reason.
    sample : str, optional
        The records the tests run on, when a sample.
    retests : int
        At most this many more runs of the verdict's tests (the metrics whose card names a risk)
        that the advice makes when a risk alarms; their time is estimated apart.

    Examples
    --------
    >>> p = make_plan({"original": (1_000_000, 100), "synthetic": (1_000_000, 100)},
    ...               [f"m{i}" for i in range(36)], {}, {})
    >>> p.large[0][:46]
    'estimated 14 min for 36 tests on 100 columns; '
    >>> make_plan({"original": (2000, 15), "synthetic": (2000, 15)}, ["m"], {}, {}).large
    ()
    """
    tables = {role: {"rows": int(r), "columns": int(c)} for role, (r, c) in sizes.items()}
    query, release = query_release_cells(sizes)
    columns = max((c for _, c in sizes.values()), default=0)
    # a metric with its per-column parameter unset runs once per declared sensitive column when
    # there are any (``inference``'s secrets), else once per column (not a quasi-identifier)
    per_col = {} if sensitive else {
        m: p for m in metrics if (p := per_column_parameter(specs.get(m), params.get(m, {}))) is not None}
    tried = tried_columns(sizes, quasi_identifiers)
    seconds, mb = estimate(query, release, tried, len(metrics), len(per_col))  # (columns: only for those runs)
    large: list[str] = []
    if seconds > LARGE_SECONDS:
        why = [f"estimated {_duration(seconds)} for {len(metrics)} tests on {columns:,} columns"]
        if per_col:
            which = "column that is not a quasi-identifier" if quasi_identifiers else "column"
            why.append(", ".join(f"{m!r} runs once per {which} ({tried:,} times: parameter {p!r} unset)"
                                 for m, p in per_col.items()))
        if not quasi_identifiers:
            why.append("no quasi-identifiers are declared: the attacks take every column as known "
                       "to the attacker")
        large.append("; ".join(why))
        missing = [what for what, have in (
            ("'quasi_identifiers' (the columns an attacker may know)", quasi_identifiers),
            ("'sensitive' columns", sensitive)) if not have]
        todo = [f"declare {' and '.join(missing)} in the metadata"] if missing else []
        real = max((int(sizes[r][0]) for r in ("original", "control") if r in sizes), default=0)
        if sample is None and real > SAMPLE_ADVICE_ROWS:
            todo.append(f"test a sample of the records (--max-records N, e.g. {SAMPLE_ADVICE_ROWS:,})")
        todo += [f"give {m!r} its {p!r} (config: metrics: {{{m}: {{{p}: COLUMN}}}})" for m, p in per_col.items()]
        todo.append(("or run" if todo else "run") + " fewer tests (--preset quick, --metrics)")
        large.append("to bound it: " + "; ".join(todo))
    verdict = [m for m in metrics if getattr(specs.get(m), "risk", None)]
    if not verdict:
        retests = 0
    again = 0.0
    if retests:
        again = retests * estimate(query, release, tried, len(verdict),
                                   len([m for m in verdict if m in per_col]))[0]
    return Plan(tables, tuple(metrics), seconds, mb, SPREAD, sample, dict(unavailable or {}), per_col,
                tuple(large), int(retests), again)


@contextmanager
def stage(name: str, enabled: bool, total: int | None = None) -> Iterator[Any]:
    """A progress bar on stderr for one stage of a run (``enabled`` and stderr a terminal; nothing
    otherwise): yields the bar (``bar.update(n)``) or ``None``."""
    if not enabled:
        yield None
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=name, leave=False, disable=None,
               bar_format="{desc}: {elapsed}" if total is None else None)
    try:
        yield bar
    finally:
        bar.close()


def plan_for_run(tables: Any, run_config: Any, skipped: Mapping[str, str] | None = None,
                 sample: Mapping[str, Any] | None = None, retests: int = 0) -> Plan:
    """The plan of ``run_config`` on validated ``tables`` (in one process or partitioned);
    ``skipped``: metrics of the run that will be skipped, with the reason (a distributed run);
    ``sample``: ``tables`` hold a sample of the inputs' records (the report header's ``sample``,
    :func:`synthguard.run.sample.draw_sample`): the plan's sizes and estimate are the sample's,
    and it says of how many records; ``retests``: at most this many more runs of the verdict's
    tests for the advice (:func:`make_plan`)."""
    from ..registry import get_metric

    skipped = dict(skipped or {})
    names = [n for n in run_config.metrics if n not in skipped]
    metric_of = getattr(run_config, "metric_of", lambda n: n)
    ncols = len(tables.schema.names)
    sizes = {role: (len(tables.get(role)), ncols) for role in tables.roles}
    said = None
    if sample:
        said = ("the tests run on a seeded uniform sample of " + " and ".join(
            f"{sample[r]['rows']:,} of {sample[r]['of']:,} {w} records"
            for r, w in (("original", "training"), ("control", "control")) if r in sample)
                + f" (max_records {sample['max_records']:,})")
        from .sample import with_release_queries

        rq = with_release_queries(dict(sample), int(sample["max_records"]), tables,
                                  [metric_of(n) for n in names]).get("release_queries")
        if rq:
            said += (f"; {', '.join(rq['tests'])} on {rq['rows']:,} of the {rq['of']:,} release rows "
                     "as queries")
    return make_plan(sizes, names, {n: get_metric(metric_of(n)) for n in names},
                     {n: dict(run_config.metrics[n]) for n in names}, sample=said,
                     quasi_identifiers=tables.schema.quasi_identifiers,
                     sensitive=tables.schema.sensitive, retests=retests,
                     unavailable={**dict(getattr(run_config, "unavailable", None) or {}), **skipped})
