"""Installing perf/'s caches in the hooks cel/ leaves for them: the CEL parser cache (cel.parser_loader)
and the selector-verdict memo (cel.verdicts). Without this (perf/ absent), cel/ builds its parser and
evaluates every selector: the same answers, more slowly.

This module and what `install` imports are small: the entry point calls it once the fast path has given
up, before the compiler is imported; celpy, lark and the memo file are only touched when a selector is."""

from __future__ import annotations

from dra_migrate.cel import parser_loader, verdicts
from dra_migrate.cel.verdicts import VerdictStore


def _load_parser(tree_class: type) -> None:
    from dra_migrate.perf import parser_cache  # lazy: start-up (imports celpy and lark)

    parser_cache.install(tree_class)


def _open_memo() -> VerdictStore:
    from dra_migrate.perf import verdict_memo  # lazy: start-up (only a run that checks a selector reads it)

    return verdict_memo.open_memo()


def install() -> None:
    """Idempotent; must run before cel.compiler is imported for the parser cache to serve this process."""
    parser_loader.use(_load_parser)
    verdicts.use(_open_memo)

