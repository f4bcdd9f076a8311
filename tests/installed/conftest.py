"""The installed contract: what a user runs, tested as they run it.

Once per test session, the repository's working tree (tracked and new files, as a clean clone plus your edits)
is built into a wheel with `pip wheel --no-deps`, and the wheel is installed with no extras into a fresh venv.
Every test here runs that venv's `dra-migrate` console script from a scratch directory, never this checkout.
Run only these tests with `python -m pytest tests/installed` (the installed-contract check).

Needs PyPI for the build backend and the dependencies: without it the tests skip, with the reason; under CI
(`CI` set) they fail instead, so a green CI always means the wheel was tested.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

# pip's words for "the index could not be reached", as opposed to a broken build
OFFLINE_SIGNS = (
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "No matching distribution found",
    "Could not find a version that satisfies",
    "ConnectTimeoutError",
    "ReadTimeoutError",
)
SKIP_TREE = {".git", ".venv", "venv", "build", "dist", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
             ".hypothesis", "benchmarks/out"}


def unavailable(reason: str) -> None:
    """Skip a test that cannot run here; under CI, fail it: CI must exercise the installed copy."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: the installed-contract tests may not skip)", pytrace=False)
    pytest.skip(reason)


def clean_env(extra_path: Sequence[Path] = ()) -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH into this checkout, no dra-migrate settings, no git or
    pre-commit state of the calling process; the session's private XDG cache stays (tests/conftest.py)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DRA_MIGRATE_", "GIT_", "PRE_COMMIT", "PYTHON", "VIRTUAL_ENV", "PIP_REQUIRE"))}
    env["PATH"] = os.pathsep.join([*map(str, extra_path), env.get("PATH", os.defpath)])
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.invalid", GIT_CONFIG_NOSYSTEM="1", HOME=env.get("HOME", "/tmp"))
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    return env


def _source_files() -> list[str]:
    """What a clean clone plus the working tree's edits holds: tracked and untracked-but-not-ignored files."""
    git = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                         capture_output=True)
    if git.returncode == 0:
        return [f for f in git.stdout.decode().split("\0") if f and os.path.lexists(REPO / f)]
    out = []
    for root, dirs, files in os.walk(REPO):
        rel = Path(root).relative_to(REPO)
        dirs[:] = [d for d in dirs if d not in SKIP_TREE and (rel / d).as_posix() not in SKIP_TREE
                   and not d.endswith(".egg-info")]
        out += [(rel / f).as_posix() for f in files]
        out += [(rel / d).as_posix() for d in dirs if (Path(root) / d).is_symlink()]
    return out


def _copy_tree(dest: Path) -> None:
    for rel in _source_files():
        src, dst = REPO / rel, dest / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)


def _run_pip(args: list[str], what: str) -> None:
    proc = subprocess.run(args, capture_output=True, text=True, env=clean_env(), timeout=900)
    if proc.returncode != 0:
        output = proc.stdout + proc.stderr
        if any(sign in output for sign in OFFLINE_SIGNS):
            unavailable(f"{what}: PyPI is not reachable ({output.strip().splitlines()[-1]})")
        pytest.fail(f"{what} failed:\n{output[-4000:]}", pytrace=False)


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    @property
    def script(self) -> Path:
        return self.bin / "dra-migrate"

    def env(self) -> dict[str, str]:
        return clean_env([self.bin])

    def run(self, args: Sequence[str], cwd: Path, stdin: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """The console script, as a user's shell runs it."""
        return subprocess.run([str(self.script), *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                              env=env or self.env(), timeout=300)

    def wheel_files(self) -> list[str]:
        with zipfile.ZipFile(self.wheel) as z:
            return z.namelist()


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("installed")
    src, wheels, venv = base / "src", base / "wheels", base / "venv"
    _copy_tree(src)
    _run_pip([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(wheels), str(src)],
             "building the wheel")
    (wheel,) = wheels.glob("dra_migrate-*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    _run_pip([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
             "installing the wheel into a fresh venv")
    return Installed(wheel, venv)


@dataclass(frozen=True)
class HookRepo:
    """This repository as pre-commit sees it, plus one PRE_COMMIT_HOME for the whole session."""

    path: Path
    rev: str
    home: Path

    def env(self) -> dict[str, str]:
        return {**clean_env(), "PRE_COMMIT_HOME": str(self.home)}

    def _pre_commit(self, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "pre_commit", *args]
        return subprocess.run(cmd, cwd=cwd, env=self.env(), capture_output=True, text=True, timeout=900)

    def try_repo(self, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        """`pre-commit try-repo` (every hook, or the one named first): pre-commit pip-installs the repository
        into a new venv in a temporary store each time, so each call costs a whole install."""
        return self._pre_commit(cwd, "try-repo", str(self.path), *args)

    def run(self, cwd: Path, hook: str, *args: str) -> subprocess.CompletedProcess[str]:
        """`pre-commit run` with a user's config naming this repository at its commit; its hook environment
        is built once in PRE_COMMIT_HOME and reused by every call of the session."""
        config = self.home.parent / "pre-commit-config.yaml"  # outside the user's repo: never "unstaged"
        config.write_text(f"repos:\n  - repo: {self.path}\n    rev: {self.rev}\n"
                          "    hooks:\n      - id: dra-migrate\n      - id: dra-migrate-check\n")
        return self._pre_commit(cwd, "run", "--config", str(config), hook, *args)


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookRepo:
    """The working tree committed once into a private repository (try-repo would otherwise make a new shadow
    commit of local edits on every call, and build a new hook environment for each)."""
    if shutil.which("git") is None:
        unavailable("pre-commit needs git")
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        unavailable("pre-commit is not installed (pip install -e '.[dev]')")
    path = tmp_path_factory.mktemp("hook-repo")
    _copy_tree(path)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "working tree under test")
    rev = git(path, "rev-parse", "HEAD").strip()
    return HookRepo(path, rev, tmp_path_factory.mktemp("pre-commit") / "home")


@pytest.fixture
def scratch_repo(tmp_path: Path) -> Iterator[Path]:
    """An empty git repository, as a user's."""
    if shutil.which("git") is None:
        unavailable("needs git")
    work = tmp_path / "repo"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    yield work


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=clean_env(), check=True, capture_output=True,
                          text=True).stdout


# DRA902's messages ("internal error: FileNotFoundError: ...", "internal error in the scheduling lints: ..."),
# in any format; not its entry in a list of codes (`rules`, SARIF's rule table)
INTERNAL_ERROR = re.compile(r"internal error\b[^\n.]*:")


def assert_no_crash(proc: subprocess.CompletedProcess[str]) -> None:
    """Never a traceback, never an internal error (DRA902)."""
    output = proc.stdout + proc.stderr
    assert "Traceback (most recent call last)" not in output, output[-3000:]
    assert not INTERNAL_ERROR.search(output), output[-3000:]
