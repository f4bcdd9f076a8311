"""No write without the self-check; atomic, faithful writes; links, read-only files, interrupts."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dra_migrate.config import Options
from dra_migrate.emit import patch
from dra_migrate.emit.edits import TextEdit
from dra_migrate.lower.context import RunContext
from dra_migrate.pipeline import process_source
from dra_migrate.run.driver import RunConfig, run_migration

REPO = Path(__file__).resolve().parents[2]

POD = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata:
      name: {name}
    spec:
      containers:
      - name: c
        image: x
        replicas: 3
        resources:
          limits:
            nvidia.com/gpu: 1
    """)


def _pod(tmp_path: Path, name: str = "p", mode: int | None = None) -> Path:
    f = tmp_path / f"{name}.yaml"
    f.write_text(POD.format(name=name))
    if mode is not None:
        f.chmod(mode)
    return f


def _codes(result: object) -> list[str]:
    return [d.code for d in result.all_diagnostics]  # type: ignore[attr-defined]


# -- self-check guards every write -------------------------------------------------------------------
def test_corrupting_patcher_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_apply = patch.Patcher.apply

    def corrupt(self: patch.Patcher, ops: list) -> list[TextEdit]:  # type: ignore[type-arg]
        edits = real_apply(self, ops)
        start = self.text.index("    replicas: 3\n")  # drop an unrelated line
        return [*edits, TextEdit(start, start + len("    replicas: 3\n"), "")]

    monkeypatch.setattr(patch.Patcher, "apply", corrupt)
    f = _pod(tmp_path)
    before = f.read_bytes()
    result = run_migration(RunConfig([str(f)]))
    assert result.exit_code == 2
    assert f.read_bytes() == before
    [d] = [d for d in result.all_diagnostics if d.code == "DRA901"]
    assert "root[0]['spec']['containers'][0]['replicas']" in d.message


def test_self_check_rejects_output_that_does_not_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    real_apply = patch.Patcher.apply

    def corrupt(self: patch.Patcher, ops: list) -> list[TextEdit]:  # type: ignore[type-arg]
        return [*real_apply(self, ops), TextEdit(0, 0, "{[")]

    monkeypatch.setattr(patch.Patcher, "apply", corrupt)
    raw = POD.format(name="p").encode()
    fr = process_source("p.yaml", raw, RunContext(Options()))
    assert fr.failed and fr.output is None
    assert [d.code for d in fr.diagnostics if d.severity.value == "error"] == ["DRA901"]


def test_claims_out_is_self_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dra_migrate.emit import claims_file

    f = _pod(tmp_path)
    out = tmp_path / "claims.yaml"
    out.write_text("# existing\nkind: ConfigMap\n")
    monkeypatch.setattr(claims_file, "_yaml_docs", lambda target, objs: b"kind: Other\n")
    result = run_migration(RunConfig([str(f)], claims_out=out))
    assert "DRA901" in _codes(result)
    assert out.read_text() == "# existing\nkind: ConfigMap\n"


def test_unreadable_existing_claims_file_is_never_truncated(tmp_path: Path) -> None:
    f = _pod(tmp_path)
    out = tmp_path / "claims.json"
    out.write_text("{not json")
    result = run_migration(RunConfig([str(f)], claims_out=out))
    assert "DRA101" in _codes(result) and result.exit_code == 2
    assert out.read_text() == "{not json"


# -- faithful writes ---------------------------------------------------------------------------------
def test_mode_is_kept(tmp_path: Path) -> None:
    f = _pod(tmp_path, mode=0o640)
    run_migration(RunConfig([str(f)]))
    assert b"resourceClaims" in f.read_bytes()
    assert stat.S_IMODE(f.stat().st_mode) == 0o640


def test_new_claims_file_gets_umask_mode_not_0600(tmp_path: Path) -> None:
    f = _pod(tmp_path)
    out = tmp_path / "claims.yaml"
    old = os.umask(0o022)
    try:
        run_migration(RunConfig([str(f)], claims_out=out))
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_file_without_write_bits_is_refused_even_for_root(tmp_path: Path) -> None:
    # root ignores permissions, so the refusal rests on the mode bits themselves (see DRA111)
    f = _pod(tmp_path, mode=0o444)
    before = f.read_bytes()
    result = run_migration(RunConfig([str(f)]))
    assert "DRA111" in _codes(result) and result.exit_code == 2
    assert f.read_bytes() == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into a read-only directory")
