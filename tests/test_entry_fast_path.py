"""The pre-commit fast path (dra_migrate.entry) answers exactly as the full CLI would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dra_migrate import entry
from tests.conftest import REPO

PLAIN = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n"
FULL = "import sys; sys.argv[0] = 'dra-migrate'; from dra_migrate.cli.app import run; run()"


def _run(code: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRA_MIGRATE_")}
    env["PYTHONPATH"] = str(REPO)
    r = subprocess.run([sys.executable, *code], cwd=cwd, capture_output=True, env=env, timeout=120)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("flags", [["--check"], ["--diff"], ["-q", "--check"], [], ["--no-progress"]])
def test_fast_path_matches_full_cli(tmp_path: Path, flags: list[str]) -> None:
    (tmp_path / ".git").mkdir()  # bounds the config file search
    (tmp_path / "a.yaml").write_bytes(PLAIN)
    (tmp_path / "b.yml").write_bytes(PLAIN.replace(b"name: c", b"name: d"))
    args = ["migrate", *flags, "a.yaml", "b.yml"]
    fast = _run(["-m", "dra_migrate", *args], tmp_path)
    full = _run(["-c", FULL, *args], tmp_path)
    assert fast == full
    assert fast[0] == 0


def test_fast_path_taken_only_when_nothing_can_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    for k in [k for k in os.environ if k.startswith("DRA_MIGRATE_")]:
        monkeypatch.delenv(k)
    (tmp_path / "plain.yaml").write_bytes(PLAIN)
    assert entry._fast_path(["migrate", "--check", "plain.yaml"]) == 0
    (tmp_path / "kai.yaml").write_bytes(PLAIN + b"  gpu-fraction: '0.5'\n")  # KAI: reported by the full run
    assert entry._fast_path(["migrate", "--check", "kai.yaml"]) is None
    assert entry._fast_path(["migrate", "--check", "--format", "json", "plain.yaml"]) is None
    (tmp_path / ".dra-migrate.yaml").write_text("format: json\n")  # a config file may change the output
    assert entry._fast_path(["migrate", "--check", "plain.yaml"]) is None


def test_prefilter_covers_every_pre_pass() -> None:
    from dra_migrate import bridge, pipeline
    from dra_migrate.sharing import discover

    wanted = {p.encode() for p in pipeline.PREFILTER} | set(discover.PREFILTER) | {bridge.PREFILTER}
    assert wanted <= set(entry._PREFILTER)


def test_pyproject_config_table_not_a_mention_declines_the_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "plain.yaml").write_bytes(PLAIN)
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["dra-migrate"]\n')
    assert entry._fast_path(["migrate", "--check", "plain.yaml"]) == 0
    (tmp_path / "pyproject.toml").write_text('[tool.dra-migrate]\nformat = "json"\n')
    assert entry._fast_path(["migrate", "--check", "plain.yaml"]) is None
