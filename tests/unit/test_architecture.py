"""The package's layout is the one docs/architecture.md describes, and imports only point down.

Every import counts, at module level or inside a function: an import inside a function still ties
the two modules together (that is how the two import circles of the old layout hid).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PKG = REPO / "src" / "synthguard"
DOC = REPO / "docs" / "architecture.md"

#: Imports that still point to a higher layer: (importing module, imported room) -> what removes it.
#: This list only shrinks.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}

TOP = 10  # the package's own __init__ and __main__: public names, above everything


def _map() -> dict[str, int]:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- architecture-map: begin -->")[1].split("<!-- architecture-map: end -->")[0]
    rows = re.findall(r"^\| `([^`]+)` \| (\d+) \|", block, flags=re.M)
    return {name.rstrip("/").removesuffix(".py"): int(layer) for name, layer in rows}


def _rooms() -> set[str]:
    folders = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in PKG.glob("*.py") if not p.stem.startswith("__")}
    return folders | modules


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _statements():
    """Every import of a synthguard module, once: ``(module, imported, names, line)`` where
    ``imported`` is the module named after ``from`` (relative imports resolved) with ``names`` the
    names imported from it, or the module of a plain ``import`` with ``names`` empty."""
    for path in sorted(PKG.rglob("*.py")):
        mod = _module_name(path)
        pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    where = ".".join(base + ([node.module] if node.module else []))
                elif node.module and node.module.split(".")[0] == "synthguard":
                    where = node.module
                else:
                    continue
                yield mod, where, [a.name for a in node.names], node.lineno
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "synthguard":
                        yield mod, a.name, [], node.lineno


def _imports() -> list[tuple[str, str, int]]:
    """(importing module, imported module, line) for every import of a synthguard module."""
    out = []
    for mod, where, names, line in _statements():
        if where == "synthguard" and names:  # from synthguard import x: x is the room
            out += [(mod, f"synthguard.{n}", line) for n in names]
        else:
            out.append((mod, where, line))
    return out


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and not parts[1].startswith("__") else "<top>"


def _layer(layers: dict[str, int], room: str) -> int:
    return TOP if room == "<top>" else layers.get(room, TOP)


def test_the_architecture_map_lists_exactly_the_package_folders_and_public_modules():
    assert set(_map()) == _rooms()


def test_imports_only_point_to_the_same_or_a_lower_layer_but_for_plugin_discovery():
    layers = _map()
    upward = set()
    for src, dst, line in _imports():
        a, b = _room(src), _room(dst)
        if a == b:
            continue
        if a == "registry" and b == "metrics":  # plugin discovery: collects the @register declarations
            continue
        if _layer(layers, b) > _layer(layers, a):
            upward.add((src, b, line))
    unexplained = sorted((s, b, n) for s, b, n in upward if (s, b) not in KNOWN_UPWARD)
    assert not unexplained, f"imports pointing to a higher layer: {unexplained}"
    stale = sorted(set(KNOWN_UPWARD) - {(s, b) for s, b, _ in upward})
    assert not stale, f"KNOWN_UPWARD lists imports that are gone (remove them from the list): {stale}"


def test_no_import_circle_between_folders():
    graph: dict[str, set[str]] = {}
    for src, dst, _ in _imports():
        a, b = _room(src), _room(dst)
        if a != b and not (a == "registry" and b == "metrics") and "<top>" not in (a, b) \
                and (src, b) not in KNOWN_UPWARD:
            graph.setdefault(a, set()).add(b)
    circles = _circles(graph)  # the one circle search, shared with the module-level check
    assert not circles, f"import circles between folders: {circles}"


def _module_graph() -> dict[str, set[str]]:
    """Module -> the synthguard modules it imports (``from pkg import name`` counts as importing
    the module ``pkg.name`` when there is one, else the package ``pkg``)."""
    modules = {_module_name(p) for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, where, names, _ in _statements():
        targets = [f"{where}.{n}" if f"{where}.{n}" in modules else where for n in names] or [where]
        for t in targets:
            while t not in modules and "." in t:
                t = t.rsplit(".", 1)[0]
            if t != mod:
                graph[mod].add(t)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module, each sorted, in sorted order: the
    library function ``scipy.sparse.csgraph.connected_components`` is called on the import graph."""
    import numpy as np
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    nodes = sorted(set(graph) | {w for ws in graph.values() for w in ws})
    at = {v: i for i, v in enumerate(nodes)}
    edges = [(at[v], at[w]) for v, ws in graph.items() for w in ws]
    rows = np.array([e[0] for e in edges], dtype=np.int64)
    cols = np.array([e[1] for e in edges], dtype=np.int64)
    adj = coo_matrix((np.ones(len(edges)), (rows, cols)), shape=(len(nodes), len(nodes)))
    _, label = connected_components(adj, directed=True, connection="strong")
    groups: dict[int, list[str]] = {}
    for v, lab in zip(nodes, label.tolist(), strict=True):
        groups.setdefault(lab, []).append(v)
    return sorted(g for g in groups.values() if len(g) > 1)


def test_no_import_circle_between_modules_of_a_folder():
    """Inside a folder too, imports form no circle (a module and its package's ``__init__`` count):
    two modules that need each other are one job, or share a third module."""
    graph = _module_graph()
    inside = {m: {t for t in ts if _room(t) == _room(m)} for m, ts in graph.items()}
    circles = _circles(inside)
    assert not circles, f"import circles inside a folder: {circles}"


def test_the_module_graph_sees_a_circle():
    """The circle check is not vacuous: two modules importing each other are found."""
    assert _circles({"a.x": {"a.y"}, "a.y": {"a.x"}, "a.z": {"a.x"}}) == [["a.x", "a.y"]]
    assert _module_graph()["synthguard.run.runner"] >= {"synthguard.run.executor"}
