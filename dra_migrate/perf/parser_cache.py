"""celpy's CEL parser loaded from a per-user cache instead of rebuilt by every process.

Building the LALR tables of celpy's grammar costs about 0.3 s, most of a pre-commit run on one GPU file;
lark saves a built parser and loads it back in about 20 ms (`Lark.save` / `Lark.load`, public API). celpy
keeps one parser per process in `CELParser.CEL_PARSER`: we fill it before celpy would build it.

The parser is built by celpy itself on a miss, so its options stay celpy's. The file name is a hash of
everything the tables depend on (grammar text, lark, celpy, Python and dra-migrate versions, tree class):
an upgrade never loads a stale parser. The directory is private to the user (never /tmp: a pickle someone
else wrote would run their code), files are written to a temporary name and renamed (concurrent runs see
a whole file or none), and any failure — read-only or missing home, unreadable or foreign file — falls back
to building the parser in memory, exactly as without the cache.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import celpy
import lark
from celpy import celparser
from celpy.celparser import CELParser

from dra_migrate import __version__
from dra_migrate.perf.usercache import cache_dir, own_private_file, save
from dra_migrate.ruleset._paths import module_dir

_PREFIX = "cel-parser-"


def cache_key(tree_class: type) -> str:
    grammar = (module_dir(celparser) / "cel.lark").read_bytes()
    h = hashlib.sha256(grammar)
    for part in (lark.__version__, getattr(celpy, "__version__", "?"), sys.version, __version__,
                 f"{tree_class.__module__}.{tree_class.__qualname__}"):
        h.update(b"\0" + part.encode())
    return h.hexdigest()[:32]


def _load(path: Path) -> lark.Lark | None:
    try:
        if not own_private_file(path):
            return None
        with path.open("rb") as f:
            parser = lark.Lark.load(f)
    except Exception:  # missing, truncated, or written by an incompatible library: rebuild
        return None
    return parser if isinstance(parser, lark.Lark) else None


def _save(directory: Path, path: Path, parser: lark.Lark) -> None:
    save(directory, path, parser.save, f"{_PREFIX}*.pickle")  # parsers of versions no longer installed


def install(tree_class: type = lark.Tree) -> None:
    """Make celpy's shared parser available, from the cache when possible. Call before celpy.Environment()."""
    if CELParser.CEL_PARSER is not None:
        return
    directory = cache_dir()
    if directory is None:
        return  # celpy builds it
    path = directory / f"{_PREFIX}{cache_key(tree_class)}.pickle"
    parser = _load(path)
    if parser is not None:
        CELParser.CEL_PARSER = parser
        return
    CELParser(tree_class=tree_class)  # celpy builds CEL_PARSER with its own options
    if CELParser.CEL_PARSER is not None:
        _save(directory, path, CELParser.CEL_PARSER)