def test_read_only_directory(tmp_path: Path) -> None:
    d = tmp_path / "ro"
    d.mkdir()
    f = _pod(d)
    before = f.read_bytes()
    d.chmod(0o555)
    try:
        result = run_migration(RunConfig([str(d)]))
    finally:
        d.chmod(0o755)
    assert "DRA111" in _codes(result)
    assert f.read_bytes() == before


def test_symlink_out_of_tree_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = _pod(outside, "victim")
    before = target.read_bytes()
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link.yaml").symlink_to(target)
    for arg in (tree, tree / "link.yaml"):
        result = run_migration(RunConfig([str(arg)]))
        assert "DRA110" in _codes(result)
        assert target.read_bytes() == before
        assert (tree / "link.yaml").is_symlink()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_reported_not_read(tmp_path: Path) -> None:
    """Reading a named pipe would wait for a writer for good: walked or named, and whichever pre-pass reads
    the tree (the DeviceClass scan of the extended-resource strategy included), it is reported and skipped."""
    target = _pod(tmp_path, "real")
    os.mkfifo(tmp_path / "pipe.yaml")
    script = textwrap.dedent(f"""
        from dra_migrate.config import Options
        from dra_migrate.run.driver import RunConfig, run_migration
        for args, strategy in (([{str(tmp_path)!r}], "rewrite"), ([{str(tmp_path / "pipe.yaml")!r}], "rewrite"),
                               ([{str(tmp_path)!r}], "extended-resource")):
            result = run_migration(RunConfig(args, mode="check", options=Options(strategy=strategy)))
            print(strategy, result.scanned, [(d.location.file, d.message) for d in result.diagnostics
                                             if d.code == "DRA106"])
    """)
    # in a child with a deadline: the failure this guards against is a hang
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    pipe = str(tmp_path / "pipe.yaml")
    expected = repr([(pipe, "not a regular file (a named pipe, socket or device); skipped")])
    assert p.stdout.splitlines()[:2] == [f"rewrite 1 {expected}", f"rewrite 0 {expected}"]
    assert p.stdout.splitlines()[2].startswith("extended-resource")
    assert "kind: ResourceClaimTemplate" not in target.read_text()  # check mode: nothing written


def test_symlink_inside_tree_is_kept_and_target_migrated_once(tmp_path: Path) -> None:
    target = _pod(tmp_path, "real")
    (tmp_path / "alias.yaml").symlink_to("real.yaml")
    result = run_migration(RunConfig([str(tmp_path)]))
    assert "DRA115" in _codes(result)
    assert (tmp_path / "alias.yaml").is_symlink()
    assert os.readlink(tmp_path / "alias.yaml") == "real.yaml"
    assert target.read_text().count("kind: ResourceClaimTemplate") == 1


def test_explicit_symlink_argument_writes_through(tmp_path: Path) -> None:
    target = _pod(tmp_path, "real")
    link = tmp_path / "alias.yaml"
    link.symlink_to("real.yaml")
    result = run_migration(RunConfig([str(link)]))
    assert result.exit_code == 1
    assert link.is_symlink() and b"ResourceClaimTemplate" in target.read_bytes()


# -- interrupts --------------------------------------------------------------------------------------
def test_sigint_leaves_every_file_old_or_new(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    originals = {}
    for i in range(300):
        f = tree / f"w{i:03}.yaml"
        # bulky enough that the run takes a while: the signal must land mid-run
        f.write_text(POD.format(name=f"w{i}") + "".join(f"# padding {j}\n" for j in range(300)))
        originals[f.name] = f.read_bytes()
    reference = tmp_path / "reference"
    reference.mkdir()
    for name, data in originals.items():
        (reference / name).write_bytes(data)
    run_migration(RunConfig([str(reference)]))
    migrated = {p.name: p.read_bytes() for p in reference.iterdir()}
    assert all(migrated[n] != originals[n] for n in originals)

    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "dra_migrate", "migrate", str(tree)], env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    # wait until the run has started writing, then interrupt it
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (tree / "w000.yaml").read_bytes() == originals["w000.yaml"]:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    done = sum(1 for n in originals if (tree / n).read_bytes() == migrated[n])
    for n in originals:
        assert (tree / n).read_bytes() in (originals[n], migrated[n]), n
    assert not [p for p in tree.iterdir() if p.name.endswith(".tmp")]
    if done < len(originals):  # the signal arrived before the end (the usual case)
        assert proc.returncode == 2
        assert b"DRA116" in err
