"""Run configuration: which metrics, their parameters, and risk thresholds.

Shape (YAML or JSON, or a dict)::

    preset: privacy            # optional: quick | privacy | full
    metrics:                   # a list of names, or {name: {param: value} or null}
      dcr: {percentile: 5}
      exact_matches: null
    thresholds:
      exact_matches: {high: 0.05}
    data:                      # optional: the inputs, so that 'synthguard evaluate --config' needs no -o/-s
      original: train.csv      # paths relative to the working directory, else to this file's folder
      synthetic: release.csv
      control: holdout.csv     # optional
      metadata: metadata.json  # optional

Named runs: one metric several times with different parameters, each reported under its name::

    metrics:
      - {name: link_k1, metric: linkability, n_neighbors: 1}
      - {name: link_k10, metric: linkability, n_neighbors: 10}
      - exact_matches          # plain names mix with named runs

Unknown metric, parameter or threshold names are errors, never ignored, with one exception: a
metric named by a *preset* that this installation does not provide (an optional extra is missing,
or a metric family is not installed) is not an error. It is recorded in
``RunConfig.unavailable`` and reported as ``skipped`` with the reason "not available in this
installation", so a preset never crashes a run. A metric the user names explicitly (``metrics``
argument or the config's ``metrics``) must exist.

Presets
-------
``quick``
    Cheap exact-match, near-copy and distance checks (seconds on 100k rows), and verbatim text
    copies when text columns are declared.
``privacy``
    Every privacy attack and disclosure metric: exact and near copies, close neighbours,
    distances, distinguishability, membership inference, the anonymeter trio, CAP, k-anonymity,
    l-diversity, text leakage (copied documents, reproduced entities: run whenever text columns
    are declared, skipped with the reason otherwise).
``full``
    ``privacy`` plus fidelity, utility and distortion.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..registry import canonical_name, default_metrics, get_metric, validate_seed

_TOP_KEYS = {"metrics", "thresholds", "preset", "seed", "data", "risk_rule", "materiality", "alpha",
             "release_type"}

class _Presets(MutableMapping):
    """Preset name -> its metrics in report order: the metrics whose cards join the preset
    (``@register(presets=...)``, ordered by the card's ``order``), overlaid with presets added by
    :func:`register_preset`."""

    def __init__(self) -> None:
        self._added: dict[str, tuple[str, ...]] = {}

    def _from_cards(self) -> dict[str, tuple[str, ...]]:
        from ..registry import metric_infos, preset_metrics

        names = sorted({p for i in metric_infos() for p in i.presets})
        return {n: tuple(preset_metrics(n)) for n in names}

    def __getitem__(self, name: str) -> tuple[str, ...]:
        if name in self._added:
            return self._added[name]
        return self._from_cards()[name]

    def __setitem__(self, name: str, metrics: Sequence[str]) -> None:
        self._added[name] = tuple(metrics)

    def __delitem__(self, name: str) -> None:
        del self._added[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._from_cards(), *self._added]))

    def __len__(self) -> int:
        return len(list(iter(self)))


#: Presets: named metric selections, from the metric cards (``quick``, ``privacy``, ``full``).
PRESETS: MutableMapping[str, tuple[str, ...]] = _Presets()

UNAVAILABLE_REASON = "not available in this installation"


def register_preset(name: str, metrics: Sequence[str]) -> None:
    """Add or replace a preset (used by metric families to contribute their metrics)."""
    PRESETS[name] = tuple(metrics)


@dataclass(frozen=True)
class RunConfig:
    """A validated configuration: ordered metric names with resolved parameters, and thresholds."""

    metrics: Mapping[str, Mapping[str, Any]]
    thresholds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    preset: str | None = None
    unavailable: Mapping[str, str] = field(default_factory=dict)
    source: str | None = None
    seed: int | None = None
    risk: Mapping[str, Any] = field(default_factory=dict)
    #: named runs: run name -> the metric it runs (only names that are not the metric's own)
    runs: Mapping[str, str] = field(default_factory=dict)
    #: input paths from the config's ``data`` block (original, synthetic, control, metadata)
    data: Mapping[str, str] = field(default_factory=dict)

    def metric_of(self, name: str) -> str:
        """The registered metric a run name runs (itself unless it is a named run)."""
        return self.runs.get(name, name)

    def metric_ids(self, names: Sequence[str]) -> list[str]:
        """The registered metrics the run names ``names`` run, each once, in order (what a
        :class:`~synthguard.registry.Context` of the run calls its metrics)."""
        return list(dict.fromkeys(self.metric_of(n) for n in names))

    def to_dict(self) -> dict[str, Any]:
        """The exact configuration used: preset, metrics with every resolved parameter,
        thresholds overriding the defaults, preset metrics not available here, and the file."""
        from ..core.results import to_jsonable

        out = {"preset": self.preset, "metrics": to_jsonable(self.metrics),
               "thresholds": to_jsonable(self.thresholds)}
        if self.unavailable:
            out["unavailable"] = dict(self.unavailable)
        if self.source:
            out["source"] = self.source
        if self.risk:
            out["risk"] = dict(self.risk)
        if self.runs:
            out["runs"] = dict(self.runs)
        if self.data:
            out["data"] = dict(self.data)
        return out


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON config file, with a one-line error naming the file."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"config file {p} does not exist: check the path")
    text = p.read_text(encoding="utf-8-sig", errors="replace")  # a BOM is fine
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


_RUN_METRIC = "__metric__"  # internal: the metric of a named run, kept with its parameters


def _run_metric(name: str, params: Mapping[str, Any]) -> str:
    """The canonical metric of a run (a named run's ``metric``, else the name itself)."""
    if _RUN_METRIC in params:
        metric = canonical_name(params[_RUN_METRIC])
        if is_registered(name) and canonical_name(name) != metric:
            raise ConfigError(f"run name {name!r} is a metric name but runs {metric!r}: choose "
                              "another name")
        return metric
    return canonical_name(name)


def _resolve_data(value: Any, config: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: 'data' must be a mapping with original, synthetic (and optional "
                          "control, metadata) paths")
    allowed = {"original", "synthetic", "control", "metadata"}
    bad = sorted(set(value) - allowed)
    if bad:
        raise ConfigError(f"{where}: unknown key(s) {bad} under 'data'; allowed: {sorted(allowed)}")
    base = Path(config).resolve().parent if isinstance(config, (str, Path)) else None
    out = {}
    for k, v in value.items():
        if v is None:
            continue
        p = Path(str(v)).expanduser()
        if not p.is_absolute() and not p.exists() and base is not None and (base / p).exists():
            p = base / p
        out[k] = str(p)
    return out


def _normalise_metrics(value: Any, where: str) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
        if not value:
            raise ConfigError(f"{where}: no metric named (got an empty list); leave it out to run the "
                              "default metrics, or name some (see 'synthguard metrics')")
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if v is not None and not isinstance(v, Mapping):
                raise ConfigError(f"{where}: parameters of metric {k!r} must be a mapping or null, "
                                  f"got {type(v).__name__}")
            out[str(k).strip()] = dict(v or {})
        return out
    if isinstance(value, (list, tuple)):
        out = {}
        for v in value:
            if isinstance(v, Mapping):  # a named run: {name: ..., metric: ..., **params}
                if "name" not in v or "metric" not in v:
                    raise ConfigError(f"{where}: a metric given as a mapping must have 'name' and "
                                      f"'metric' (e.g. {{name: link_k1, metric: linkability, "
                                      f"n_neighbors: 1}}), got {dict(v)!r}")
                name = str(v["name"]).strip()
                if name in out:
                    raise ConfigError(f"{where}: run name {name!r} is used twice: give each run its "
                                      "own name")
                params = {k: p for k, p in v.items() if k not in ("name", "metric")}
                params[_RUN_METRIC] = str(v["metric"]).strip()
                out[name] = params
            else:
                out[str(v).strip()] = {}
        return out
    raise ConfigError(f"{where}: 'metrics' must be a list of names or a mapping name -> parameters")


def build_config(metrics: Any = None, config: Mapping[str, Any] | str | Path | None = None,
                 preset: str | None = None) -> RunConfig:
    """Merge preset, config file/dict and explicit ``metrics`` into one validated :class:`RunConfig`.

    Selection: explicit ``metrics`` if given; else the preset's metrics (argument, or the config's
    ``preset``) plus any extra metric the config names; else the config's ``metrics``; else every
    default metric. Parameters given in the config apply to whichever metrics are chosen.
    Preset metrics this installation lacks go to ``RunConfig.unavailable`` (reported as skipped).
    """
    where = str(config) if isinstance(config, (str, Path)) else "config"
    data = load_config_file(config) if isinstance(config, (str, Path)) else dict(config or {})
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(_TOP_KEYS)}")
    preset = preset or data.get("preset")
    cfg_metrics = _normalise_metrics(data.get("metrics"), where)
    arg_metrics = _normalise_metrics(metrics, "metrics argument")

    if preset is not None and preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; use one of {sorted(PRESETS)}")
    unavailable: dict[str, str] = {}
    if arg_metrics:
        chosen = arg_metrics
    elif preset:
        chosen = {}
        for m in PRESETS[preset]:
            if is_registered(m):
                chosen[m] = {}
            else:
                unavailable[m] = (f"{UNAVAILABLE_REASON} (preset {preset!r} lists it; install the "
                                  "extra that provides it, or see 'synthguard metrics')")
        for m, mp in cfg_metrics.items():  # the config adds metrics to the preset, sets parameters
            if _RUN_METRIC in mp:
                chosen[m] = {}
            elif m not in chosen and canonical_name(m) not in {canonical_name(c) for c in chosen}:
                chosen[m] = {}
    elif cfg_metrics:
        chosen = cfg_metrics
    else:
        chosen = {m: {} for m in default_metrics()}

    resolved: dict[str, dict[str, Any]] = {}
    runs: dict[str, str] = {}
    for name, params in chosen.items():
        named = _RUN_METRIC in params or _RUN_METRIC in cfg_metrics.get(name, {})
        if named:
            merged = dict(cfg_metrics.get(name, {}))
            merged.update(params)
            metric = _run_metric(name, merged)
            merged.pop(_RUN_METRIC, None)
            key = name
            if key != metric:
                runs[key] = metric
        else:
            metric = canonical_name(name)
            merged = dict(cfg_metrics.get(name, cfg_metrics.get(metric, {})))
            merged.update(params)
            key = metric
        if key in resolved:
            raise ConfigError(f"{where}: {key!r} is run twice: give named runs distinct names")
        resolved[key] = get_metric(metric).resolve_params(merged)
    # parameters named in the config for metrics not chosen are still validated
    for name, params in cfg_metrics.items():
        p = dict(params)
        metric = _run_metric(name, p)
        p.pop(_RUN_METRIC, None)
        get_metric(metric).resolve_params(p)

    thresholds: dict[str, dict[str, float]] = {}
    for name, th in (data.get("thresholds") or {}).items():
        if name in unavailable:
            continue  # a preset metric this installation lacks: its thresholds cannot apply
        canon = name if name in runs else canonical_name(name)
        if not isinstance(th, Mapping):
            raise ConfigError(f"{where}: thresholds of {name!r} must be a mapping like {{high: 0.5}}")
        spec = get_metric(runs.get(canon, canon))
        allowed = set(spec.thresholds) or {"medium", "high"}
        bad = set(th) - allowed
        if bad:
            raise ConfigError(f"{where}: metric {canon!r} has no threshold {sorted(bad)[0]!r}; "
                              f"its thresholds are {sorted(allowed)}")
        try:
            thresholds[canon] = {k: float(v) for k, v in th.items()}
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: thresholds of {canon!r} must be numbers") from exc
    seed = validate_seed(data.get("seed"), f"{where}: 'seed'")
    risk = {k: data[k] for k in ("risk_rule", "materiality", "alpha", "release_type") if k in data}
    if risk:
        from .verdict import RiskRule

        RiskRule(**{("rule" if k == "risk_rule" else k): v for k, v in risk.items()})  # validate
    return RunConfig(metrics=resolved, thresholds=thresholds, preset=preset, unavailable=unavailable,
                     source=str(config) if isinstance(config, (str, Path)) else None, seed=seed,
                     risk=risk, runs=runs, data=_resolve_data(data.get("data"), config, where))


def is_registered(name: str) -> bool:
    """Whether ``name`` (or an alias) is a metric of this installation."""
    try:
        canonical_name(name)
    except ConfigError:
        return False
    return True


def add_entity_metrics(run_config: Any) -> Any:
    """The run configuration with the entity metrics added: the privacy ones when a privacy metric is
    selected, the fidelity ones when a fidelity metric is (parameters at their defaults)."""
    from ..data.entities import PRIVACY_FAMILIES
    from ..registry import metric_infos

    chosen = dict(run_config.metrics)
    fams = {get_metric(n).family for n in chosen}
    entity_only = [i.name for i in sorted(metric_infos(), key=lambda i: (i.order, i.name))
                   if i.card.get("entity_only")]
    for name in entity_only:
        spec = get_metric(name)
        if name in chosen:
            continue
        if (spec.family == "privacy" and fams & set(PRIVACY_FAMILIES)) or \
                (spec.family == "fidelity" and "fidelity" in fams):
            chosen[name] = spec.resolve_params(None)
    return replace(run_config, metrics=chosen)
