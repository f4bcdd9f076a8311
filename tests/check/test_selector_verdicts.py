"""Selector verdicts remembered across runs (dra_migrate.perf.verdict_memo, installed in cel.verdicts by
perf.caches): the same answers, without the CEL interpreter on a hit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dra_migrate.perf import verdict_memo

GOOD = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"
NONE = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA Z9000'"
BROKEN = "device.attributes['gpu.nvidia.com'].productName =="

PROBE = f"""
import json, sys
from dra_migrate.perf import caches
caches.install()  # what the entry point and the run driver do
from dra_migrate.check.prewrite import check_selector
out = [check_selector("gpu.nvidia.com", e) for e in {[GOOD, NONE, BROKEN]!r}]
print(json.dumps({{"verdicts": out, "celpy": "celpy" in sys.modules}}))
"""


def _run(cache: Path) -> dict[str, object]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    p = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    return json.loads(p.stdout)  # type: ignore[no-any-return]


def test_a_second_run_answers_from_the_memo_without_the_interpreter(tmp_path: Path) -> None:
    first = _run(tmp_path)
    assert first["celpy"] is True
    verdict_codes = [v[0] if v else None for v in first["verdicts"]]  # type: ignore[union-attr]
    assert verdict_codes == [None, "DRA801", "DRA312"]
    files = list((tmp_path / "dra-migrate").glob("selector-verdicts-*.json"))
    assert len(files) == 1 and files[0].stat().st_mode & 0o777 == 0o600
    second = _run(tmp_path)
    assert second == {"verdicts": first["verdicts"], "celpy": False}


def test_a_foreign_or_damaged_memo_is_not_believed(tmp_path: Path) -> None:
    first = _run(tmp_path)
    memo = next((tmp_path / "dra-migrate").glob("selector-verdicts-*.json"))
    # a verdict nobody computed: if it were read, the broken expression would pass
    lying = {"verdicts": {f"gpu.nvidia.com\0{e}": None for e in (GOOD, NONE, BROKEN)}}
    memo.write_text(json.dumps(lying))
    memo.chmod(0o666)  # writable by others: ignored
    assert _run(tmp_path)["verdicts"] == first["verdicts"]
    memo.chmod(0o600)
    memo.write_text(json.dumps(lying))  # the check that it is really read: a private file is believed
    assert _run(tmp_path)["verdicts"] == [None, None, None]
    memo.chmod(0o600)
    memo.write_text("{not json")
    assert _run(tmp_path)["verdicts"] == first["verdicts"]


def test_the_key_covers_every_file_the_package_ships(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "cel" / "__pycache__").mkdir(parents=True)
    (pkg / "cel" / "compiler.py").write_text("x = 1\n")
    (pkg / "data").mkdir()
    (pkg / "data" / "devices.yaml").write_text("a: 1\n")
    before = verdict_memo.memo_key(pkg)
    (pkg / "cel" / "__pycache__" / "compiler.cpython-311.pyc").write_bytes(b"\0")
    assert verdict_memo.memo_key(pkg) == before  # byte code is not a source
    for changed in (pkg / "cel" / "compiler.py", pkg / "data" / "devices.yaml"):
        changed.write_text("changed\n")
        assert verdict_memo.memo_key(pkg) != before
        before = verdict_memo.memo_key(pkg)
    (pkg / "check").mkdir()
    (pkg / "check" / "prewrite.py").write_text("y = 1\n")  # a module no list named: covered all the same
    assert verdict_memo.memo_key(pkg) != before


def test_without_the_memo_every_selector_is_evaluated() -> None:
    from dra_migrate.cel import verdicts

    verdicts.use(None)
    assert verdicts.lookup("gpu.nvidia.com", GOOD) is verdicts.MISSING
    verdicts.record("gpu.nvidia.com", GOOD, None)
    assert verdicts.lookup("gpu.nvidia.com", GOOD) is verdicts.MISSING
    assert verdicts.derived("x", lambda: ["a"]) == ["a"]


@pytest.mark.parametrize("dist", ["cel-python", "PyYAML", "ruamel.yaml", "jsonschema-rs", "no-such-dist-x"])
def test_installed_version_agrees_with_importlib_metadata(dist: str) -> None:
    from importlib import metadata

    from dra_migrate.perf.verdict_memo import installed_version

    try:
        expected = metadata.version(dist)
    except metadata.PackageNotFoundError:
        expected = "?"
    assert installed_version(dist) == expected
