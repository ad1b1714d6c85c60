"""``synthguard evaluate``: one release (or several, ranked side by side) against its original."""

from __future__ import annotations

from pathlib import Path

import click

from .output import claim_stdout, say


def cache_options(func):
    """``--cache`` / ``--cache-dir`` (shared by evaluate, compare and demo)."""
    func = click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                        help="Cache folder (implies --cache). Default: $SYNTHGUARD_CACHE_DIR, else "
                             "$XDG_CACHE_HOME/synthguard or ~/.cache/synthguard.")(func)
    func = click.option("--cache", "use_cache", is_flag=True,
                        help="Reuse metric results cached on disk for the same data, parameters and "
                             "seed (off by default).")(func)
    return func


def jobs_option(func):
    """``--jobs`` (shared by evaluate, compare and demo)."""
    return click.option("--jobs", "-j", type=int, default=None,
                        help="Metrics run at once (threads); 0 or a negative number = one per "
                             "core. Default: 2 (at most one per core), their compiled kernels sharing the cores, where numba's "
                             "threading layer allows it (omp, tbb) and no table has more than 10M "
                             "rows (the advice's re-tests: 2M), else 1. Results are identical "
                             "whatever the number.")(func)


def resolve_cache(use_cache: bool, cache_dir: Path | None):
    """The ``cache`` argument of :func:`synthguard.evaluate` for the CLI flags."""
    if cache_dir is not None:
        return cache_dir
    return True if use_cache else None


def cli_options(*, use_cache: bool, cache_dir: Path | None, no_progress: bool, **flags):
    """The one :class:`~synthguard.run.options.EvaluateOptions` of a command's flags (``flags``:
    the options by their Python names, e.g. ``seed``, ``risk_rule``, ``entity_key``), validated once
    before any work; every path of the command passes it on."""
    from ..run.options import EvaluateOptions

    return EvaluateOptions(cache=resolve_cache(use_cache, cache_dir), progress=not no_progress,
                           **flags)


def risk_options(func):
    """``--risk-rule`` / ``--materiality`` / ``--alpha`` / ``--release-type`` (shared by evaluate
    and compare)."""
    func = click.option("--alpha", type=float, default=None,
                        help="Family-wise false-alarm rate of the verdict (default 0.05; or the "
                             "config's alpha).")(func)
    func = click.option("--release-type", type=click.Choice(["synthetic", "anonymised"]), default=None,
                        help="synthetic (default; or the metadata's release_type) or anonymised: each "
                             "release row is a real person, so k-anonymity and l-diversity drive "
                             "the verdict.")(func)
    func = click.option("--materiality", type=float, default=None,
                        help="Share of training records exposed beyond chance that matters "
                             "(default 0.01 = 1 %).")(func)
    func = click.option("--risk-rule", type=click.Choice(["calibrated", "reference"]), default=None,
                        help="calibrated (default): levels from tests of training rows against the "
                             "control; reference: the reference tools' fixed cut-offs.")(func)
    return func


@click.command("evaluate")
@click.option("--original", "-o", default=None, metavar="TABLE",
              help="Real rows the generator was trained on: a .csv or .parquet file, a folder, glob or "
                   "URL of Parquet files, 'table:NAME' or 'sql:QUERY' (with --db; see docs/scaling.md). "
                   "Default: the config's data.original.")
@click.option("--original-stats", "original_stats", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Instead of --original: the original's statistics written by 'synthguard profile' "
                   "(fidelity metrics only; metrics that need the rows are skipped).")
@click.option("--synthetic", "-s", multiple=True, metavar="TABLE",
              help="The release to evaluate. Repeat to compare several releases side by side. "
                   "Default: the config's data.synthetic.")
@click.option("--control", "-c", default=None, metavar="TABLE",
              help="Real rows held out from training (enables baselines and residual risks).")
@click.option("--db", default=None, metavar="URL",
              help="The database of 'table:NAME' / 'sql:QUERY' tables: a SQLAlchemy URL "
                   "(postgresql://user@host/dbname; needs synthguard[sql]) or DuckDB "
                   "(duckdb:///file.duckdb; needs synthguard[duckdb]). Without it, 'sql:' runs on "
                   "an in-memory DuckDB that reads files named in the query.")
@click.option("--metadata", "-m", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="SynEval-style metadata JSON/YAML (sdtypes, quasi_identifiers, sensitive...).")
@click.option("--metrics", default=None, help="Comma-separated metric names (see 'synthguard metrics').")
@click.option("--config", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="YAML/JSON config: preset, metrics, parameters, thresholds, seed.")
@click.option("--preset", default=None, help="quick, privacy or full.")
@click.option("--seed", default=None, type=int,
              help="Seed for every random choice (default: the config's seed, else 0).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON report here.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write a self-contained HTML report here (opens offline).")
