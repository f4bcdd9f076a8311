"""Data files are reachable from the package itself, so a non-editable install finds them too."""

from __future__ import annotations

import tomllib
from pathlib import Path

import dra_migrate
from dra_migrate import _paths

PKG = Path(dra_migrate.__file__).parent
ROOT = PKG.parent


def test_data_dirs_resolve_through_the_package() -> None:
    assert (PKG / "_rules" / "features.yaml").is_file()
    assert (PKG / "_schemas" / "features.schema.json").is_file()
    assert (PKG / "_rules").resolve() == _paths.RULES_DIR
    for name in ("features.yaml", "labels.yaml", "resources.yaml", "risks.yaml", "kinds/core.yaml"):
        assert (_paths.RULES_DIR / name).is_file(), name


def test_package_data_ships_every_rule_and_schema() -> None:
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "dra_migrate"
    ]
    shipped = {p.resolve() for g in globs for p in PKG.glob(g) if p.is_file()}
    wanted = {p.resolve() for p in (ROOT / "rules").rglob("*.yaml")} | {
        p.resolve() for p in (ROOT / "schemas").glob("*.json")
    }
    assert wanted <= shipped, sorted(map(str, wanted - shipped))
