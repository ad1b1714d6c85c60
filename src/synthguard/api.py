"""The public entry points: :func:`evaluate` and :func:`compare` run through :mod:`synthguard.run` and
wrap its plain output (:class:`~synthguard.run.executor.RunOutput`) into a
:class:`~synthguard.report.Report`. This module sits above ``run/`` and ``report/`` so that neither
imports the other upward (``docs/architecture.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - imported on first use (``import synthguard`` stays cheap)
    from .report import Report
    from .report.compare import Comparison
    from .run.executor import RunOutput
    from .run.options import EvaluateOptions

__all__ = ["compare", "evaluate", "report_of"]


def report_of(out: RunOutput) -> Report:
    """The :class:`~synthguard.report.Report` of a run's plain output (header, entries, results,
    verdict as :func:`synthguard.run.executor.build_report` returns them).

    Examples
    --------
    >>> import pandas as pd
    >>> from synthguard.run.config import build_config
    >>> from synthguard.data.tables import prepare_tables
    >>> from synthguard.run.runner import run_tables
    >>> o = pd.DataFrame({"a": range(40), "b": ["x", "y"] * 20})
    >>> rep = report_of(run_tables(prepare_tables(o, o), build_config(["exact_matches"], None, None)))
    >>> rep.status("exact_matches")
    'ok'
    """
    from .report import Report

    return Report(out.header, out.entries, out.results, out.verdict)


def evaluate(original: Any = None, synthetic: Any = None, control: Any = None, metadata: Any = None,
             metrics: Any = None, config: Mapping[str, Any] | str | Path | None = None,
             seed: int | None = None, *, preset: str | None = None, backend: str = "auto",
             progress: bool = False, generator: Any = None, cache: Any = None,
             on_progress: Callable[[str, int, int], Any] | None = None,
             original_stats: Any = None, risk_rule: str | None = None,
             materiality: float | None = None, release_type: str | None = None,
             alpha: float | None = None,
             entity_key: str | None = None, sequence_key: str | None = None,
             original_context: Any = None, synthetic_context: Any = None,
             control_context: Any = None, client: Any = None, jobs: int | None = None,
             retest_columns: int | None = None, on_plan: Callable[[Any], Any] | None = None,
             retest_rows: int | None = None, max_records: int | None = None,
             options: EvaluateOptions | None = None,
             context: Any = None) -> Report:
    """Evaluate a synthetic release against the real data it was made from.

    Every argument after ``metadata`` is an option of the run: the keyword arguments build one
    :class:`~synthguard.run.options.EvaluateOptions` (validated once), or pass one as ``options=``
    (then no other option may be given). :func:`compare` takes the same options.

    Parameters
    ----------
    original : DataFrame or path, or None
        The real rows the generator was trained on (CSV or Parquet path, or a DataFrame). ``None``
        when ``original_stats`` is given. Default: the config's ``data.original``.
    synthetic : DataFrame or path
        The release to evaluate. Default: the config's ``data.synthetic`` (likewise ``control``
        and ``metadata`` default to ``data.control`` / ``data.metadata``).
    control : DataFrame or path, optional
        Real rows held out from training; gives residual risks and holdout baselines.
    metadata : mapping or path, optional
        SynEval-style metadata (sdtypes, quasi-identifiers, sensitive and text columns).
        Missing sdtypes are inferred and listed under ``inferred_metadata`` in the report.
    metrics : list of str or mapping, optional
        Metric names, or ``{name: {param: value}}``. Default: the config's, else the preset's, else
        every default metric.
    config : mapping or path, optional
        ``{"metrics": ..., "thresholds": {name: {...}}, "preset": ...}`` (YAML or JSON file).
    seed : int, optional
        Seed of every random choice: the same seed gives the same numbers. Default: the config's
        ``seed``, else 0.
    preset : str, optional
        ``"quick"``, ``"privacy"`` or ``"full"``.
    backend : {"auto", "numba", "numpy"}
        Neighbour-engine backend.
    progress : bool
        Show a progress bar on stderr.
    generator : object, optional
        For metrics that need a generator.
    cache : bool, str, Path or DiskCache, optional
        Disk cache of metric results (off by default). ``True`` uses ``$SYNTHGUARD_CACHE_DIR``
        (else ``~/.cache/synthguard``); a path uses that folder. Results read back from the cache
        are marked ``"cached": true`` in the JSON report. See :mod:`synthguard.engine.cache`.
    on_progress : callable, optional
        Called as ``on_progress(metric, step, total)`` after each metric finishes (ran, skipped,
        failed or read from the cache), ``step`` counting from 1 to ``total``: for notebooks and
        services. Works with or without ``progress``. An exception it raises stops the evaluation.
    original_stats : path, mapping or OriginalStats, optional
        The original's statistics (``synthguard profile`` / :func:`synthguard.run.profile.profile`)
        instead of its rows: every metric that can run from them does (``accuracy``,
        ``quality_report``), the rest are skipped as needing the original rows.
    risk_rule : {"calibrated", "reference"}, optional
        How risk levels and the verdict are decided (:mod:`synthguard.run.verdict`). Default: the
        config's ``risk_rule``, else ``"calibrated"`` (tests of training rows against the control).
    materiality : float, optional
        Share of training records exposed beyond chance that matters (default 0.01).
    release_type : {"synthetic", "anonymised"}, optional
        Default: the config's, else the metadata's ``release_type``, else ``"synthetic"``.
    alpha : float, optional
        Family-wise false-alarm rate of the verdict (default 0.05).
    entity_key : str, optional
        Column naming the person each row belongs to (sequential data: many rows per person). Every
        privacy metric then runs on one row per entity (``docs/entity-level.md``) and the entity-level
        metrics (``entity_copies``, ``subsequence_copies``, sequence fidelity) are added. Also read from
        the metadata (``entity_key``, SDV sequential or multi-table metadata).
    sequence_key : str, optional
        Column ordering a person's events (number or date).
    original_context, synthetic_context, control_context : DataFrame or path, optional
        One row per entity (constant per person), joined on the entity key.
    jobs : int, optional
        Metrics run at once (threads). Default (``None``): 2 (at most one per core), each metric's
        compiled kernels on its share of the cores, where numba's threading layer allows it
        (``omp``, ``tbb``) and no table holds more than 10M rows (the advice's re-tests: 2M),
        else 1 (measured: see
        ``docs/performance.md``, "Parallel where it is free"); ``0`` or less: one thread per core. The numbers are identical whatever ``jobs``
        (see :mod:`synthguard.engine.parallel`).
    client : distributed.Client, optional
        Run on this Dask cluster (needs ``synthguard[dask]``): inputs may then also be partitioned
        Parquet datasets (a folder or glob) or dask DataFrames; the metrics
        whose card says ``backend="any"`` run over partitions with the same numbers as here, the
        others are reported ``skipped``. Every other argument is honoured the same way (``cache``,
        ``progress``, ``on_progress``, named runs) or refused with one line (``ConfigError`` naming
        it: ``original_stats``, entity options, ``generator``, ``jobs`` other than 1). The
        drop-and-retest and the coarsen-and-retest run on the cluster too (rows dropped and columns
        coarsened partition by partition, the edges and categories asked of the cluster), with the
        same report entries as here. See ``docs/scaling.md``.
    retest_columns : int, optional
        When singling out or attribute inference alarms, at most this many of the columns driving
        it are re-tested coarsened (quantile bins, or the most frequent categories): one more run
        of the verdict's tests each; the report gives each risk's level after
        (:mod:`synthguard.run.actions`). ``0`` switches it off. Default 2 (on a Dask cluster too:
        the coarsened tables are built on the cluster, the same entries as in one process).
    on_plan : callable, optional
        Called with the run's :class:`~synthguard.run.plan.Plan` (tables, tests, estimated time
        and memory, why a plan is large) once the inputs are read, before any metric runs;
        raising :class:`~synthguard.run.plan.PlanOnly` there stops the run (``--dry-run``).
    retest_rows : int, optional
        When a test alarms and names release rows to drop (copies, near-copies, close
        neighbours), they are dropped (copies first) and every test of the verdict is run again on
        the release without them, in at most this many rounds (rows still named after a round are
        dropped in the next); the report gives each alarming risk's level after and what still
        alarms (:func:`synthguard.run.actions.drop_retest`). ``0`` switches it off (the rows are
        still listed). Default 1 (in one process and on a Dask cluster alike, with the same
        result but on tables where a copy's crowd exceeds the one-process budget: see
        ``docs/scaling.md``).
    max_records : int, optional
        When the original (training) or the control table holds more rows, every test runs on a
        seeded uniform sample of this many of each (drawn from ``seed``, whatever the input row
        order), against the whole release, which is never sampled as a test's reference (the
        tests whose queries are release rows, their cards' ``queries="release"``, ask
        of a seeded sample of this many release rows); the report states the samples (header
        ``sample``, one sentence of the verdict) and its intervals and detection limits are the
        sample's. Exact copies are still found and listed for every training row (a full-table
        join). Default ``0``: never sample (``synthguard.run.sample.DEFAULT_MAX_RECORDS``; 200,000
        estimates every share up to 5 % to +-0.1 %, see ``docs/scaling.md``). In one process, without entity options.
    options : EvaluateOptions, optional
        All of the above in one object, instead of the keyword arguments.
    context : path, mapping or DossierContext, optional
        The release's organisational context for the dossier (release model, recipients,
        purpose, controller, signatory, decision, review date...; ``docs/dossier.md``), checked
        before any metric runs and kept on the report (``report.context``), never in its JSON.

    Returns
    -------
    Report
        ``report["dcr"]``, ``report.to_dict()``, ``report.to_json(path)``.

    Raises
    ------
    InputError, ConfigError
        Bad inputs or configuration, before any metric runs.
    """
    from .report.context import load_context
    from .run.options import EvaluateOptions
    from .run.runner import run_evaluation

    dossier_context = load_context(context)  # checked before any work
    opts = EvaluateOptions.build(options, **_options_of(locals()))
    report = report_of(run_evaluation(original, synthetic, control, metadata, opts))
    report.context = dossier_context
    return report


def compare(original: Any, synthetics: Mapping[str, Any] | Sequence[Any], control: Any = None,
            metadata: Any = None, metrics: Any = None,
            config: Mapping[str, Any] | str | Path | None = None, seed: int | None = None, *,
            preset: str | None = None, backend: str = "auto", progress: bool = False,
            generator: Any = None, cache: Any = None,
            on_progress: Callable[[str, int, int], Any] | None = None,
            original_stats: Any = None, risk_rule: str | None = None,
            materiality: float | None = None, release_type: str | None = None,
            alpha: float | None = None,
            entity_key: str | None = None, sequence_key: str | None = None,
            original_context: Any = None, synthetic_context: Any = None,
            control_context: Any = None, client: Any = None, jobs: int | None = None,
            retest_columns: int | None = None, on_plan: Callable[[Any], Any] | None = None,
            retest_rows: int | None = None, max_records: int | None = None,
            options: EvaluateOptions | None = None,
            context: Any = None) -> Comparison:
    """Evaluate several releases of the same original with the same options and rank them.

    Parameters
    ----------
    original, control, metadata
        As in :func:`synthguard.evaluate` (``original`` may be ``None`` with ``original_stats``).
    context
        As in :func:`synthguard.evaluate`: the dossier's organisational fields, for every release.
    synthetics : mapping name -> DataFrame/path, or a sequence of them
        The releases; a sequence is named by file name (paths) or ``release_<i>``.
    metrics, config, seed, preset, backend, progress, generator, cache, on_progress, \
