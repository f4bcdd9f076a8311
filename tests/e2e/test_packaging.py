"""Every data file is found through the one resolver, dra_migrate/ruleset/_paths.py, so an installed copy finds what a
checkout finds. (What the built wheel contains and what the installed copy does: tests/installed/.)"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from dra_migrate.ruleset import _paths
from tests.conftest import REPO

PKG = REPO / "dra_migrate"
RESOLVER = PKG / "ruleset" / "_paths.py"
READER = PKG / "ruleset" / "files.py"  # the reader of bundled rules files: its schema map names files
# where the bundled data lives in the repository
DATA_ROOTS = (REPO / "rules", REPO / "schemas", PKG / "data", PKG / "templates")
# names of the import system's own record of where a module is: only the resolver turns them into paths
LOCATION_NAMES = {"__file__", "__path__", "__spec__", "__loader__"}
# ways to reach package data that bypass the resolver: (module or object, attribute); "" is any object
BYPASSES = {("importlib", "resources"), ("resources", "files"), ("resources", "as_file"), ("pkgutil", "get_data"),
            ("", "PackageLoader")}
RESOLVER_CALLS = {"rules_file", "schema_file", "data_file", "rules_data"}
# a bundled file's name may stand outside a resolver call only where it is handed to a loader rooted by it
ALLOWED_NAMES = {("cli/pr.py", "pr_body.md.j2")}  # jinja2 loader over _paths.TEMPLATES_DIR
# a package's location used to list its modules, never to read a file: the lowering passes' discovery
MODULE_LISTINGS = {("lower/passes/__init__.py", "__path__")}


def _modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if p not in (RESOLVER, READER) and "__pycache__" not in p.parts)


def _bundled_names() -> set[str]:
    names: set[str] = set()
    for root in DATA_ROOTS:
        for f in root.rglob("*"):
            if f.is_file():
                names |= {f.relative_to(root).as_posix(), f.name}
    return names


def _offences(path: Path, bundled: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    rel = path.relative_to(PKG).as_posix()
    out: list[str] = []
    for node in ast.walk(tree):
        where = f"{rel}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Name) and node.id in LOCATION_NAMES and (rel, node.id) not in MODULE_LISTINGS:
            out.append(f"{where}: {node.id}")
        elif isinstance(node, ast.Attribute):
            base = node.value.id if isinstance(node.value, ast.Name) else ""
            if node.attr in LOCATION_NAMES or (base, node.attr) in BYPASSES or ("", node.attr) in BYPASSES:
                out.append(f"{where}: {base}.{node.attr}")
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").rsplit(".", 1)[-1]
            for a in node.names:
                if (module, a.name) in BYPASSES or ("", a.name) in BYPASSES:
                    out.append(f"{where}: from {node.module} import {a.name}")
        elif isinstance(node, ast.Import):
            out.extend(f"{where}: import {a.name}" for a in node.names if a.name == "importlib.resources")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value
            if value.startswith(("_rules", "_schemas")):
                out.append(f"{where}: {value!r}")
            elif value in bundled and (rel, value) not in ALLOWED_NAMES:
                call = parents.get(node)
                func = call.func if isinstance(call, ast.Call) else None
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if name not in RESOLVER_CALLS:
                    out.append(f"{where}: {value!r} outside rules_file/schema_file/data_file")
    return out


def test_only_the_resolver_locates_data_files() -> None:
    bundled = _bundled_names()
    assert {"features.yaml", "kinds/core.yaml", "nvidia-gpu-config.schema.json", "pr_body.md.j2"} <= bundled
    offences = [o for f in _modules() for o in _offences(f, bundled)]
    assert not offences, "build data paths through dra_migrate/ruleset/_paths.py:\n" + "\n".join(offences)


@pytest.mark.parametrize(
    "source",
    [
        'from pathlib import Path\nSCHEMA = Path(__file__).parent.parent / "schemas" / "x.json"\n',
        "from importlib import resources\n",
        'import jinja2\nloader = jinja2.PackageLoader("dra_migrate", "templates")\n',
        'from dra_migrate.ruleset.kinds import RULES_DIR\nF = RULES_DIR / "features.yaml"\n',
        'P = "_schemas/labels.schema.json"\n',
    ],
)
def test_the_guard_sees_each_way_around_the_resolver(source: str, tmp_path: Path) -> None:
    module = tmp_path / "dra_migrate" / "bad.py"
    module.parent.mkdir()
    module.write_text(source)
    global PKG
    saved, PKG = PKG, tmp_path / "dra_migrate"
    try:
        assert _offences(module, _bundled_names())
    finally:
        PKG = saved


def test_the_resolver_points_inside_the_package() -> None:
    assert PKG.resolve() == _paths.PACKAGE_DIR
    for directory, name in ((_paths.RULES_DIR, "features.yaml"), (_paths.SCHEMAS_DIR, "labels.schema.json"),
                            (_paths.DATA_DIR, "devices/nvidia.yaml"), (_paths.TEMPLATES_DIR, "pr_body.md.j2")):
        assert (directory / name).is_file(), directory / name
    assert _paths.rules_file("kinds/core.yaml").is_file()
    assert _paths.display_name(str(_paths.rules_file("kinds/core.yaml"))) == "rules/kinds/core.yaml"
    assert _paths.display_name("/elsewhere/kinds.yaml") == "/elsewhere/kinds.yaml"


def test_the_checkout_links_the_top_level_data_directories() -> None:
    """rules/ and schemas/ stay at the repository's top level; the package sees them through two links."""
    for link, target in (("_rules", "rules"), ("_schemas", "schemas")):
        path = PKG / link
        if not path.is_symlink():
            pytest.fail(f"dra_migrate/{link} must be a symlink to ../{target} (git config core.symlinks=true)")
        assert os.readlink(path) == f"../{target}"
        assert path.resolve() == (REPO / target).resolve()
