"""Finding metrics: by name or alias, from the generated manifest without importing them, from the
live registry, and from plugins.

So that listing the metrics, checking a configuration or starting the CLI does not import every
implementation (and sklearn, scipy, numba...), every card is also written to a generated manifest,
:mod:`synthguard.registry._manifest`, that records each metric's module; a metric's module is imported
only when the metric is looked up with :func:`get_metric` (to run it or to validate its parameters).
Regenerate the manifest after adding or changing a metric::

    python -m synthguard.registry --write-manifest

(``tests/unit/registry/test_manifest.py`` fails, naming that command, whenever it is out of date.)

Plugins: a package that declares an entry point in the group ``synthguard.metrics`` (the value is a
module, imported for its ``@register`` cards) takes part like any of synthguard's own metrics; plugins
are loaded when the metrics are listed or a name is not found among synthguard's own.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .params import suggest
from .spec import _ALIASES, _REGISTRY, MetricSpec

if TYPE_CHECKING:  # pragma: no cover
    from .context import Context

__all__ = ["ENTRY_POINT_GROUP", "MANIFEST_PATH", "MetricInfo", "ParamInfo", "REGENERATE", "all_metrics",
           "canonical_name", "card_of", "default_metrics", "info_of", "get_metric", "live_manifest", "load_plugins",
           "manifest_entry", "metric_info", "metric_infos", "missing_inputs", "preset_metrics",
           "render_manifest", "suggest", "write_manifest"]

#: The entry-point group a plugin package declares its metric modules in.
ENTRY_POINT_GROUP = "synthguard.metrics"

_DISCOVER_LOCK = threading.RLock()
_DISCOVERED = False
_PLUGINS_LOADED = False


def _discover() -> None:
    """Import every public module under :mod:`synthguard.metrics` (each registers its metrics), and
    the plugins."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    with _DISCOVER_LOCK:
        if _DISCOVERED:
            return
        from .. import metrics as pkg

        for mod in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if mod.name.rsplit(".", 1)[-1].startswith("_"):
                continue
            importlib.import_module(mod.name)
        load_plugins()
        _DISCOVERED = True


def load_plugins() -> list[str]:
    """Import the metric modules plugins declare in the entry-point group :data:`ENTRY_POINT_GROUP`
    (once per process); a plugin that fails to import is reported in one warning and left out.

    Returns
    -------
    list of str
        The entry points loaded (``name = module``).

    Examples
    --------
    >>> isinstance(load_plugins(), list)
    True
    """
    global _PLUGINS_LOADED
    with _DISCOVER_LOCK:
        if _PLUGINS_LOADED:
            return []
        _PLUGINS_LOADED = True
        from importlib.metadata import entry_points

        loaded = []
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                ep.load()
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not break synthguard
                warnings.warn(f"synthguard plugin {ep.name!r} ({ep.value}) could not be loaded: {exc}; "
                              "its metrics are not available", RuntimeWarning, stacklevel=2)
                continue
            loaded.append(f"{ep.name} = {ep.value}")
        return loaded


# ------------------------------------------------------------------------------------ the manifest
@dataclass(frozen=True)
class ParamInfo:
    """A parameter as the manifest records it: name, default (JSON form) and documentation."""

    name: str
    default: Any
    doc: str


