"""Fail when the import graph of dra_migrate has a cycle between packages (any depth: top-level packages,
and the sub-packages of one package) or between modules of any package. Function-level imports count: a
cycle hidden inside a function is still a cycle. Uses grimp, the graph library import-linter is built on."""

from __future__ import annotations

import sys
from collections import defaultdict

import grimp


def strongly_connected(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; only components with more than one node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def package_of(module: str, depth: int) -> str:
    return ".".join(module.split(".")[:depth])


def main() -> int:
    graph = grimp.build_graph("dra_migrate", include_external_packages=False)
    modules = set(graph.modules)
    problems: list[str] = []
    module_edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in modules}
    for component in strongly_connected(modules, module_edges):
        problems.append("module cycle: " + " -> ".join(component))
    packages = {m for m in modules if graph.find_children(m)} | {"dra_migrate"}
    for depth in range(2, 1 + max(m.count(".") for m in modules)):
        edges: dict[str, set[str]] = defaultdict(set)
        nodes: set[str] = set()
        for importer, imported in module_edges.items():
            for target in imported:
                a, b = package_of(importer, depth), package_of(target, depth)
                # only siblings: the two modules' packages share their parent and differ at this depth
                if a != b and {a, b} <= packages and package_of(a, depth - 1) == package_of(b, depth - 1):
                    nodes |= {a, b}
                    edges[a].add(b)
        for component in strongly_connected(nodes, edges):
            problems.append(f"package cycle (depth {depth}): " + " <-> ".join(component))
    for p in problems:
        print(p)
    print(f"{len(modules)} modules: {'no import cycle' if not problems else f'{len(problems)} cycle(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