@click.option("--backend", default="auto", show_default=True,
              type=click.Choice(["auto", "numba", "numpy"]), help="Neighbour-engine backend.")
@click.option("--records-out", "records_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write the records export as CSV (metric, risk, action, release_row, "
                                 "training_row, reason, rank, family, tests, round): action 'drop' "
                                 "marks the release rows to drop, 'review' rows to check, 'context' "
                                 "rows of tests that found nothing (not findings).")
@click.option("--dossier", "dossier_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write the release dossier a privacy officer signs (Markdown; HTML "
                                 "when the name ends in .html).")
@click.option("--context", "context_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="YAML file with the dossier's organisational fields (release "
                                 "model, recipients, purpose, controller, signatory, decision, "
                                 "review date): see docs/dossier.md.")
@cache_options
@risk_options
@click.option("--fail-on", type=click.Choice(["high", "medium", "inconclusive"]), default=None,
              help="Exit with code 3 when the verdict reaches this level (a release gate; "
                   "2 stays for bad input).")
@jobs_option
@click.option("--retest-columns", type=click.IntRange(min=0), default=None,
              help="When singling out or inference alarms, re-test at most this many driving columns "
                   "coarsened and report the level after (default 2; 0: off; with --scheduler / --workers "
                   "the columns are coarsened on the cluster).")
@click.option("--retest-rows", type=click.IntRange(min=0), default=None,
              help="When a test names release rows to drop, drop them and re-test, in at most this "
                   "many rounds, and report the levels after (default 1; 0: off; with --scheduler / --workers "
                   "the rows are dropped on the cluster).")
@click.option("--max-records", default=None, metavar="N", callback=lambda c, p, v: _whole(v),
              help="Above N training or control rows, test a seeded uniform sample of N of each "
                   "against the whole release (default 0: never; 200000 suits large tables; exact copies are still "
                   "listed for every row; the shares of release rows of the DCR tests and new_row_synthesis "
                   "use N release rows; see docs/scaling.md).")
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
@click.option("--quiet", "-q", is_flag=True, help="No plan and no progress bars on stderr.")
@click.option("--dry-run", is_flag=True,
              help="Read the inputs, print the plan (rows, tests, estimated time and memory) and exit 0.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run on this Dask cluster (tcp://host:8786); needs synthguard[dask]. See docs/scaling.md.")
@click.option("--workers", default=None, type=click.IntRange(min=1),
              help="Run on a local Dask cluster of this many worker processes; needs synthguard[dask].")
@click.option("--worker-memory", default=None, metavar="SIZE",
              help="With --workers: each local worker's memory limit (e.g. 4GB; Dask's default: the "
                   "machine's memory shared among the workers). A worker spills to disk above 60 % of it "
                   "and is restarted above 95 %. See docs/scaling.md.")
@click.option("--entity-key", default=None,
              help="Column naming the person each row belongs to (many rows per person): privacy is "
                   "then measured per entity (docs/entity-level.md).")