@dataclass(frozen=True)
class MetricInfo:
    """What the manifest knows of a metric without importing it: the card's fields except the
    function, the parameter checks and the record callables, plus ``module``, where it lives."""

    name: str
    family: str
    module: str
    needs: tuple[str, ...]
    optional_needs: tuple[str, ...]
    params: tuple[ParamInfo, ...]
    direction: str
    thresholds: Mapping[str, float]
    description: str
    aliases: tuple[str, ...]
    default: bool
    from_stats: bool = False
    card: Mapping[str, Any] = field(default_factory=dict)

    @property
    def risk(self) -> str | None:
        return self.card.get("risk")

    @property
    def presets(self) -> tuple[str, ...]:
        return tuple(self.card.get("presets") or ())

    @property
    def order(self) -> int:
        return int(self.card.get("order", 1000))

    @property
    def backend(self) -> str:
        return str(self.card.get("backend", "local"))

    def to_dict(self) -> dict[str, Any]:
        """The same dictionary as :meth:`MetricSpec.to_dict` (``synthguard metrics --json``)."""
        return {"name": self.name, "family": self.family, "needs": list(self.needs),
                "optional_needs": list(self.optional_needs), "direction": self.direction,
                "thresholds": dict(self.thresholds), "description": self.description,
                "aliases": list(self.aliases), "default": self.default, "from_stats": self.from_stats,
                "params": {p.name: {"default": p.default, "doc": p.doc} for p in self.params},
                **dict(self.card)}

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> MetricInfo:
        classic = {"name", "family", "module", "needs", "optional_needs", "params", "direction",
                   "thresholds", "description", "aliases", "default", "from_stats"}
        return cls(entry["name"], entry["family"], entry["module"], tuple(entry["needs"]),
                   tuple(entry["optional_needs"]),
                   tuple(ParamInfo(k, v["default"], v["doc"]) for k, v in entry["params"].items()),
                   entry["direction"], dict(entry["thresholds"]), entry["description"],
                   tuple(entry["aliases"]), bool(entry["default"]), bool(entry.get("from_stats", False)),
                   {k: v for k, v in entry.items() if k not in classic})


def manifest_entry(spec: MetricSpec) -> dict[str, Any]:
    """The manifest's record of ``spec``: :meth:`MetricSpec.to_dict` plus the defining module."""
    return {**spec.to_dict(), "module": spec.func.__module__}


_MANIFEST_CACHE: dict[str, MetricInfo] | None = None


def _manifest_infos() -> dict[str, MetricInfo]:
    global _MANIFEST_CACHE
    if _MANIFEST_CACHE is None:
        try:
            from ._manifest import METRICS
        except ImportError:  # pragma: no cover - a broken install: fall back to discovery
            METRICS = {}
        _MANIFEST_CACHE = {k: MetricInfo.from_entry(v) for k, v in METRICS.items()}
    return _MANIFEST_CACHE


def _info(spec: MetricSpec) -> MetricInfo:
    return MetricInfo.from_entry(manifest_entry(spec))


def _lookup(key: str) -> str | None:
    if key in _REGISTRY:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    man = _manifest_infos()
    if key in man:
        return key
    for info in man.values():
        if key in info.aliases:
            return info.name
    return None


def canonical_name(name: str) -> str:
    """Registry name for ``name`` or an alias (case-insensitive, ``-`` read as ``_``).

    Answered from the manifest and the live registry; a name neither knows triggers the full
    discovery (a metric added without regenerating the manifest, or a plugin's) before it is an
    error.

    Examples
    --------
    >>> canonical_name("Membership-Inference")
    'distinguishability'
    """
    key = str(name).strip().lower().replace("-", "_")
    found = _lookup(key)
    if found is None:
        _discover()
        found = _lookup(key)
    if found is not None:
        return found
    names = {i.name for i in metric_infos()}
    aliases = {a for i in metric_infos() for a in i.aliases}
    hint = suggest(key, sorted(names | aliases))
    raise ConfigError(f"unknown metric {name!r}{hint}; run 'synthguard metrics' to list them")


def get_metric(name: str) -> MetricSpec:
    """The card (:class:`MetricSpec`) of ``name`` (or alias), importing just the module that defines
    it; raises ``ConfigError`` for unknown names."""
    canon = canonical_name(name)
    if canon not in _REGISTRY:
        info = _manifest_infos().get(canon)
        if info is not None:
            try:
                importlib.import_module(info.module)
            except ModuleNotFoundError as exc:
                if exc.name != info.module:
                    raise
        if canon not in _REGISTRY:  # moved or renamed since the manifest was written
            _discover()
        if canon not in _REGISTRY:
            raise ConfigError(f"metric {canon!r} is listed in synthguard's manifest but no module "
                              "defines it; regenerate it: python -m synthguard.registry --write-manifest")
    return _REGISTRY[canon]


def metric_info(name: str) -> MetricInfo:
    """What the registry knows of ``name`` (or alias) without importing its implementation."""
    canon = canonical_name(name)
    if canon in _REGISTRY:
        return _info(_REGISTRY[canon])
    return _manifest_infos()[canon]


