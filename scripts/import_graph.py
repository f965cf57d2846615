"""The package import graph of chalicelib and its layer rules: `python -m scripts.import_graph`.

Every import counts, module-level or inside a function (a function-local import is still a
dependency; hiding a cycle in a function does not remove it). A node is a package of chalicelib
(`incident`, `api`, ...) or a top-level module (`errors`, `settings`, ...). The rules
(docs/ARCHITECTURE.md):

1. Each node sits in a layer; it imports only from its own layer or the layers below.
2. Within a layer, the nodes form no cycle.
3. Within a package, the modules form no cycle either (a package is its `__init__`): no cycle is
   allowed anywhere, at any level.

`tests/unit/test_import_layers.py` runs `check()` and fails on any violation.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from chalicelib.deploy.source_trees import parsed

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "chalicelib"

# Bottom to top. A node not listed here is an error: every new package must be placed.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "base",
        frozenset(
            {"settings", "clock", "errors", "aws", "logs", "model_base", "pagination", "secrets_box", "severity"}
            | {"json_body", "zones", "addresses"}
            | {"queue", "templates", "signed_tokens", "emf"}
        ),
    ),
    # delivery: the claim-attempt-retry kernel and the one POST to a customer's URL (over store).
    ("store", frozenset({"store", "delivery"})),
    (
        "domains",
        frozenset(
            {
                "organization",
                "ratelimit",
                "budget",
                "idempotency",
                "auth",
                "identity",
                "apikey",
                "directory",
                "contact",
                "oncall",
                "escalation",
                "catalog",
                "incident",
                "eventrule",
                "maintenance",
                "alert",
                "change",
                "heartbeat",
                "notification",
                "paging",
                "integration",
                "postmortem",
                "statuspage",
                "outbound",
                "subscriber",
                "externalref",
                "eventlog",
                "opsgenie",
                "exports",
                "insights",
            }
        ),
    ),
    ("api", frozenset({"api", "console"})),
    ("entry points", frozenset({"workers", "table_registry", "local", "cli", "deploy"})),
    # client: the `tocsin` command, a client of the public HTTP API; it imports nothing of chalicelib.
    ("client", frozenset({"client"})),
)
LAYER_OF: dict[str, int] = {node: index for index, (_, nodes) in enumerate(LAYERS) for node in nodes}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    where: str  # path:line of one import that makes it


def node_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != PACKAGE or len(parts) < 2:
        return None
    return parts[1]


def _imported_modules(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        if node.module == PACKAGE:  # `from chalicelib import aws, clock`
            return [f"{PACKAGE}.{alias.name}" for alias in node.names]
        return [node.module]
    return []


def edges(root: Path = ROOT) -> list[Edge]:
    found: dict[tuple[str, str], Edge] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        relative = path.relative_to(root)
        source = relative.parts[1].removesuffix(".py") if len(relative.parts) > 1 else None
        if source is None or source == "__init__":
            continue
        for node in ast.walk(parsed(path)):
            for module in _imported_modules(node):
                target = node_of(module)
                if target is not None and target != source and (source, target) not in found:
                    found[(source, target)] = Edge(source, target, f"{relative}:{getattr(node, 'lineno', 0)}")
    return sorted(found.values(), key=lambda edge: (edge.source, edge.target))


def _module_paths(root: Path) -> dict[str, Path]:
    """Every module of the package by dotted name below it (`api.lazy`; a package: `api`)."""
    found: dict[str, Path] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root / PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            found[".".join(parts)] = path
    return found


def _module_targets(node: ast.AST, modules: dict[str, Path]) -> list[str]:
    """The modules of the package one import statement loads (a package's `__init__` included)."""
    targets: list[str] = []
    names = [alias.name for alias in node.names] if isinstance(node, ast.ImportFrom) else []
    for module in _imported_modules(node):
        if not module.startswith(PACKAGE + "."):
            continue
        dotted = module.removeprefix(PACKAGE + ".")
        if isinstance(node, ast.ImportFrom) and node.module != PACKAGE:
            targets.extend(f"{dotted}.{name}" for name in names if f"{dotted}.{name}" in modules)
        while dotted and dotted not in modules:  # `import chalicelib.x.y` of a name that is no module
            dotted = dotted.rpartition(".")[0]
        if dotted:
            targets.append(dotted)
    return targets


def module_edges(root: Path = ROOT) -> list[Edge]:
    """Every import from one module of the package to another, function-local ones too."""
    modules = _module_paths(root)
    found: dict[tuple[str, str], Edge] = {}
    for source, path in modules.items():
        relative = path.relative_to(root)
        for node in ast.walk(parsed(path)):
            for target in _module_targets(node, modules):
                if target != source and (source, target) not in found:
                    found[(source, target)] = Edge(source, target, f"{relative}:{getattr(node, 'lineno', 0)}")
    return sorted(found.values(), key=lambda edge: (edge.source, edge.target))


def _module_cycles(root: Path) -> list[str]:
    """Cycles among the modules of one package (a cycle across packages is a package cycle)."""
    all_edges = module_edges(root)
    graph: dict[str, set[str]] = defaultdict(set)
    for edge in all_edges:
        graph[edge.source].add(edge.target)
    problems = []
    for component in _cycles(set(_module_paths(root)), graph):
        if len({member.split(".")[0] for member in component}) > 1:
            continue
        members = set(component)
        links = [f"{e.source}->{e.target} ({e.where})" for e in all_edges if {e.source, e.target} <= members]
        problems.append("module cycle between " + ", ".join(component) + ": " + "; ".join(links))
    return problems


def _cycles(nodes: set[str], graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, set()) & nodes):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return components


