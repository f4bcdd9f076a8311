"""Where the data files live: `rules/` and `schemas/` at the repository root.

The package reaches them through the symlinks `dra_migrate/_rules` and `dra_migrate/_schemas`: in a checkout (and
an editable install) they resolve to the repository's directories; a wheel build follows them and copies the
files in as package data, so a plain `pip install .` finds the same paths inside the installed package.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent

RULES_DIR = (_PKG / "_rules").resolve()
SCHEMAS_DIR = (_PKG / "_schemas").resolve()
