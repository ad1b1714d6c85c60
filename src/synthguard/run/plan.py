"""The plan of a run, shown before any metric runs: the tables and their sizes, the tests that will
run, an estimate of time and memory from the sizes, and what makes a plan large (``--dry-run``
prints it and stops); and the progress bars of the run's stages.

The estimate
------------
Every metric is costed alike (a neutral default until a metric's ``@register`` card declares its
own cost): a fixed cost plus a cost per cell of the three tables (rows x columns), and one more
factor of the number of columns for a metric that runs once per column (its card's ``per_column``
parameter left unset, e.g. ``inference``'s ``secret``). The constants come from measured
whole-process runs of the default and ``privacy`` presets at two sizes
(``benchmarks/plan_calibration.py``, the figures in ``docs/scaling.md``); the plan states the
estimate as a range (:data:`SPREAD`), from the worst misfit of those runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["LARGE_SECONDS", "Plan", "PlanOnly", "estimate", "make_plan", "stage"]

# Fitted by benchmarks/plan_calibration.py (2 cores, load 1.0-1.5, 2026-12-02, commit 033d1b0): the
# default and privacy presets at 2,000 and 10,000 rows and the privacy preset at 200,000 and
# 1,000,000 rows (15 columns; control a quarter); docs/scaling.md has the runs.
#: seconds of a run whatever its size (the fit found none beyond the per-metric cost)
FIXED_SECONDS = 0.0
#: seconds per metric whatever the size
METRIC_SECONDS = 0.352
#: seconds per metric per million cells (rows x columns, the three tables together) to the power
#: :data:`CELL_EXPONENT`: a run grows more slowly than its cells (tree searches, sampled attacks)
METRIC_SECONDS_PER_MCELL = 1.36
CELL_EXPONENT = 0.91
#: peak memory of a run whatever its size, and per million cells to the power :data:`MB_EXPONENT`
FIXED_MB = 469.0
MB_PER_MCELL = 106.5
MB_EXPONENT = 0.99
#: the estimate's range: from estimate / SPREAD to estimate * SPREAD (the fitted runs and the check
#: size fell within a factor 1.18 of the estimate on a quiet machine; the rest is room for load)
SPREAD = 1.5
#: columns of the calibration tables (a once-per-column metric costs columns / this times more)
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
          estimated 3 s to 8 s, about 500 MB peak memory
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


def estimate(cells: float, columns: int, n_metrics: int, n_per_column: int = 0) -> tuple[float, float]:
    """Estimated seconds and peak MB of a run of ``n_metrics`` metrics over ``cells`` cells (rows x
    columns of the tables together), ``n_per_column`` of them once per column.

    Examples
    --------
    >>> s, mb = estimate(3 * 2000 * 15, 15, 20)
    >>> round(s), round(mb)
    (10, 479)
    """
    mcells = cells / 1e6
    unit = METRIC_SECONDS + METRIC_SECONDS_PER_MCELL * mcells ** CELL_EXPONENT
    wide = max(1.0, columns / CALIBRATION_COLUMNS)
    seconds = FIXED_SECONDS + unit * (n_metrics - n_per_column) + unit * wide * n_per_column
    return seconds, FIXED_MB + MB_PER_MCELL * mcells ** MB_EXPONENT


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
    >>> p = make_plan({"original": (14000, 2002), "synthetic": (14000, 2002)},
    ...               [f"m{i}" for i in range(36)], {}, {})
    >>> p.large[0][:48]
    'estimated 32 min for 36 tests on 2,002 columns; '
    >>> make_plan({"original": (2000, 15), "synthetic": (2000, 15)}, ["m"], {}, {}).large
    ()
    """
    tables = {role: {"rows": int(r), "columns": int(c)} for role, (r, c) in sizes.items()}
    cells = float(sum(r * c for r, c in sizes.values()))
    columns = max((c for _, c in sizes.values()), default=0)
    # a metric with its per-column parameter unset runs once per declared sensitive column when
    # there are any (``inference``'s secrets), else once per column (not a quasi-identifier)
    per_col = {} if sensitive else {
        m: p for m in metrics if (p := per_column_parameter(specs.get(m), params.get(m, {}))) is not None}
    tried = max(columns - len(quasi_identifiers), 1) if quasi_identifiers else columns
    seconds, mb = estimate(cells, tried, len(metrics), len(per_col))  # (columns: only for those runs)
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
        again = retests * estimate(cells, tried, len(verdict),
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
