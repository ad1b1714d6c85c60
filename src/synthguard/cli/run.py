"""``synthguard run petsard.yaml``: execute a PETsARD 1.10 YAML with synthguard's evaluators."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("run")
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output-dir", "-d", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder the Reporter writes its CSVs to (default: the working directory, as PETsARD).")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seed of synthguard's evaluators and of the built-in copula.")
@click.option("--allow-outside-output-dir", is_flag=True,
              help="Let a Reporter 'output' be an absolute path or contain '..' (refused by default).")
def command(config: Path, output_dir: Path | None, seed: int, allow_outside_output_dir: bool) -> None:
    """Run a PETsARD YAML (Loader, Splitter, Synthesizer, Evaluator, Reporter blocks).

    Unsupported modules or methods stop the run with a one-line error (exit code 2).
    """
    from ..compat.petsard.yaml_runner import run_petsard_yaml
    from ..errors import ConfigError

    if not config.exists():
        raise ConfigError(f"config file {config} does not exist: check the path")
    res = run_petsard_yaml(config, output_dir=output_dir, seed=seed,
                           allow_outside_output_dir=allow_outside_output_dir)
    for chain, scores in res.results.items():
        name = "_".join(f"{m}[{e}]" for m, e in chain)
        glob = scores.get("global")
        click.echo(name)
        if glob is not None:
            click.echo(glob.to_string())
        click.echo("")
    for note in res.notes:
        click.echo(f"note: {note}")
    for f in res.files:
        click.echo(f"report written to {f}")