original_stats, risk_rule, materiality, release_type, alpha, entity_key, sequence_key, \
original_context, control_context, client, jobs, retest_columns, on_plan, retest_rows, \
max_records, options
        The options of :func:`synthguard.evaluate`, applied to every release (one
        :class:`~synthguard.run.options.EvaluateOptions`; one disk cache shared by the releases;
        ``on_progress`` and ``on_plan`` are called for every release in turn).
    synthetic_context
        Refused with one line: each release has its own entities' context; evaluate the releases
        one at a time with :func:`synthguard.evaluate` for it.

    Returns
    -------
    Comparison
        ``.ranking``, ``.reports``, ``.to_console()``, ``.to_json()``, ``.to_html()``.
    """
    from .errors import ConfigError
    from .report.compare import Comparison
    from .run.options import EvaluateOptions

    opts = EvaluateOptions.build(options, **_options_of(locals()))
    opts.refuse("compare", COMPARE_REFUSES)
    if isinstance(synthetics, Mapping):
        named = dict(synthetics)
    else:
        named = {}
        for i, s in enumerate(synthetics):
            key = Path(s).stem if isinstance(s, (str, Path)) else f"release_{i + 1}"
            while key in named:
                key = f"{key}_{i + 1}"
            named[key] = s
    if len(named) < 1:
        raise ConfigError("compare needs at least one synthetic release")
    reports = {name: evaluate(original, syn, control, metadata, options=opts, context=context)
               for name, syn in named.items()}
    return Comparison(reports)


#: The options :func:`compare` cannot honour, with why (it honours every other one).
COMPARE_REFUSES = {"synthetic_context": "each release has its own entities' context: evaluate the "
                                        "releases one at a time with synthguard.evaluate"}


def _options_of(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The options among a call's arguments (``locals()`` of :func:`evaluate` / :func:`compare`)."""
    from .run.options import OPTION_NAMES

    return {k: arguments[k] for k in OPTION_NAMES}