def check(root: Path = ROOT) -> list[str]:
    """Every violation of the layer rules, as readable lines (empty when the graph is clean)."""
    problems: list[str] = []
    all_edges = edges(root)
    graph: dict[str, set[str]] = defaultdict(set)
    nodes: set[str] = set()
    for edge in all_edges:
        graph[edge.source].add(edge.target)
        nodes |= {edge.source, edge.target}
    for path in (root / PACKAGE).iterdir():
        if path.name != "__init__.py" and (path.suffix == ".py" or (path / "__init__.py").exists()):
            nodes.add(path.name.removesuffix(".py"))
    for node in sorted(nodes - LAYER_OF.keys()):
        problems.append(f"{node}: in no layer (place it in scripts/import_graph.py LAYERS)")
    for edge in all_edges:
        source_layer, target_layer = LAYER_OF.get(edge.source), LAYER_OF.get(edge.target)
        if source_layer is not None and target_layer is not None and target_layer > source_layer:
            problems.append(
                f"{edge.source} ({LAYERS[source_layer][0]}) imports {edge.target} "
                f"({LAYERS[target_layer][0]}), a higher layer: {edge.where}"
            )
    for component in _cycles(nodes, graph):
        members = set(component)
        links = [f"{e.source}->{e.target} ({e.where})" for e in all_edges if {e.source, e.target} <= members]
        problems.append("cycle between " + ", ".join(component) + ": " + "; ".join(links))
    problems.extend(_module_cycles(root))
    return problems


def layer_order(root: Path = ROOT) -> list[tuple[str, list[str]]]:
    """Each layer's nodes in dependency order (a node after everything it imports in its layer)."""
    all_edges = edges(root)
    order: list[tuple[str, list[str]]] = []
    for name, members in LAYERS:
        remaining = set(members)
        placed: list[str] = []
        while remaining:
            ready = sorted(
                node
                for node in remaining
                if not any(e.source == node and e.target in remaining and e.target != node for e in all_edges)
            )
            if not ready:  # a cycle: check() reports it
                placed.extend(sorted(remaining))
                break
            placed.extend(ready)
            remaining -= set(ready)
        order.append((name, placed))
    return order


def main() -> int:
    for name, placed in reversed(layer_order()):
        print(f"{name:>13}: {' '.join(placed)}")
    problems = check()
    for problem in problems:
        print(f"VIOLATION {problem}")
    print(f"{len(edges())} package edges, {len(module_edges())} module edges, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
