"""Hostile and odd input (tests/hostile/): every file gets exactly its expected diagnostics, never a crash,
and a file with an error is byte-identical after a run in write mode. Files that do change must parse, and a
second run must change nothing.

expected.tsv: file, code, line (one row per warning/error; `-` and 0 for a file that gets none).
Regenerate with UPDATE_HOSTILE=1 and review the diff.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from dra_migrate.diagnostics.model import Severity
from dra_migrate.run.driver import RunConfig, run_migration

HOSTILE = Path(__file__).resolve().parents[1] / "hostile"
EXPECTED = HOSTILE / "expected.tsv"
CASES = sorted(p.name for p in HOSTILE.iterdir() if p.suffix in (".yaml", ".json"))
SMALL_LIMIT = 1024  # too-large.yaml is run with this --max-file-size


def _run(path: Path) -> tuple[list[tuple[str, str, int]], int]:
    limit = SMALL_LIMIT if path.name.startswith("too-large") else 8 << 20
    result = run_migration(RunConfig([str(path)], max_file_size=limit))
    rows = [
        (path.name, d.code, d.location.line)
        for d in result.all_diagnostics
        if d.severity is not Severity.INFO
    ]
    return rows or [(path.name, "-", 0)], result.exit_code


def _expected() -> dict[str, list[tuple[str, str, int]]]:
    out: dict[str, list[tuple[str, str, int]]] = {}
    for line in EXPECTED.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            f, code, ln = line.split("\t")
            out.setdefault(f, []).append((f, code, int(ln)))
    return out


def test_expected_lists_every_case() -> None:
    if os.environ.get("UPDATE_HOSTILE"):
        pytest.skip("regenerating")
    assert sorted(_expected()) == CASES


@pytest.mark.parametrize("name", CASES)
def test_hostile_case(name: str, tmp_path: Path) -> None:
    target = tmp_path / name
    shutil.copyfile(HOSTILE / name, target)
    original = target.read_bytes()
    rows, code = _run(target)
    if os.environ.get("UPDATE_HOSTILE"):
        exp = _expected()
        exp[name] = rows
        EXPECTED.write_text("# file\tcode\tline\n" + "".join(
            f"{f}\t{c}\t{n}\n" for k in sorted(exp) for f, c, n in exp[k]))
    assert rows == _expected()[name]
    after = target.read_bytes()
    assert "DRA902" not in {c for _f, c, _n in rows}, "a crash is never an acceptable answer"
    if code == 2:
        assert after == original, "a file with an error must be left byte-identical"
        return
    if after != original:
        # events only: the corpus holds tags no safe loader constructs, and the tool must keep them verbatim
        events = list(yaml.parse(after.decode("utf-8-sig"), Loader=yaml.CSafeLoader))
        assert any(isinstance(e, yaml.DocumentStartEvent) for e in events)
        again, code2 = _run(target)
        assert target.read_bytes() == after and code2 == 0, "the second run must be a no-op"


def test_python_tags_are_never_constructed(tmp_path: Path) -> None:
    marker = Path("/tmp/dra-migrate-pwned")
    marker.unlink(missing_ok=True)
    target = tmp_path / "python-tag.yaml"
    shutil.copyfile(HOSTILE / "python-tag.yaml", target)
    run_migration(RunConfig([str(target)]))
    assert not marker.exists()
    assert b"!!python/object/apply:os.system" in target.read_bytes()  # kept verbatim, never evaluated
