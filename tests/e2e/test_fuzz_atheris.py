"""A short bounded pass of the coverage-guided fuzzer (tests/fuzz/fuzz_migrate.py) over the seed corpus.
Skipped when atheris (the optional `fuzz` extra) is not installed."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris not installed (extra: fuzz)")
def test_bounded_fuzz_pass(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(FUZZ.parents[1]))
    proc = subprocess.run(
        [sys.executable, str(FUZZ / "fuzz_migrate.py"), "-runs=2000", "-seed=1", "-max_len=4096",
         f"-dict={FUZZ / 'yaml.dict'}", f"-artifact_prefix={tmp_path}/", str(tmp_path), str(FUZZ / "seeds")],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert not list(tmp_path.glob("crash-*"))
