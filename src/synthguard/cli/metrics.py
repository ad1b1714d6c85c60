"""``synthguard metrics``: list the registered metrics."""

from __future__ import annotations

import json

import click

from ..registry import metric_infos


@click.command("metrics")
@click.option("--json", "as_json", is_flag=True, help="Print the registry as JSON.")
def command(as_json: bool) -> None:
    """List every metric: family, needs, direction, parameters and default thresholds."""
    specs = metric_infos()  # from the manifest: no metric module is imported
    if as_json:
        click.echo(json.dumps([s.to_dict() for s in specs], indent=2))
        return
    family = None
    for s in specs:
        if s.family != family:
            family = s.family
            click.echo(f"\n[{family}]")
        alias = f" (alias: {', '.join(s.aliases)})" if s.aliases else ""
        click.echo(f"  {s.name}{alias}: {s.description}")
        click.echo(f"      needs: {', '.join(s.needs)}"
                   + (f" (+ optional {', '.join(s.optional_needs)})" if s.optional_needs else "")
                   + f"; {s.direction}"
                   + (f"; thresholds {dict(s.thresholds)}" if s.thresholds else ""))
        if s.params:
            click.echo("      params: " + ", ".join(f"{p.name}={p.default!r}" for p in s.params))