def info_of(name: str | None) -> MetricInfo | None:
    """The card of ``name`` (or alias) as the manifest or the live registry knows it, without
    importing the metric; ``None`` for a name no card declares (a result built by hand, a metric
    registered for a test and removed since).

    Examples
    --------
    >>> info_of("closest_distance_mia").card["contained_in"]
    'membership_attacks'
    >>> info_of("no such metric") is None
    True
    """
    if not name:
        return None
    key = str(name).strip().lower().replace("-", "_")
    found = _lookup(key)
    if found is None:
        return None
    if found in _REGISTRY:
        return _info(_REGISTRY[found])
    return _manifest_infos().get(found)


def card_of(name: str | None) -> MetricSpec | None:
    """The full card (:class:`MetricSpec`, with its callables) of ``name`` (or alias), importing the
    metric's module; ``None`` for a name no card declares.

    Examples
    --------
    >>> card_of("exact_matches").records.verbatim
    True
    """
    if info_of(name) is None:
        return None
    try:
        return get_metric(str(name))
    except ConfigError:
        return None


def metric_infos() -> list[MetricInfo]:
    """Every metric (the manifest overlaid with metrics registered at run time and plugins), by
    family then name, without importing synthguard's own implementations."""
    load_plugins()
    infos = dict(_manifest_infos())
    for name, spec in list(_REGISTRY.items()):
        infos[name] = _info(spec)
    return sorted(infos.values(), key=lambda s: (s.family, s.name))


def all_metrics() -> list[MetricSpec]:
    """Every registered metric, by family then name (imports every metric module)."""
    _discover()
    return sorted(_REGISTRY.values(), key=lambda s: (s.family, s.name))


def default_metrics() -> list[str]:
    """Names of the metrics that run when the user names none."""
    return [s.name for s in metric_infos() if s.default]


def preset_metrics(preset: str) -> list[str]:
    """The metrics whose cards join ``preset``, in report order (the card's ``order``, then name).

    Examples
    --------
    >>> preset_metrics("quick")[:2]
    ['exact_matches', 'near_copies']
    """
    infos = [i for i in metric_infos() if preset in i.presets]
    return [i.name for i in sorted(infos, key=lambda i: (i.order, i.name))]


# ---------------------------------------------------------------------------- manifest generation
MANIFEST_PATH = Path(__file__).with_name("_manifest.py")
REGENERATE = "python -m synthguard.registry --write-manifest"


def live_manifest() -> dict[str, dict[str, Any]]:
    """The manifest as the decorators declare it now (imports every metric module)."""
    _discover()
    return {s.name: manifest_entry(s) for s in sorted(_REGISTRY.values(), key=lambda s: s.name)
            if s.func.__module__.startswith("synthguard.metrics.")}


def render_manifest(entries: Mapping[str, Mapping[str, Any]]) -> str:
    """The source text of :mod:`synthguard.registry._manifest` for ``entries``."""
    import pprint

    body = pprint.pformat(dict(entries), indent=1, width=100, sort_dicts=False)
    return ('"""Generated by ``' + REGENERATE + '``: do not edit.\n\n'
            "Every metric's card (its ``@register`` arguments and module), so the registry can list\n"
            'and check metrics without importing them. ``tests/unit/registry/test_manifest.py`` checks it is current.\n"""\n\n'
            "# fmt: off\n"
            f"METRICS = {body}\n")


def write_manifest(path: Path | None = None) -> Path:
    """Regenerate :mod:`synthguard.registry._manifest` from the live registry."""
    path = Path(path or MANIFEST_PATH)
    path.write_text(render_manifest(live_manifest()), encoding="utf-8")
    global _MANIFEST_CACHE
    _MANIFEST_CACHE = None
    return path


def missing_inputs(spec: MetricSpec, ctx: Context) -> list[str]:
    """Inputs ``spec`` needs that ``ctx`` lacks."""
    have = set(ctx.tables.roles) | ({"generator"} if ctx.generator is not None else set())
    if spec.from_stats and getattr(ctx.tables, "original_stats", None) is not None:
        have.add("original")  # the original's statistics stand in for its rows
    return [n for n in spec.needs if n not in have]
