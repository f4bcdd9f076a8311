"""Whole-repository runs on mutated copies of the golden trees (kustomize builds, apply-unit names, sharing
configs): whatever a file says, the run ends with diagnostics, never a traceback or a failed self-check, and a
second run in place changes nothing. Mutations are what real repositories hold and the goldens do not: dates and
base-60 numbers (an unquoted date in a patch once stopped the run with a traceback), nulls, duplicated lines,
entries that point nowhere, odd patches. `TREE_MUTATIONS=N` runs N cases instead of the default."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from dra_migrate.config import Options
from dra_migrate.run.driver import RunConfig, run_migration
from tests.conftest import GOLDEN

TREES = sorted(c for c in GOLDEN.iterdir()
               if c.name.startswith(("kustomize", "names", "sharing")) and (c / "input").is_dir())
SNIPPETS = [
    "  released: 2024-05-01\n", "  window: 10:30\n", "metadata: null\n", "- \n", "patches: []\n",
    "resources:\n- missing.yaml\n", "namePrefix: x-\n", "namespace: 2024-01-01\n",
    "replicas:\n- name: web\n  count: 3\n", "---\n", "kind: List\n", "items: []\n", "  nvidia.com/gpu: 2\n",
    "a: &x [1]\nb: *x\n", "  annotations: {when: 2024-1-2}\n", "patchesStrategicMerge:\n- |\n  kind: Deployment\n",
    "patches:\n- target: {kind: Deployment}\n  patch: '[]'\n", "components:\n- ../nope\n", "spec: []\n",
]
CASES = int(os.environ.get("TREE_MUTATIONS", "120"))
BROKEN = {"DRA901", "DRA902", "DRA903"}


def _mutate(tree: Path, rnd: random.Random) -> None:
    files = sorted(p for p in tree.rglob("*") if p.is_file() and not p.is_symlink()
                   and p.suffix in (".yaml", ".yml", ".json"))
    for _ in range(rnd.randint(1, 3)):
        f = rnd.choice(files)
        lines = f.read_text(errors="replace").splitlines(keepends=True)
        op = rnd.randrange(3)
        if op == 0 or not lines:
            lines.insert(rnd.randint(0, len(lines)), rnd.choice(SNIPPETS))
        elif op == 1:
            del lines[rnd.randrange(len(lines))]
        else:
            at = rnd.randrange(len(lines))
            lines.insert(at, lines[at])
        f.write_text("".join(lines))


@pytest.mark.parametrize("seed", range(CASES))
def test_a_mutated_tree_gets_diagnostics_and_a_second_run_changes_nothing(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rnd = random.Random(seed)
    case = TREES[rnd.randrange(len(TREES))]
    tree = tmp_path / "input"
    shutil.copytree(case / "input", tree, symlinks=True)
    _mutate(tree, rnd)
    (tmp_path / ".git").mkdir()  # the tree is a repository of its own
    monkeypatch.chdir(tmp_path)
    first = run_migration(RunConfig(["input"], mode="write", options=Options(), jobs=1))
    assert not {d.code for d in first.all_diagnostics} & BROKEN, (case.name, first.all_diagnostics)
    after = {p: p.read_bytes() for p in sorted(tree.rglob("*")) if p.is_file()}
    second = run_migration(RunConfig(["input"], mode="write", options=Options(), jobs=1))
    assert not {d.code for d in second.all_diagnostics} & BROKEN, (case.name, second.all_diagnostics)
    assert {p: p.read_bytes() for p in sorted(tree.rglob("*")) if p.is_file()} == after, case.name
