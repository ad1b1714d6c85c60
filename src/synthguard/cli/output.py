"""Where a command's messages go: standard output, or standard error when an output file is
standard output (``-``)."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["claim_stdout", "say"]


def claim_stdout(*paths: Path | None) -> None:
    """When an output is ``-`` (standard output), every message of this command goes to stderr
    (see :func:`say`), so standard output carries that output only."""
    from ..core.io import is_stdout

    if any(is_stdout(p) for p in paths):
        click.get_current_context().meta["synthguard.stdout_taken"] = True


def say(text: str) -> None:
    """Print a message: on stdout, or on stderr when an output is written to stdout."""
    ctx = click.get_current_context(silent=True)
    click.echo(text, err=bool(ctx is not None and ctx.meta.get("synthguard.stdout_taken")))
