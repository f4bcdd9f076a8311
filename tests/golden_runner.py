"""Run one golden case: copy its input to a temp dir, migrate there, collect every resulting file.

A case's input is `input*` files, or an `input/` directory holding a tree (kustomize bases and overlays): the
run is then given `input`, and files are named by their path relative to the work directory
(`input/overlay/kustomization.yaml`), in `expected/` too."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from dra_migrate.config import Options, SharingOptions
from dra_migrate.lower.sharing.scope import ScopeMapping
from dra_migrate.ruleset.features import Target, parse_feature_gates
from dra_migrate.run.driver import RunConfig, run_migration
from dra_migrate.source.filescan import DEFAULT_MAX_BYTES


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
                if f.is_dir():
                    shutil.copytree(f, workdir / f.name, symlinks=True)
                else:
                    shutil.copy2(f, workdir / f.name)
    inputs = sorted(p.name for p in workdir.iterdir() if p.name.startswith("input"))
    # args.json "layout": {input file: path in the tree}, for cases about directories (the inputs and the
    # expected files stay flat in the case; the run sees the tree, given by its top-level entries)
    layout = {str(k): str(v) for k, v in dict(args.get("layout") or {}).items()}  # type: ignore[call-overload]
    for name, rel in layout.items():
        if (workdir / name).exists():
            (workdir / rel).parent.mkdir(parents=True, exist_ok=True)
            (workdir / name).replace(workdir / rel)
    paths = sorted({Path(rel).parts[0] for rel in layout.values()} | {n for n in inputs if n not in layout})
    old = os.getcwd()
    os.chdir(workdir)
    try:
        sharing = SharingOptions(strategy=str(args.get("sharing_strategy", "shared-claim")),
                                 within_pod=bool(args.get("share_within_pod", False)))
        # args.json "rules": rule-pack directories relative to the case (a user rule pack test)
        rule_dirs = [args_dir / str(d) for d in args.get("rules", [])]  # type: ignore[attr-defined]
        gates = parse_feature_gates(str(args.get("feature_gates", "")))
        options = Options(
            target_version=target,
            api_version=Target(target).api_version,
            feature_gates=gates,
            strategy=str(args.get("strategy", "rewrite")),
            bridge_emit_gpu_class=bool(args.get("bridge_emit_gpu_class", False)),
            sharing=sharing,
            strict=bool(args.get("strict", False)),
            move_cloud_labels=bool(args.get("move_cloud_labels", False)),
        )
        scopes = [ScopeMapping(str(workdir.resolve()), str(e["config"]), tuple(e["paths"]), ".dra-migrate.yaml")
                  for e in args.get("sharing_scopes", [])]  # type: ignore[attr-defined]
        # args.json "paths": migrate only these inputs, reading the others as the repository around them
        # (a pre-commit hook's staged files); "repository_root": false for a run that finds no root (DRA120)
        named = [str(p) for p in args.get("paths", paths)]  # type: ignore[attr-defined]
        claims_out = args.get("claims_out")
        cfg = RunConfig(
            named,
            # args.json "max_file_size": --max-file-size in bytes (a file over it is DRA105)
            max_file_size=int(str(args.get("max_file_size", DEFAULT_MAX_BYTES))),
            options=options,
            claims_out=Path(str(claims_out)) if claims_out else None,
            sharing_configs=[Path(case.resolve() / str(f)) for f in args.get("sharing_configs", [])],  # type: ignore[attr-defined]
            rule_dirs=rule_dirs,
            sharing_scopes=scopes,
            repo_context="paths" in args,
            context_root=workdir.resolve() if args.get("repository_root", True) else None,
        )
        result = run_migration(cfg)
    finally:
        os.chdir(old)
        for name, rel in layout.items():
            if (workdir / rel).exists():
                (workdir / rel).replace(workdir / name)
    files = tree_files(workdir)
    diags = "".join(d.render() + "\n" for d in result.all_diagnostics)
    # a rule pack's files (args.json "rules") by their path in the case, wherever the checkout is
    diags = diags.replace(f"{args_dir}/", "")
    # a path the run resolved (a symbolic link's target) by its place in the work directory
    diags = diags.replace(f"{workdir.resolve()}/", "")
    return files, diags, result.exit_code


def tree_files(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` by its relative path (a top-level args.json is the case's options)."""
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and not p.is_symlink() and p.relative_to(directory).as_posix() != "args.json"}


def input_files(case: Path) -> list[Path]:
    """The case's input files: `input*` files, and every file of an `input/` tree."""
    out: list[Path] = []
    for f in sorted(case.glob("input*")):
        out.extend(sorted(p for p in f.rglob("*") if p.is_file()) if f.is_dir() else [f])
    return out


def expected(case: Path) -> tuple[dict[str, bytes], str, int]:
    exp = case / "expected"
    files = tree_files(exp)
    meta = json.loads((case / "expected.json").read_text())
    return files, (case / "diagnostics.txt").read_text(), int(meta["exit_code"])


def write_expected(case: Path, files: dict[str, bytes], diags: str, code: int) -> None:
    exp = case / "expected"
    if exp.exists():
        shutil.rmtree(exp)
    exp.mkdir()
    for name, data in files.items():
        (exp / name).parent.mkdir(parents=True, exist_ok=True)
        (exp / name).write_bytes(data)
    (case / "diagnostics.txt").write_text(diags)
    (case / "expected.json").write_text(json.dumps({"exit_code": code}) + "\n")
