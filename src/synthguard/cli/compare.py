"""``synthguard compare``: several releases of the same original, ranked on privacy and utility."""

from __future__ import annotations

from pathlib import Path

import click

from .evaluate import (
    cache_options,
    check_outputs,
    cli_options,
    exit_on_verdict,
    jobs_option,
    risk_options,
    run_compare,
)


@click.command("compare")
@click.option("--original", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Real rows the generators were trained on.")
@click.option("--control", "-c", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Real rows held out from training.")
@click.option("--metadata", "-m", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="SynEval-style metadata JSON/YAML.")
@click.option("--metrics", default=None, help="Comma-separated metric names.")
@click.option("--config", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="YAML/JSON config: preset, metrics, parameters, thresholds, seed.")
@click.option("--preset", default=None, help="quick, privacy or full.")
@click.option("--seed", default=None, type=int, help="Seed (default: the config's seed, else 0).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the comparison JSON here.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write a self-contained HTML comparison here.")
@click.option("--backend", default="auto", show_default=True,
              type=click.Choice(["auto", "numba", "numpy"]), help="Neighbour-engine backend.")
@cache_options
@risk_options
@click.option("--fail-on", type=click.Choice(["high", "medium", "inconclusive"]), default=None,
              help="Exit with code 3 when any release's verdict reaches this level.")
@jobs_option
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
@click.argument("synthetic", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def command(original: Path, control: Path | None, metadata: Path | None, metrics: str | None,
            config: Path | None, preset: str | None, seed: int | None, json_path: Path | None,
            html_path: Path | None, backend: str, use_cache: bool, cache_dir: Path | None,
            risk_rule: str | None, materiality: float | None, alpha: float | None,
            release_type: str | None, fail_on: str | None, jobs: int | None, no_progress: bool,
            synthetic: tuple[Path, ...]) -> None:
    """Rank SYNTHETIC releases (files) of the same original side by side."""
    check_outputs(json_path, html_path, {
        "--original": original, "--control": control, "--metadata": metadata, "--config": config,
        **{f"SYNTHETIC {s}": s for s in synthetic}})
    options = cli_options(use_cache=use_cache, cache_dir=cache_dir, no_progress=no_progress,
                          metrics=metrics, config=config, seed=seed, preset=preset, backend=backend,
                          risk_rule=risk_rule, materiality=materiality, alpha=alpha,
                          release_type=release_type, jobs=jobs)
    comp = run_compare(original, synthetic, json_path, html_path, control=control, metadata=metadata,
                       options=options)
    exit_on_verdict([r.verdict.level for r in comp.reports.values()], fail_on)
