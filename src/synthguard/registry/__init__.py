"""The metric registry: every metric declares its card once, with :func:`register` beside its function,
and is looked up here by name (or alias).

A metric is a plain function ``func(ctx: Context, **params) -> MetricResult`` decorated with
:func:`register`, whose arguments are the metric's card (:class:`MetricSpec`): family, inputs,
parameters with their constraints, direction, reference thresholds, and what the verdict, the report,
the presets and the cluster need to know (risk, attacker knowledge, leak types seen, presets,
backend, records, charts, explainer). The cards are the single source of truth; no other module keeps
a table keyed by a metric's name.

Modules: :mod:`.params` (parameters and constraints), :mod:`.spec` (the card, :func:`register`,
:func:`finalise`), :mod:`.context` (what a metric receives), :mod:`.lookup` (names, the generated
manifest, plugins).
"""

from __future__ import annotations

from .context import Context, Memo
from .lookup import (
    ENTRY_POINT_GROUP,
    MANIFEST_PATH,
    REGENERATE,
    MetricInfo,
    ParamInfo,
    _discover,
    _manifest_infos,
    all_metrics,
    canonical_name,
    card_of,
    default_metrics,
    get_metric,
    info_of,
    live_manifest,
    load_plugins,
    manifest_entry,
    metric_info,
    metric_infos,
    missing_inputs,
    preset_metrics,
    render_manifest,
    write_manifest,
)
from .params import CONSTRAINTS, Interval, Param, validate_seed
from .spec import (
    _ALIASES,
    _REGISTRY,
    BACKENDS,
    CARD_RISKS,
    LEVEL_FROM_THRESHOLDS,
    NEEDS,
    ORIGINAL_ROWS_NEEDED,
    PRESET_NAMES,
    MetricSpec,
    RecordsCard,
    finalise,
    register,
    unregister,
)

__all__ = ["BACKENDS", "CARD_RISKS", "CONSTRAINTS", "Context", "ENTRY_POINT_GROUP", "Interval",
           "LEVEL_FROM_THRESHOLDS", "MANIFEST_PATH", "Memo", "MetricInfo", "MetricSpec", "NEEDS",
           "ORIGINAL_ROWS_NEEDED", "PRESET_NAMES", "Param", "ParamInfo", "REGENERATE", "RecordsCard",
           "_ALIASES", "_REGISTRY", "_discover", "_manifest_infos", "all_metrics", "canonical_name", "card_of",
           "default_metrics", "finalise", "get_metric", "info_of", "live_manifest", "load_plugins",
           "manifest_entry", "metric_info", "metric_infos", "missing_inputs", "preset_metrics",
           "register", "render_manifest", "unregister", "validate_seed", "write_manifest"]
