"""The package map in README "Architecture" is the package: every top-level package and module of dra_migrate/
is on it, nothing else is, and the import layers it states are the import-linter contract's, in order."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "dra_migrate"


def _section() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Architecture\n")
    return readme[start : readme.index("\n## ", start + 1)]


def _contract_layers() -> list[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [layer.replace("dra_migrate.", "") for layer in contract["layers"]]


def _top_level() -> set[str]:
    names = {p.name + "/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    return names | {p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}


def test_the_map_lists_every_top_level_package_and_module() -> None:
    mapped = set(re.findall(r"^- `([\w]+/|[\w]+\.py)`", _section(), re.M))
    mentioned = set(re.findall(r"`(\w+/|\w+\.py)`", _section()))
    assert _top_level() - {"__main__.py"} <= mapped | mentioned
    assert mapped <= _top_level()


def test_the_stated_layers_are_the_contract() -> None:
    section = _section()
    marker = section.index("<!-- layers:")
    text = section[section.index("\n", marker) + 1 :].split("\n\n", 1)[0]
    stated = [layer.strip().strip("`") for layer in " ".join(text.split()).split(" > ")]
    assert stated == [layer.replace(" | dra_migrate.", " | ") for layer in _contract_layers()]


def test_the_contract_covers_every_top_level_package() -> None:
    layered = {name for layer in _contract_layers() for name in layer.replace("dra_migrate.", "").split(" | ")}
    packages = {n.rstrip("/").removesuffix(".py") for n in _top_level()}
    # ir and plan are single-file stages and layers of their own; every package is in the contract
    assert packages - layered == set(), packages - layered


def test_tests_follow_the_layers() -> None:
    tests = REPO / "tests"
    assert not sorted(p.name for p in tests.glob("test_*.py")), "put a test under tests/<layer>/"
    packages = {n.rstrip("/").removesuffix(".py") for n in _top_level()}
    dirs = {p.name for p in tests.iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    assert dirs - packages <= {"e2e", "installed"}, dirs - packages
