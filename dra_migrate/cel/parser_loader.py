"""Where celpy's CEL parser may come from instead of being built by this process (~0.3 s).

cel.compiler calls `load` once, when it is imported, before celpy would build the parser itself. By default
it does nothing (celpy builds it); perf/ installs its per-user parser cache (dra_migrate.perf.parser_cache)
with `use`, from the entry point and the run driver, before anything compiles a selector.
"""

from __future__ import annotations

from collections.abc import Callable

ParserLoader = Callable[[type], None]  # fills celpy's CELParser.CEL_PARSER for a tree class, or leaves it
_loader: ParserLoader | None = None


def use(loader: ParserLoader | None) -> None:
    global _loader
    _loader = loader


def load(tree_class: type) -> None:
    if _loader is not None:
        _loader(tree_class)