@click.option("--sequence-key", default=None, help="Column ordering a person's rows (number or date).")
@click.option("--original-context", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="One row per original entity (constant per person), joined on --entity-key.")
@click.option("--synthetic-context", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="One row per synthetic entity.")
@click.option("--control-context", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="One row per control entity.")
def command(original: Path | None, original_stats: Path | None, synthetic: tuple[Path, ...], control: Path | None, metadata: Path | None,
            metrics: str | None, config: Path | None, preset: str | None, seed: int | None,
            json_path: Path | None, html_path: Path | None, backend: str, use_cache: bool,
            cache_dir: Path | None, risk_rule: str | None, materiality: float | None,
            alpha: float | None, release_type: str | None, fail_on: str | None, jobs: int | None,
            no_progress: bool,
            entity_key: str | None = None, sequence_key: str | None = None,
            original_context: Path | None = None, synthetic_context: Path | None = None,
            control_context: Path | None = None, scheduler: str | None = None,
            workers: int | None = None, worker_memory: str | None = None, records_path: Path | None = None,
            dossier_path: Path | None = None, retest_columns: int | None = None,
            retest_rows: int | None = None, db: str | None = None,
            max_records: int | None = None, quiet: bool = False, dry_run: bool = False, context_path: Path | None = None) -> None:
    """Evaluate a synthetic release against its original (and control) data.

    Prints the metric table and one verdict; exit code 0, or 3 with --fail-on when the verdict
    reaches that level, or 2 for bad input.
    """
    from ..api import evaluate
    from ..report.context import load_context

    context = load_context(context_path)  # checked before any work
    config_data = {}
    if config is not None and (json_path is not None or html_path is not None
                               or records_path is not None or dossier_path is not None):
        from ..run.config import build_config

        config_data = {f"config data.{k}": Path(v) for k, v in dict(build_config(None, config, None).data).items()
                       if isinstance(v, (str, Path))}
    check_outputs(json_path, html_path, {
        **config_data, "--original": original, "--original-stats": original_stats, "--control": control,
        "--metadata": metadata, "--config": config, "--original-context": original_context,
        "--synthetic-context": synthetic_context, "--control-context": control_context,
        "--context": context_path,
        **{f"--synthetic {s}" if len(synthetic) > 1 else "--synthetic": s for s in synthetic}},
        {"--records-out": records_path, "--dossier": dossier_path})
    if (original is None and original_stats is None) or not synthetic:
        # take them from the config's data: block
        from ..errors import InputError
        from ..run.config import build_config

        paths = dict(build_config(None, config, None).data) if config is not None else {}
        if original is None and original_stats is None and "original" in paths:
            original = paths["original"]
        if not synthetic and "synthetic" in paths:
            synthetic = (paths["synthetic"],)
        if not synthetic or (original is None and original_stats is None):
            raise InputError("evaluate needs --original (or --original-stats) and --synthetic, or a "
                             "--config whose 'data:' block names original and synthetic files")
    if (original is None) == (original_stats is None):
        raise click.UsageError("give exactly one of --original and --original-stats")
    original, control = table_argument(original, db), table_argument(control, db)
    synthetic = tuple(table_argument(s, db) for s in synthetic)
    from ..data.sources import SqlSource

    if db is not None and not any(isinstance(t, SqlSource) for t in (original, control, *synthetic)):
        from ..errors import ConfigError

        raise ConfigError("--db names the database of 'table:NAME' / 'sql:QUERY' tables, but no "
                          "table is given that way: write e.g. -o table:train")
    if dry_run and len(synthetic) > 1:
        raise click.UsageError("--dry-run plans one release at a time: give one -s")
    options = cli_options(
        use_cache=use_cache, cache_dir=cache_dir, no_progress=no_progress or quiet, metrics=metrics,
        config=config, seed=seed, preset=preset, backend=backend, risk_rule=risk_rule,
        materiality=materiality, alpha=alpha, release_type=release_type, jobs=jobs,
        retest_columns=retest_columns, retest_rows=retest_rows, original_stats=original_stats,
        max_records=max_records, entity_key=entity_key,
        sequence_key=sequence_key, original_context=original_context,
        synthetic_context=synthetic_context, control_context=control_context,
        on_plan=plan_printer(quiet, dry_run))
    if synthetic_context is not None and len(synthetic) > 1:
        raise click.UsageError("--synthetic-context describes one release: give one -s")
    if worker_memory is not None and not workers:
        raise click.UsageError("--worker-memory caps the workers of a local cluster: give --workers N "
                               "(an existing cluster's workers set their own --memory-limit)")
    if scheduler or workers:
        if options.entity_options() or original is None:
            raise click.UsageError("--scheduler / --workers need --original rows and no entity options")
        from .distributed import run_distributed

        report = plan_or_run(lambda: run_distributed(
            original, synthetic, control, metadata, options, scheduler, workers, json_path,
            html_path, write_outputs, worker_memory=worker_memory))
        write_extras(report, records_path, dossier_path)  # metric records only: rows stay partitioned
        exit_on_verdict([report.verdict.level], fail_on)
        return
    if len(synthetic) > 1 and (records_path or dossier_path):
        raise click.UsageError("--records-out / --dossier describe one release: give one -s")
    if len(synthetic) > 1:
        comp = run_compare(original, synthetic, json_path, html_path, control=control,
                           metadata=metadata, options=options, context=context)
        exit_on_verdict([r.verdict.level for r in comp.reports.values()], fail_on)
        return
    report = plan_or_run(lambda: evaluate(original, synthetic[0], control, metadata,
                                          options=options, context=context))
    say(report.to_console())
    write_outputs(report, json_path, html_path)
    write_extras(report, records_path, dossier_path, original, synthetic[0], metadata)
    exit_on_verdict([report.verdict.level], fail_on)


def _whole(value: str | None) -> int | str | None:
    """``--max-records``' text as an integer when it is one, else as given: the options refuse it
    in one line (``max_records must be an integer``), not click's three."""
    try:
        return None if value is None else int(value)
    except ValueError:
        return value


