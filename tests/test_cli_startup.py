"""The start-up short cuts keep the CLI's behaviour: lazy command registration (dra_migrate.cli.app) and the
hook command line run without typer (dra_migrate.entry._without_typer)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dra_migrate.cli import app as app_module
from dra_migrate.cli.migrate_cmd import MigrateArgs
from tests.conftest import REPO
from tests.integration_helpers import GPU_DEPLOYMENT

FULL = "import sys; sys.argv[0] = 'dra-migrate'; from dra_migrate.cli.app import run; run()"
# prints which framework modules the entry point imported, after it exits
PROBE = (
    "import atexit, sys; "
    "atexit.register(lambda: sys.__stderr__.write('typer-imported=%s\\n' % ('typer' in sys.modules))); "
    "sys.argv[0] = 'dra-migrate'; from dra_migrate.entry import main; main()"
)


def _run(code: list[str], cwd: Path, env_extra: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRA_MIGRATE_")}
    env["PYTHONPATH"] = str(REPO)
    env.update(env_extra or {})
    r = subprocess.run([sys.executable, *code], cwd=cwd, capture_output=True, env=env, timeout=120)
    return r.returncode, r.stdout, r.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # bounds the config file search
    (tmp_path / "gpu.yaml").write_text(GPU_DEPLOYMENT)
    selected = GPU_DEPLOYMENT.replace("name: web", "name: other").replace(
        "      containers:", "      nodeSelector:\n        nvidia.com/gpu.product: Tesla-T4\n      containers:"
    )
    assert selected != GPU_DEPLOYMENT
    (tmp_path / "other.yaml").write_text(selected)  # a CEL selector: the parser and device checks run
    return tmp_path


def _snapshot(d: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in d.rglob("*") if p.is_file() and ".git" not in p.parts}


def _restore(d: Path, snap: dict[Path, bytes]) -> None:
    for p in list(_snapshot(d)):
        if p not in snap:
            p.unlink()
    for p, data in snap.items():
        p.write_bytes(data)


def test_help_lists_every_command(tmp_path: Path) -> None:
    code, out, err = _run(["-m", "dra_migrate", "--help"], tmp_path, {"COLUMNS": "200"})
    assert code == 0, err
    text = out.decode()
    for name in app_module.COMMANDS:
        assert f" {name} " in text, name


@pytest.mark.parametrize("name", sorted(app_module.COMMANDS))
def test_every_command_runs_through_the_cli(tmp_path: Path, name: str) -> None:
    code, out, err = _run(["-m", "dra_migrate", name, "--help"], tmp_path, {"COLUMNS": "200"})
    assert code == 0, err
    assert f"dra_migrate {name} [OPTIONS]" in out.decode()


def test_unknown_command_is_reported_with_the_list(tmp_path: Path) -> None:
    code, _, err = _run(["-m", "dra_migrate", "nosuch"], tmp_path)
    assert code == 2
    assert b"No such command" in err


def test_invoked_command() -> None:
    assert app_module.invoked_command(["migrate", "--check", "a.yaml"], {}) == "migrate"
    assert app_module.invoked_command(["plan", "."], {}) == "plan"
    assert app_module.invoked_command(["--help"], {}) is None
    assert app_module.invoked_command(["--version"], {}) is None
    assert app_module.invoked_command([], {}) is None
    assert app_module.invoked_command(["migrat"], {}) is None  # click's error lists the commands
    assert app_module.invoked_command(["migrate"], {"_DRA_MIGRATE_COMPLETE": "bash_complete"}) is None


def test_register_is_idempotent_and_complete() -> None:
    import typer

    app_module._register("migrate")
    app_module._register()
    app_module._register()
    group = typer.main.get_command(app_module.app)
    assert set(group.commands) == set(app_module.COMMANDS)  # type: ignore[attr-defined]
    assert len(app_module.app.registered_commands) == len(app_module.COMMANDS)


def test_migrate_args_defaults_are_the_cli_defaults() -> None:
    import typer

    app_module._register("migrate")
    command = typer.main.get_command(app_module.app).commands["migrate"]  # type: ignore[attr-defined]
    defaults = MigrateArgs(paths=[])
    params = {p.name: p for p in command.params}
    assert set(params) == set(vars(defaults))
    for name, p in params.items():
        if name == "paths":
            continue
        want = getattr(defaults, name)
        assert (p.default if p.default is not None or not p.multiple else []) == want or (
            p.multiple and list(p.default or []) == want
        ), name


@pytest.mark.parametrize(
    "flags",
    [["--check"], ["--diff"], [], ["-q", "--check"], ["--quiet"], ["--no-progress", "--diff"],
     ["--jobs", "2", "--check"], ["--jobs=1"], ["-j", "2", "--diff"]],
)
def test_hook_command_line_runs_without_typer_and_answers_as_the_cli(repo: Path, flags: list[str]) -> None:
    args = ["migrate", *flags, "gpu.yaml", "other.yaml"]
    before = _snapshot(repo)
    full = _run(["-c", FULL, *args], repo)
    after_full = _snapshot(repo)
    _restore(repo, before)
    code, out, err = _run(["-c", PROBE, *args], repo)
    assert b"typer-imported=False" in err
    assert (code, out, err.replace(b"typer-imported=False\n", b"")) == full
    assert _snapshot(repo) == after_full
    assert full[0] == 1, full[2]
    assert (after_full != before) == ("--check" not in flags and "--diff" not in flags)


def test_other_command_lines_go_to_typer(repo: Path) -> None:
    for args in (
        ["migrate", "--check", "--format", "json", "gpu.yaml"],
        ["migrate", "--check", "-"],
        ["migrate", "--check"],
        ["migrate", "--help"],
        ["migrate", "--jobs", "0", "gpu.yaml"],  # the CLI explains what is wrong
        ["migrate", "--jobs", "x", "gpu.yaml"],
        ["migrate", "-j2", "gpu.yaml"],
    ):
        _, _, err = _run(["-c", PROBE, *args], repo)
        assert b"typer-imported=True" in err, args


def test_config_next_to_the_file_is_honoured_from_another_directory(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    (repo / ".dra-migrate.yaml").write_text("format: json\n")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    target = str(repo / "gpu.yaml")
    full = _run(["-c", FULL, "migrate", "--check", target], elsewhere)
    code, out, err = _run(["-c", PROBE, "migrate", "--check", target], elsewhere)
    assert b"typer-imported=True" in err  # a configuration may change any option: the full CLI decides
    assert out == full[1] and out.lstrip().startswith(b"{")
    assert code == full[0] == 1
