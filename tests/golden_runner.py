"""Run one golden case: copy its input to a temp dir, migrate there, collect every resulting file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from dra_migrate.features import Target, parse_feature_gates
from dra_migrate.lower.context import Options
from dra_migrate.run import RunConfig, run_migration


def case_args(case: Path) -> dict[str, object]:
    f = case / "args.json"
    return json.loads(f.read_text()) if f.exists() else {}


def run_case(
    case: Path, workdir: Path, target: str | None = None, args_from: Path | None = None
) -> tuple[dict[str, bytes], str, int]:
    args_dir = (args_from or case).resolve()
    args = case_args(args_dir)
    target = target or str(args.get("target_version", "1.34"))
    if case.resolve() != workdir.resolve():
        for f in case.iterdir():
            if f.name.startswith("input"):
                shutil.copy2(f, workdir / f.name)
    inputs = sorted(p.name for p in workdir.iterdir() if p.name.startswith("input"))
    old = os.getcwd()
    os.chdir(workdir)
    try:
        extra = {k: args[k] for k in ("sharing_strategy", "share_within_pod") if k in args}
        # args.json "rules": rule-pack directories relative to the case (a user rule pack test)
        rule_dirs = [args_dir / str(d) for d in args.get("rules", [])]  # type: ignore[attr-defined]
        gates = parse_feature_gates(str(args.get("feature_gates", "")))
        options = Options(
            target_version=target,
            api_version=Target(target).api_version,
            feature_gates=gates,
            strategy=str(args.get("strategy", "rewrite")),
            bridge_emit_gpu_class=bool(args.get("bridge_emit_gpu_class", False)),
            extra=extra,
            move_cloud_labels=bool(args.get("move_cloud_labels", False)),
        )
        cfg = RunConfig(
            inputs,
            options=options,
            sharing_configs=[Path(case.resolve() / str(f)) for f in args.get("sharing_configs", [])],  # type: ignore[attr-defined]
            rule_dirs=rule_dirs,
        )
        result = run_migration(cfg)
    finally:
        os.chdir(old)
    files = {p.name: p.read_bytes() for p in sorted(workdir.iterdir()) if p.is_file() and p.name != "args.json"}
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
