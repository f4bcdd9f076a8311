"""The built wheel holds every data file and module, and its installed copy imports every module by itself."""

from __future__ import annotations

import json
import subprocess

from dra_migrate import __version__
from tests.conftest import REPO
from tests.installed.conftest import Installed

# source directory -> where the wheel carries it
DATA = {"rules": "dra_migrate/_rules", "schemas": "dra_migrate/_schemas", "dra_migrate/data": "dra_migrate/data",
        "dra_migrate/templates": "dra_migrate/templates"}


def test_the_wheel_holds_every_data_file(installed: Installed) -> None:
    shipped = set(installed.wheel_files())
    wanted = {
        f"{dest}/{f.relative_to(REPO / src).as_posix()}"
        for src, dest in DATA.items()
        for f in (REPO / src).rglob("*")
        if f.is_file() and "__pycache__" not in f.parts
    }
    assert len(wanted) > 30
    assert not wanted - shipped, sorted(wanted - shipped)


def test_the_wheel_holds_every_module(installed: Installed) -> None:
    shipped = set(installed.wheel_files())
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "dra_migrate").rglob("*.py")}
    assert not modules - shipped, sorted(modules - shipped)
    assert "dra_migrate/py.typed" in shipped


IMPORT_ALL = """
import importlib, json, pkgutil, sys, traceback
import dra_migrate
failed = {}
names = []
for info in pkgutil.walk_packages(dra_migrate.__path__, "dra_migrate."):
    if info.name.endswith(".__main__"):  # running the CLI is not importing it
        continue
    names.append(info.name)
    try:
        importlib.import_module(info.name)
    except BaseException:
        failed[info.name] = traceback.format_exc(limit=-3)
print(json.dumps({"file": dra_migrate.__file__, "names": names, "failed": failed,
                  "path": [p for p in sys.path if "site-packages" not in p and p]}))
"""


def test_the_installed_copy_imports_every_module(installed: Installed, tmp_path) -> None:
    """98 imports sit inside functions: a missing dependency shows only when that function runs. Importing
    every module with only the declared dependencies installed surfaces any module-level one; deptry (in
    .ci/run) checks the function-level ones against the declared dependencies."""
    proc = subprocess.run([str(installed.python), "-I", "-c", IMPORT_ALL], cwd=tmp_path, capture_output=True,
                          text=True, env=installed.env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["file"].startswith(str(installed.venv)), report["file"]  # the installed copy, not the checkout
    assert len(report["names"]) > 100
    assert not report["failed"], "\n".join(f"{k}:\n{v}" for k, v in report["failed"].items())


def test_every_function_level_import_is_installed(installed: Installed, tmp_path) -> None:
    """The imports inside functions (how pathspec slipped through) resolve in the installed copy too."""
    import ast

    wanted: set[str] = set()
    for path in (REPO / "dra_migrate").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    wanted |= {a.name for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    wanted.add(node.module)
    assert "pathspec" in wanted and len(wanted) > 20
    script = ("import importlib.util, json, sys\n"
              f"names = {sorted(wanted)!r}\n"
              "print(json.dumps([n for n in names if importlib.util.find_spec(n) is None]))\n")
    proc = subprocess.run([str(installed.python), "-I", "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, env=installed.env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_the_console_script_runs(installed: Installed, tmp_path) -> None:
    proc = installed.run(["--version"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["dra-migrate", __version__]
