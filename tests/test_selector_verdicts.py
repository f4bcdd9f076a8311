"""Selector verdicts remembered across runs: the same answers, without the CEL interpreter on a hit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dra_migrate.cel import verdicts

GOOD = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"
NONE = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA Z9000'"
BROKEN = "device.attributes['gpu.nvidia.com'].productName =="

PROBE = f"""
import json, sys
from dra_migrate.prewrite import check_selector
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


def test_the_key_covers_the_cel_sources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "cel").mkdir(parents=True)
    (pkg / "cel" / "compiler.py").write_text("x = 1\n")
    monkeypatch.setattr(verdicts, "_PACKAGE", pkg)
    monkeypatch.setattr(verdicts, "_INPUTS", ("cel",))
    before = verdicts._key()
    (pkg / "cel" / "compiler.py").write_text("x = 2\n")
    assert verdicts._key() != before


@pytest.mark.parametrize("dist", ["cel-python", "PyYAML", "ruamel.yaml", "jsonschema-rs", "no-such-dist-x"])
def test_installed_version_agrees_with_importlib_metadata(dist: str) -> None:
    from importlib import metadata

    from dra_migrate.cel.verdicts import installed_version

    try:
        expected = metadata.version(dist)
    except metadata.PackageNotFoundError:
        expected = "?"
    assert installed_version(dist) == expected
