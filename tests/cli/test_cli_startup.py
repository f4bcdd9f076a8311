"""The start-up short cuts keep the CLI's behaviour: lazy command registration (dra_migrate.cli.app) and the
hook command line run without typer (dra_migrate.entry._without_typer)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dra_migrate.cli import app as app_module
from dra_migrate.cli import options
from dra_migrate.cli.settings import Settings
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


def test_every_command_takes_its_declared_options_and_the_model_has_them_all() -> None:
    import dataclasses

    import typer

    from dra_migrate.source import filescan

    app_module._register()
    group = typer.main.get_command(app_module.app)
    for name in ("migrate", "pr", "plan", "explain", "simulate"):
        command = group.commands[name]  # type: ignore[attr-defined]
        declared = {o.attr: o for o in options.for_command(name) if not o.file_only}  # (no flag: file only)
        params = {p.name: p for p in command.params if p.param_type_name == "option"}
        assert set(params) == set(declared), name
        for attr, p in params.items():
            assert p.default is None and list(p.opts) == [f for f in declared[attr].flags], (name, attr)
    fields = {f.name for f in dataclasses.fields(Settings)} - {"command", "paths", "config_file", "sources"}
    assert fields == {o.attr for o in options.OPTIONS}
    assert options.BY_KEY["max-file-size"].default == filescan.DEFAULT_MAX_BYTES  # the scout's own limit
    pr_options = {o.key for o in options.for_command("pr")}
    shaping = {o.key for o in options.for_command("migrate")} - {
        "check", "diff", "output-dir", "format", "no-progress", "verbose", "quiet"}
    assert shaping <= pr_options  # pr takes every option that shapes the migration


@pytest.mark.parametrize(
    "flags",
    [["--check"], ["--diff"], [], ["-q", "--check"], ["--quiet"], ["--no-progress", "--diff"],
     ["--jobs", "2", "--check"], ["--jobs=1"], ["-j", "2", "--diff"], ["-j2", "--check"]],
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


@pytest.mark.parametrize(
    "args",
    [
        ["migrate", "--check", "--format", "json", "gpu.yaml"],
        ["migrate", "--check", "--target-version", "1.33", "--strict", "--select", "DRA2", "gpu.yaml"],
        ["migrate", "--diff", "--fail-on=warning", "-v", "gpu.yaml", "other.yaml"],
        ["migrate", "--jobs", "0", "gpu.yaml"],  # the same error, worded once
        ["migrate", "--jobs", "x", "gpu.yaml"],
        ["migrate", "--target-version", "1.99", "gpu.yaml"],
        ["migrate", "--select", "DRA999", "gpu.yaml"],
        ["migrate", "--format", "xml", "gpu.yaml"],
        ["migrate", "-", "gpu.yaml"],
    ],
)
def test_any_migrate_command_line_runs_without_typer_and_answers_as_the_cli(repo: Path, args: list[str]) -> None:
    before = _snapshot(repo)
    full = _run(["-c", FULL, *args], repo)
    _restore(repo, before)
    code, out, err = _run(["-c", PROBE, *args], repo)
    assert b"typer-imported=False" in err, args
    assert (code, out, err.replace(b"typer-imported=False\n", b"")) == full


def test_what_only_click_words_goes_to_typer(repo: Path) -> None:
    for args in (
        ["migrate", "--check"],  # no path
        ["migrate", "--help"],
        ["migrate", "-vq", "gpu.yaml"],
        ["migrate", "--no-such-option", "gpu.yaml"],
        ["migrate", "--target-version"],
    ):
        code, _, err = _run(["-c", PROBE, *args], repo)
        assert b"typer-imported=True" in err, args


def test_config_next_to_the_file_is_honoured_from_another_directory(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    (repo / ".dra-migrate.yaml").write_text("format: json\n")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    target = str(repo / "gpu.yaml")
    full = _run(["-c", FULL, "migrate", "--check", target], elsewhere)
    code, out, err = _run(["-c", PROBE, "migrate", "--check", target], elsewhere)
    assert b"typer-imported=False" in err
    assert out == full[1] and out.lstrip().startswith(b"{")
    assert code == full[0] == 1
