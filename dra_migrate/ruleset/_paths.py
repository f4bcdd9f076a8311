"""The one place that knows where dra-migrate's data files are: every other module asks here.

All of them live inside the package, wherever the import system found it (site-packages for a wheel, the
checkout for a development run or an editable install):

- ``_rules/`` and ``_schemas/``: the repository's top-level ``rules/`` and ``schemas/``. In a checkout they are
  symlinks to those directories; a wheel build follows the links and copies the files in as package data
  (``[tool.setuptools.package-data]``), so an installed copy holds real directories at the same place.
- ``data/`` (device shapes) and ``templates/`` (the pull request body) are ordinary package directories.

This module takes the package's directory from its own ``__file__``, which is what
``importlib.resources.files("dra_migrate")`` returns for a package on disk, without the ~8 ms that importing
``importlib.resources`` (zipfile, tempfile, lzma) adds to every run that finds a GPU file. The callers need real
paths (``rglob``, file names in diagnostics), so a zipped install is not supported. ``tests/e2e/test_packaging.py``
fails when another module builds a data path itself; ``tests/installed/`` checks the built wheel.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # this module is dra_migrate/ruleset/_paths.py

RULES_DIR = (PACKAGE_DIR / "_rules").resolve()
SCHEMAS_DIR = (PACKAGE_DIR / "_schemas").resolve()
DATA_DIR = PACKAGE_DIR / "data"
TEMPLATES_DIR = PACKAGE_DIR / "templates"


def rules_file(name: str) -> Path:
    """A bundled rule file, by its path under the repository's ``rules/`` (``"kinds/core.yaml"``)."""
    return RULES_DIR / name


def schema_file(name: str) -> Path:
    """A bundled JSON schema, by its file name under the repository's ``schemas/``."""
    return SCHEMAS_DIR / name


def data_file(name: str) -> Path:
    """A file of ``dra_migrate/data`` (``"devices/nvidia.yaml"``)."""
    return DATA_DIR / name


def display_name(path: str) -> str:
    """A bundled rule or schema file as the repository names it (``rules/kinds/core.yaml``), the same for an
    installed copy and a checkout; any other path unchanged."""
    for directory, shown in ((RULES_DIR, "rules"), (SCHEMAS_DIR, "schemas")):
        prefix = str(directory) + "/"
        if path.startswith(prefix):
            return f"{shown}/{path[len(prefix):]}"
    return path


def module_dir(module: ModuleType) -> Path:
    """The directory a third-party module was loaded from, for the data files it ships (celpy's grammar)."""
    origin = module.__file__
    if origin is None:  # a namespace package has no file; nothing we use is one
        raise FileNotFoundError(f"{module.__name__} has no location on disk")
    return Path(origin).resolve().parent
