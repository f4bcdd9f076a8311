"""The rule set's derived prefilter (dra_migrate.ruleset.prefilter_derive) and its generated default.

A file the prefilter skips is never compiled, so a string the rules imply but the prefilter lacks is a silent
miss (issue #21: a --rules pack whose gpuFields key names no nvidia.com resource was ignored)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dra_migrate import pipeline
from dra_migrate.ruleset import prefilters
from dra_migrate.ruleset.kinds import load_kind_rules
from dra_migrate.ruleset.prefilter_derive import DEFAULT_MODULE, derive, derive_for, main, pattern_literals, render
from dra_migrate.run.driver import _use_prefilter
from dra_migrate.source import filescan
from tests.conftest import GOLDEN, REPO

PACK = GOLDEN / "crd-user-rule-pack-gpu-field"


@pytest.fixture(autouse=True)
def _default_prefilter() -> Iterator[None]:
    yield
    prefilters.use(())


def test_the_generated_default_is_what_the_generator_writes() -> None:
    assert DEFAULT_MODULE.read_text(encoding="utf-8") == render(derive(load_kind_rules(())))
    assert main(["--check"]) == 0


def test_the_default_covers_everything_the_bundled_rules_imply() -> None:
    derived = derive(load_kind_rules(()))
    assert {"nvidia.com/mig-", "volcano.sh/vgpu-memory", "gpu:", "entrypointNumGpus:"} <= set(derived)
    assert [d for d in derived if not any(s in d for s in prefilters.DEFAULT)] == []
    assert [d for d in derived if not any(s in d.encode() for s in prefilters.DEFAULT_KEEP)] == []
    assert not prefilters.extended()


def test_pattern_literals_expand_optional_parts_and_stop_at_open_ones() -> None:
    assert pattern_literals(r"volcano\.sh/v?gpu-(memory|cores)") == [
        "volcano.sh/gpu-memory", "volcano.sh/gpu-cores", "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores"]
    assert pattern_literals(r"nvidia\.com/mig-(?P<p>[0-9]+g)") == ["nvidia.com/mig-"]
    assert pattern_literals(r"nvidia\.com/gpu") == ["nvidia.com/gpu"]
    assert pattern_literals(r"[ab]x") == ["ax", "bx"]


def test_a_user_pack_adds_its_kinds_and_gpu_fields() -> None:
    raw = (PACK / "input.yaml").read_bytes()
    assert not pipeline.might_need_migration(raw)
    assert filescan._keep_re().search(raw) is None
    strings = derive_for([PACK / "rules"])
    assert "Trainer" in strings and "gpus:" in strings
    _use_prefilter([PACK / "rules"])
    assert prefilters.extended()
    assert pipeline.might_need_migration(raw)
    assert filescan._keep_re().search(raw) is not None
    _use_prefilter([])  # the next run without --rules scans for the defaults again
    assert not prefilters.extended() and not pipeline.might_need_migration(raw)


def test_an_invalid_pack_adds_nothing_and_is_reported(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("kinds:\n  - group: acme.io\n    kind: Trainer\n    podSpecs: 3\n")
    _use_prefilter([tmp_path])
    assert not prefilters.extended()


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRA_MIGRATE_")}
    env["PYTHONPATH"] = str(REPO)
    code = "import sys; sys.argv[0] = 'dra-migrate'; from dra_migrate.entry import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("jobs", [[], ["--jobs", "1"]])  # the default starts a scout, which scans for defaults
def test_the_console_entry_honours_a_pack_without_nvidia_strings(tmp_path: Path, jobs: list[str]) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "input.yaml").write_bytes((PACK / "input.yaml").read_bytes())
    rules = str((PACK / "rules").resolve())
    with_pack = _cli(["migrate", "--check", *jobs, "--rules", rules, "."], tmp_path)
    assert "input.yaml:8:3: warning DRA403 [Trainer/ml/bert]: spec.gpus (gpus: 4)" in with_pack.stderr, with_pack
    without = _cli(["migrate", "--check", *jobs, "."], tmp_path)
    assert "DRA403" not in without.stderr and without.returncode == 0


def test_the_fast_path_imports_no_yaml(tmp_path: Path) -> None:
    (tmp_path / "plain.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRA_MIGRATE_")}
    env["PYTHONPATH"] = str(REPO)
    code = ("import sys; from dra_migrate import entry; "
            "rc = entry._fast_path(entry._resolved(['migrate', '--check', 'plain.yaml'])); "
            "print(rc, sorted(m for m in sys.modules if m == 'yaml' or m.startswith('dra_migrate.ruleset')))")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env,
                       timeout=60, stdin=subprocess.DEVNULL)
    # (ruleset._paths: the diagnostic model imports the code registry, which knows where its data file is; it
    # reads the file only when a code is looked up)
    assert r.stdout.split("\n")[0] == ("0 ['dra_migrate.ruleset', 'dra_migrate.ruleset._paths', "
                                       "'dra_migrate.ruleset.prefilter_default', 'dra_migrate.ruleset.prefilters', "
                                       "'dra_migrate.ruleset.targets']"), r
