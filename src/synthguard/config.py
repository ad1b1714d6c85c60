"""Run configuration: which metrics, their parameters, and risk thresholds.

Shape (YAML or JSON, or a dict)::

    preset: privacy            # optional: quick | privacy | full
    metrics:                   # a list of names, or {name: {param: value} or null}
      dcr: {percentile: 5}
      exact_matches: null
    thresholds:
      exact_matches: {high: 0.05}

Unknown metric, parameter or threshold names are errors, never ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .registry import canonical_name, default_metrics, get_metric

_TOP_KEYS = {"metrics", "thresholds", "preset", "seed"}

# Presets: named metric selections (extended as metric families land).
PRESETS: dict[str, tuple[str, ...]] = {
    "quick": ("exact_matches", "ims", "dcr", "nndr"),
}


def register_preset(name: str, metrics: Sequence[str]) -> None:
    """Add or replace a preset (used by metric families to contribute their metrics)."""
    PRESETS[name] = tuple(metrics)


@dataclass(frozen=True)
class RunConfig:
    """A validated configuration: ordered metric names with resolved parameters, and thresholds."""

    metrics: Mapping[str, Mapping[str, Any]]
    thresholds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    preset: str | None = None

    def to_dict(self) -> dict[str, Any]:
        from .results import to_jsonable

        return {"preset": self.preset, "metrics": to_jsonable(self.metrics),
                "thresholds": to_jsonable(self.thresholds)}


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON config file, with a one-line error naming the file."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"config file {p} does not exist: check the path")
    text = p.read_text(encoding="utf-8", errors="replace")
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"config file {p} is not valid YAML/JSON ({first}): fix its syntax") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {p} must hold a mapping with 'metrics' and/or 'thresholds'")
    return data


def _normalise_metrics(value: Any, where: str) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if v is not None and not isinstance(v, Mapping):
                raise ConfigError(f"{where}: parameters of metric {k!r} must be a mapping or null, "
                                  f"got {type(v).__name__}")
            out[str(k).strip()] = dict(v or {})
        return out
    if isinstance(value, (list, tuple)):
        return {str(v).strip(): {} for v in value}
    raise ConfigError(f"{where}: 'metrics' must be a list of names or a mapping name -> parameters")


def build_config(metrics: Any = None, config: Mapping[str, Any] | str | Path | None = None,
                 preset: str | None = None) -> RunConfig:
    """Merge preset, config file/dict and explicit ``metrics`` into one validated :class:`RunConfig`.

    Precedence: explicit ``metrics`` > the config's ``metrics`` > the preset > the default set.
    Parameters given in the config apply to the chosen metrics.
    """
    where = str(config) if isinstance(config, (str, Path)) else "config"
    data = load_config_file(config) if isinstance(config, (str, Path)) else dict(config or {})
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(_TOP_KEYS)}")
    preset = preset or data.get("preset")
    cfg_metrics = _normalise_metrics(data.get("metrics"), where)
    arg_metrics = _normalise_metrics(metrics, "metrics argument")

    if arg_metrics:
        chosen = arg_metrics
    elif cfg_metrics:
        chosen = cfg_metrics
    elif preset:
        if preset not in PRESETS:
            raise ConfigError(f"unknown preset {preset!r}; use one of {sorted(PRESETS)}")
        chosen = {m: {} for m in PRESETS[preset]}
    else:
        chosen = {m: {} for m in default_metrics()}

    resolved: dict[str, dict[str, Any]] = {}
    for name, params in chosen.items():
        canon = canonical_name(name)
        merged = dict(cfg_metrics.get(name, cfg_metrics.get(canon, {})))
        merged.update(params)
        resolved[canon] = get_metric(canon).resolve_params(merged)
    # parameters named in the config for metrics not chosen are still validated
    for name, params in cfg_metrics.items():
        get_metric(name).resolve_params(params)

    thresholds: dict[str, dict[str, float]] = {}
    for name, th in (data.get("thresholds") or {}).items():
        canon = canonical_name(name)
        if not isinstance(th, Mapping):
            raise ConfigError(f"{where}: thresholds of {name!r} must be a mapping like {{high: 0.5}}")
        spec = get_metric(canon)
        allowed = set(spec.thresholds) or {"medium", "high"}
        bad = set(th) - allowed
        if bad:
            raise ConfigError(f"{where}: metric {canon!r} has no threshold {sorted(bad)[0]!r}; "
                              f"its thresholds are {sorted(allowed)}")
        try:
            thresholds[canon] = {k: float(v) for k, v in th.items()}
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: thresholds of {canon!r} must be numbers") from exc
    return RunConfig(metrics=resolved, thresholds=thresholds, preset=preset)
