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


HOOK_OPTIONS = [
    ["--check"], ["--diff"], ["-q", "--check"], [], ["--no-progress"],
    ["--check", "--target-version", "1.33"], ["--check", "--strict", "--select", "DRA7", "--ignore=DRA705"],
    ["--fail-on", "warning", "--sharing", "exclusive", "-j", "2", "--exclude", "vendor/*", "--max-file-size", "99"],
    ["--claims-out", "claims.yaml", "--no-gitignore", "--move-cloud-labels", "--share-within-pod", "-v"],
    ["--strategy", "extended-resource", "--bridge-emit-gpu-class", "--no-validate", "--no-dra-quota"],
]


def _fast(argv: list[str]) -> int | None:
    r = entry._resolved(argv)
    assert not isinstance(r, int) and r is not None, argv
    return entry._fast_path(r)


@pytest.mark.parametrize("flags", HOOK_OPTIONS)
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
    assert _fast(["migrate", "--check", "plain.yaml"]) == 0
    assert _fast(["migrate", "--check", "--target-version", "1.33", "--strict", "plain.yaml"]) == 0
    (tmp_path / "kai.yaml").write_bytes(PLAIN + b"  gpu-fraction: '0.5'\n")  # KAI: reported by the full run
    assert _fast(["migrate", "--check", "kai.yaml"]) is None
    # what can change the answer for a file without GPU keys: other kinds, other files, another document
    for options in (["--format", "json"], ["--rules", "r"], ["--sharing-config", "x.yaml"], ["--output-dir", "o"],
                    ["--feature-gates", "DRAPrioritizedList=true"],
                    ["--report", "json=r.json"]):
        assert _fast(["migrate", "--check", *options, "plain.yaml"]) is None, options
    assert _fast(["migrate", "--format", "text", "plain.yaml"]) == 0  # the default, said out loud
    (tmp_path / ".dra-migrate.yaml").write_text("target-version: '1.33'\nignore: [DRA705]\n")
    assert _fast(["migrate", "--check", "plain.yaml"]) == 0  # a config file is read, not a reason to stop
    (tmp_path / ".dra-migrate.yaml").write_text("format: json\n")  # a config file may change the output
    assert _fast(["migrate", "--check", "plain.yaml"]) is None
    monkeypatch.setenv("DRA_MIGRATE_FORMAT", "text")  # the environment beats the file
    assert _fast(["migrate", "--check", "plain.yaml"]) == 0


def test_prefilter_covers_every_pre_pass() -> None:
    from dra_migrate import pipeline
    from dra_migrate.run import bridge
    from dra_migrate.run import sharing_configs as discover

    wanted = {p.encode() for p in pipeline.PREFILTER} | set(discover.PREFILTER) | {bridge.PREFILTER}
    # (a string that contains one the fast path scans for is found by that one)
    assert [w for w in wanted if not any(s in w for s in entry._PREFILTER)] == []


def test_pyproject_config_table_not_a_mention_declines_the_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "plain.yaml").write_bytes(PLAIN)
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["dra-migrate"]\n')
    assert _fast(["migrate", "--check", "plain.yaml"]) == 0
    (tmp_path / "pyproject.toml").write_text('[tool.dra-migrate]\nformat = "json"\n')
    assert _fast(["migrate", "--check", "plain.yaml"]) is None
    (tmp_path / "pyproject.toml").write_text('[tool.dra-migrate]\ntarget_version = "1.33"\n')
    assert _fast(["migrate", "--check", "plain.yaml"]) == 0


@pytest.mark.parametrize(
    ("status", "code", "err"), [("3", 3, ""), ("None", 0, ""), ("'boom'", 1, "boom\n")]
)
def test_exit_now_is_sys_exit_without_the_teardown(tmp_path: Path, status: str, code: int, err: str) -> None:
    script = (
        "import atexit, sys, threading, time\n"
        "from dra_migrate.entry import exit_now\n"
        "atexit.register(lambda: print('handler ran'))\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()\n"
        "sys.stdout.write('buffered ')\n"
        f"exit_now({status})\n"
    )
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert (res.returncode, res.stdout, res.stderr) == (code, "buffered thread done\nhandler ran\n", err)


def test_exit_now_ends_like_sys_exit_when_stdout_is_gone(tmp_path: Path) -> None:
    def end(leave: str) -> tuple[int, bytes]:
        script = f"import os, sys\nfrom dra_migrate.entry import exit_now\nprint('x')\nos.close(1)\n{leave}\n"
        res = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=tmp_path)
        return res.returncode, res.stdout

    assert end("exit_now(4)") == end("sys.exit(4)")
