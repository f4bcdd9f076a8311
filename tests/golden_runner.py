"""Run one golden case: copy its input to a temp dir, migrate there, collect every resulting file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from dra_migrate.cli.migrate_cmd import api_version_for
from dra_migrate.lower.context import Options
from dra_migrate.run import RunConfig, run_migration


def case_args(case: Path) -> dict[str, object]:
    f = case / "args.json"
    return json.loads(f.read_text()) if f.exists() else {}


def run_case(case: Path, workdir: Path, target: str | None = None) -> tuple[dict[str, bytes], str, int]:
    args = case_args(case)
    target = target or str(args.get("target_version", "1.34"))
    if case.resolve() != workdir.resolve():
        for f in case.iterdir():
            if f.name.startswith("input"):
                shutil.copy2(f, workdir / f.name)
    inputs = sorted(p.name for p in workdir.iterdir() if p.name.startswith("input"))
    old = os.getcwd()
    os.chdir(workdir)
    try:
        options = Options(
            target_version=target,
            api_version=api_version_for(target),
            move_cloud_labels=bool(args.get("move_cloud_labels", False)),
        )
        cfg = RunConfig(inputs, options=options)
        result = run_migration(cfg)
    finally:
        os.chdir(old)
    files = {p.name: p.read_bytes() for p in sorted(workdir.iterdir()) if p.is_file()}
    diags = "".join(d.render() + "\n" for d in result.all_diagnostics)
    return files, diags, result.exit_code


def expected(case: Path) -> tuple[dict[str, bytes], str, int]:
    exp = case / "expected"
    files = {p.name: p.read_bytes() for p in sorted(exp.iterdir()) if p.is_file()}
    meta = json.loads((case / "expected.json").read_text())
    return files, (case / "diagnostics.txt").read_text(), int(meta["exit_code"])


def write_expected(case: Path, files: dict[str, bytes], diags: str, code: int) -> None:
    exp = case / "expected"
    if exp.exists():
        shutil.rmtree(exp)
    exp.mkdir()
    for name, data in files.items():
        (exp / name).write_bytes(data)
    (case / "diagnostics.txt").write_text(diags)
    (case / "expected.json").write_text(json.dumps({"exit_code": code}) + "\n")
