"""A metric is declared once: its card holds what the verdict, the report, the presets and the cluster
need, and no module outside ``metrics/`` keeps a table keyed by a metric's name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from synthguard.core.results import LEAK_TYPES, RISKS
from synthguard.registry import (
    BACKENDS,
    CARD_RISKS,
    all_metrics,
    card_of,
    info_of,
    metric_infos,
    preset_metrics,
    register,
)
from synthguard.registry.spec import _ALIASES, _REGISTRY

PKG = Path(__file__).resolve().parents[3] / "src" / "synthguard"
NON_PRIVACY = {"fidelity", "utility", "distortion"}


def _package_cards():
    """synthguard's own cards (other tests register throwaway metrics in the same process)."""
    return [s for s in all_metrics() if s.func.__module__.startswith("synthguard.metrics.")]


def test_every_privacy_metric_card_names_its_risk_and_its_attacker():
    for spec in _package_cards():
        if spec.family in NON_PRIVACY:
            assert spec.risk is None, f"{spec.name}: a {spec.family} metric answers no privacy risk"
            continue
        assert spec.risk in CARD_RISKS, f"{spec.name}: card names no risk"
        assert len(spec.knowledge) > 20, f"{spec.name}: card says nothing of the attacker's knowledge"
        assert spec.explainer, f"{spec.name}: no explainer"


def test_card_fields_are_valid():
    for spec in _package_cards():
        assert set(spec.sees) <= set(LEAK_TYPES), spec.name
        assert spec.backend in BACKENDS, spec.name
        assert spec.contained_in is None or info_of(spec.contained_in) is not None, spec.name


def test_presets_come_from_the_cards_in_report_order():
    quick, privacy, full = (preset_metrics(p) for p in ("quick", "privacy", "full"))
    assert set(quick) <= set(privacy) <= set(full)
    orders = {i.name: i.order for i in metric_infos()}
    for names in (quick, privacy, full):
        assert [orders[n] for n in names] == sorted(orders[n] for n in names)
    for name in privacy:
        assert "privacy" in info_of(name).presets


def test_manifest_answers_the_card_without_importing_the_metric():
    info = info_of("closest_distance_mia")
    assert info.card["contained_in"] == "membership_attacks"
    assert info.risk == "presence" and info.backend == "any"
    assert info_of("exact_matches").backend == "any"
    assert info_of("generalized_cap").backend == "local"


def test_a_card_rejects_what_it_cannot_mean():
    with pytest.raises(ValueError, match="risk"):
        register("card_probe_bad_risk", family="privacy", direction="lower is safer", risk="fame")
    with pytest.raises(ValueError, match="leak types"):
        register("card_probe_bad_sees", family="privacy", direction="lower is safer", sees=("gossip",))
    with pytest.raises(ValueError, match="backend"):
        register("card_probe_bad_backend", family="privacy", direction="lower is safer", backend="gpu")


def test_a_card_registered_at_run_time_joins_its_preset_and_names_its_risk():
    @register("card_probe_plugin", family="privacy", direction="lower is safer", risk="presence",
              knowledge="a person's full record; looks for it", presets=("quick",), order=5)
    def card_probe_plugin(ctx):  # pragma: no cover - never run
        return None

    try:
        assert preset_metrics("quick")[0] == "card_probe_plugin"
        assert card_of("card_probe_plugin").risk == "presence"
        from synthguard.run.verdict import card_risk

        assert card_risk("card_probe_plugin") == "presence"
    finally:
        _REGISTRY.pop("card_probe_plugin", None)
        _ALIASES.pop("card_probe_plugin", None)


# ---------------------------------------------------------------------------------------------
# No table keyed by a metric's name outside metrics/

#: Words that name a metric and also something else the code must name: a risk ("linkability",
#: "inference"), a metric family ("anonymeter"). A table keyed by metric names always lists other
#: names too, so leaving these out of the scan hides no table.
SHARED_WORDS = set(RISKS) | {"anonymeter"}
#: Folders whose vocabulary is another's: the drop-in facades map the reference libraries' own
#: names (SynEval's "exact_matches", PETsARD's "accuracy"...) onto synthguard's, and the
#: generator-in-the-loop attacks use "accuracy" as a criterion.
OTHER_VOCABULARIES = {"compat": None, "attacks": {"accuracy"}}
#: File formats whose keys name the metric they serve: the original's profile (``synthguard
#: profile``) stores the ``accuracy`` metric's reference statistics under its name.
FILE_FORMATS = {("run/profile.py", "accuracy")}
#: Sites still to move onto the typed report model (file, metric name); this list only shrinks.
KNOWN: set[tuple[str, str]] = set()


def _metric_names() -> set[str]:
    return {i.name for i in metric_infos()} | {a for i in metric_infos() for a in i.aliases}


def _keyed_uses(tree: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    """String constants naming a metric used as a dictionary key, a subscript or ``.get`` key,
    a comparison operand, or an element of a literal compared against."""
    hits: list[tuple[int, str]] = []

    def const(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            return node.value
        return None

    def elements(node: ast.AST) -> list[ast.AST]:
        return list(node.elts) if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]

    for node in ast.walk(tree):
        found: list[ast.AST] = []
        if isinstance(node, ast.Dict):
            found = [k for k in node.keys if k is not None]
        elif isinstance(node, ast.Subscript):
            found = [node.slice]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("get", "pop", "setdefault") and node.args:
            found = [node.args[0]]
        elif isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                found += elements(side)
        elif isinstance(node, ast.For):
            found = elements(node.iter)
        for f in found:
            name = const(f)
            if name:
                hits.append((f.lineno, name))
    return hits


def test_no_metric_name_is_a_table_key_or_comparison_outside_metrics():
    names = _metric_names() - SHARED_WORDS
    offending = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        top = rel.split("/")[0]
        if top == "metrics" or rel == "registry/_manifest.py":
            continue
        if top in OTHER_VOCABULARIES and OTHER_VOCABULARIES[top] is None:
            continue
        allowed = OTHER_VOCABULARIES.get(top) or set()
        for line, name in _keyed_uses(ast.parse(path.read_text(encoding="utf-8")), names):
            if name in allowed or (rel, name) in KNOWN | FILE_FORMATS:
                continue
            offending.append(f"{rel}:{line}: {name!r}")
    assert not offending, ("metric names used as table keys or comparisons outside metrics/ (ask "
                           "the metric's card instead):\n" + "\n".join(offending))


def test_the_known_list_only_holds_sites_that_still_exist():
    names = _metric_names() - SHARED_WORDS
    live = set()
    for rel, _ in KNOWN:
        tree = ast.parse((PKG / rel).read_text(encoding="utf-8"))
        live |= {(rel, n) for _, n in _keyed_uses(tree, names)}
    assert KNOWN <= live, f"remove from KNOWN: {sorted(KNOWN - live)}"


def test_the_name_scan_sees_a_table_keyed_by_metric_names():
    tree = ast.parse('T = {"exact_matches": 1}\nif x == "near_copies": pass\ny = d.get("dcr")\n'
                     'for n in ("ims", "nndr"): pass\n')
    got = {n for _, n in _keyed_uses(tree, _metric_names())}
    assert got == {"exact_matches", "near_copies", "dcr", "ims", "nndr"}