def plan_printer(quiet: bool, dry_run: bool):
    """The ``on_plan`` callback of the CLI: ``--dry-run`` stops the run with its plan; otherwise the
    plan goes to stderr on a terminal (unless ``--quiet``), and a large plan's lines always do."""
    import sys

    from ..run.plan import PlanOnly

    def show(plan) -> None:
        if dry_run:
            raise PlanOnly(plan)
        if quiet:
            return
        if sys.stderr.isatty():
            click.echo(plan.render(), err=True)
        else:
            for line in plan.large:
                click.echo(f"note: large plan: {line}", err=True)

    return show


def plan_or_run(run):
    """``run()``, or the plan it stopped with (``--dry-run``: printed, exit 0)."""
    from ..run.plan import PlanOnly

    try:
        return run()
    except PlanOnly as stop:
        click.echo(stop.plan.render())
        raise SystemExit(0) from None


def table_argument(value: str | Path | None, db: str | None) -> object:
    """A table option's value: a source of :mod:`synthguard.data.sources` (``sql:``, ``table:``, a
    Parquet folder, glob or URL) or a file path."""
    if value is None:
        return None
    from ..data.sources import parse_source

    return parse_source(str(value), db) or Path(value)


def write_extras(report, records_path: Path | None, dossier_path: Path | None, original=None,
                 synthetic=None, metadata=None) -> None:
    """``--records-out`` (every record, every verbatim copy when the rows are at hand) and
    ``--dossier``, written atomically (the CSV through the one CSV writer)."""
    from ..core.io import write_csv

    if records_path is not None:
        frame = report.records(original, synthetic, metadata)
        write_csv(frame, records_path, "--records-out")
        from ..report.records import facts, listed_counts
        from ..run.drops import ALARM
        from ..run.wording import export_line

        drops = frame.loc[frame["action"] == "drop", "release_row"].dropna().nunique()
        tested = facts(report.model).listed is not None  # the export lists findings only
        line = export_line(listed_counts(frame["action"].to_numpy(dtype=object)) if tested else None,
                           str(report.verdict.level) in ALARM)  # as the dossier says
        say(f"records written to {records_path} ({len(frame)} record(s); {drops} release "
            "row(s) to drop)" + (f". {line}" if line else ""))
    if dossier_path is not None:
        report.to_dossier(dossier_path)
        say(f"dossier written to {dossier_path}")


def exit_on_verdict(levels: list[str], fail_on: str | None) -> None:
    """Exit with code 3 when any verdict reaches ``fail_on``."""
    from ..run.verdict import fails

    hit = [lvl for lvl in levels if fails(lvl, fail_on)]
    if hit:
        click.echo(f"verdict {hit[0]} reaches --fail-on {fail_on}: exit code 3", err=True)
        raise SystemExit(3)


def run_compare(original: Path, synthetic: tuple[Path, ...], json_path: Path | None,
                html_path: Path | None, **kwargs) -> None:
    """Rank several releases (``synthguard compare`` / ``evaluate`` with several ``-s``), print the
    ranking and write the requested outputs; ``kwargs`` (``control``, ``metadata``, ``options``) go
    to :func:`synthguard.compare`."""
    from ..api import compare

    comp = compare(original, list(synthetic), **kwargs)
    say(comp.to_console())
    write_outputs(comp, json_path, html_path)
    return comp


def check_outputs(json_path: Path | None, html_path: Path | None,
                  inputs: dict[str, Path | None] | None = None,
                  more: dict[str, Path | None] | None = None) -> None:
    """Fail with one line (exit 2) before any metric runs when an output path cannot be written,
    names an input (``inputs``: option -> path; data, metadata, config) or another output
    (``more``: further output options, e.g. ``--records-out``, ``--dossier``)."""
    from ..core.io import check_distinct_outputs, check_writable
    from ..report.dossier import check_dossier_name

    outputs = {"--json": json_path, "--html": html_path, **(more or {})}
    check_distinct_outputs(outputs, inputs or {})
    for option, path in outputs.items():
        if path is not None:
            check_writable(path, option)
    if outputs.get("--dossier") is not None:  # a writable path, named as another format
        check_dossier_name(outputs["--dossier"], "--dossier")
    claim_stdout(*outputs.values())


def write_outputs(obj, json_path: Path | None, html_path: Path | None) -> None:
    """Write ``obj``'s JSON and/or HTML (atomically) and say where."""
    from ..errors import ConfigError

    for path, option, write in ((json_path, "--json", obj.to_json), (html_path, "--html", obj.to_html)):
        if path is None:
            continue
        try:
            write(path)
        except OSError as exc:  # checked up front; the disk can still fill or vanish meanwhile
            raise ConfigError(f"{option} {path}: could not write the report "
                              f"({exc.strerror or exc}): choose another path") from exc
        say(f"{chr(10) if option == '--json' else ''}{option[2:].upper()} report written to {path}")
