"""Golden cases: input → expected files, expected diagnostics, expected exit code.

Regenerate after an intended change with UPDATE_GOLDEN=1 and review every diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from dra_migrate.source.discover import KUSTOMIZATION_NAMES
from tests.conftest import GOLDEN
from tests.golden_runner import expected, input_files, run_case, write_expected

CASES = sorted(p for p in GOLDEN.iterdir() if p.is_dir() and any(f.name.startswith("input") for f in p.iterdir()))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden(case: Path, tmp_path: Path) -> None:
    files, diags, code = run_case(case, tmp_path)
    if os.environ.get("UPDATE_GOLDEN"):
        write_expected(case, files, diags, code)
    exp_files, exp_diags, exp_code = expected(case)
    assert files == exp_files
    assert diags == exp_diags
    assert code == exp_code


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_second_run_is_noop(case: Path, tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    files, _diags, code = run_case(case, first)
    if code != 1:
        pytest.skip("first run changed nothing")
    second = tmp_path / "second"
    second.mkdir()
    for name, data in files.items():
        if name.startswith("input"):
            (second / name).parent.mkdir(parents=True, exist_ok=True)
            (second / name).write_bytes(data)
    if (case / "args.json").exists():  # the second run uses the same options as the first
        (second / "args.json").write_bytes((case / "args.json").read_bytes())
    for name, data in files.items():  # sibling claim files take part in the second run as they are
        if not name.startswith("input"):
            (second / name).parent.mkdir(parents=True, exist_ok=True)
            (second / name).write_bytes(data)
    again, _d, code2 = run_case(second, second, args_from=case)
    assert again == files
    assert code2 == 0


def run_case_dir(workdir: Path) -> tuple[dict[str, bytes], str, int]:
    # run_case copies from a case dir; here the work dir already holds the files
    return run_case(workdir, workdir)


def test_every_case_has_distinct_input() -> None:
    seen: set[bytes] = set()
    for case in CASES:
        data = b"".join(f.read_bytes() for f in input_files(case))
        assert data not in seen, case
        seen.add(data)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_unchanged_documents_are_byte_identical(case: Path, tmp_path: Path) -> None:
    """Every input document without a GPU key appears verbatim in the output."""
    files, _d, _c = run_case(case, tmp_path)
    # a kustomization is edited on purpose (its build must stay right: DRA703)
    for f in (p for p in input_files(case) if p.suffix == ".yaml" and p.name not in KUSTOMIZATION_NAMES):
        text = f.read_bytes().decode("utf-8-sig", "replace")
        out = files[f.relative_to(case).as_posix()].decode("utf-8-sig", "replace")
        for chunk in text.split("\n---"):
            if "nvidia.com" not in chunk and chunk.strip() and "kind: List" not in chunk:
                try:
                    yaml.safe_load(chunk)
                except yaml.YAMLError:
                    continue
                assert chunk in out, f"{case.name}: untouched document changed"
