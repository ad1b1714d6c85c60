"""``synthguard evaluate``: one release (or several, ranked side by side) against its original."""

from __future__ import annotations

from pathlib import Path

import click


def cache_options(func):
    """``--cache`` / ``--cache-dir`` (shared by evaluate, compare and demo)."""
    func = click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                        help="Cache folder (implies --cache). Default: $SYNTHGUARD_CACHE_DIR, else "
                             "~/.cache/synthguard.")(func)
    func = click.option("--cache", "use_cache", is_flag=True,
                        help="Reuse metric results cached on disk for the same data, parameters and "
                             "seed (off by default).")(func)
    return func


def jobs_option(func):
    """``--jobs`` (shared by evaluate, compare and demo)."""
    return click.option("--jobs", "-j", type=int, default=1, show_default=True,
                        help="Metrics run at once (threads); 0 = one per core. Each neighbour search "
                             "uses every core anyway. Results are identical whatever the number.")(func)


def resolve_cache(use_cache: bool, cache_dir: Path | None):
    """The ``cache`` argument of :func:`synthguard.evaluate` for the CLI flags."""
    if cache_dir is not None:
        return cache_dir
    return True if use_cache else None


@click.command("evaluate")
@click.option("--original", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Real rows the generator was trained on (.csv or .parquet).")
@click.option("--synthetic", "-s", required=True, multiple=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="The release to evaluate. Repeat to compare several releases side by side.")
@click.option("--control", "-c", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Real rows held out from training (enables baselines and residual risks).")
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
@cache_options
@jobs_option
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
def command(original: Path, synthetic: tuple[Path, ...], control: Path | None, metadata: Path | None,
            metrics: str | None, config: Path | None, preset: str | None, seed: int | None,
            json_path: Path | None, html_path: Path | None, backend: str, use_cache: bool,
            cache_dir: Path | None, jobs: int, no_progress: bool) -> None:
    """Evaluate a synthetic release against its original (and control) data."""
    from ..runner import evaluate

    cache = resolve_cache(use_cache, cache_dir)
    if len(synthetic) > 1:
        run_compare(original, synthetic, json_path, html_path, control=control, metadata=metadata,
                    metrics=metrics, config=config, seed=seed, preset=preset, backend=backend,
                    progress=not no_progress, cache=cache, jobs=jobs)
        return
    report = evaluate(original, synthetic[0], control=control, metadata=metadata, metrics=metrics,
                      config=config, seed=seed, preset=preset, backend=backend,
                      progress=not no_progress, cache=cache, jobs=jobs)
    click.echo(report.to_console())
    write_outputs(report, json_path, html_path)


def run_compare(original: Path, synthetic: tuple[Path, ...], json_path: Path | None,
                html_path: Path | None, **kwargs) -> None:
    """Rank several releases (``synthguard compare`` / ``evaluate`` with several ``-s``), print the
    ranking and write the requested outputs; ``kwargs`` go to :func:`synthguard.compare`."""
    from ..report.compare import compare

    comp = compare(original, list(synthetic), **kwargs)
    click.echo(comp.to_console())
    write_outputs(comp, json_path, html_path)


def write_outputs(obj, json_path: Path | None, html_path: Path | None) -> None:
    """Write ``obj``'s JSON and/or HTML and say where."""
    if json_path is not None:
        obj.to_json(json_path)
        click.echo(f"\nJSON report written to {json_path}")
    if html_path is not None:
        obj.to_html(html_path)
        click.echo(f"HTML report written to {html_path}")
