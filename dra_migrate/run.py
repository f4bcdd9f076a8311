"""A whole migration run over many files: discovery, processing in order, outputs, exit code."""

from __future__ import annotations

import difflib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dra_migrate.diagnostics import Diagnostic, Location, Severity, make
from dra_migrate.discover import discover
from dra_migrate.lower.context import Options, RunContext
from dra_migrate.pipeline import FileResult, might_need_migration, process_source
from dra_migrate.source.reader import DEFAULT_MAX_BYTES, is_helm_template_path

EXIT_CLEAN, EXIT_CHANGED, EXIT_ERROR = 0, 1, 2


@dataclass(slots=True)
class RunConfig:
    paths: Sequence[str]
    mode: str = "write"  # write | check | diff
    output_dir: Path | None = None
    claims_out: Path | None = None
    options: Options = field(default_factory=Options)
    excludes: Sequence[str] = ()
    max_file_size: int = DEFAULT_MAX_BYTES
    rule_dirs: Sequence[Path] = ()


@dataclass(slots=True)
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)  # run-level (discovery, writes)
    new_files: dict[str, bytes] = field(default_factory=dict)  # extra files written (claims, JSON siblings)
    diffs: list[str] = field(default_factory=list)
    scanned: int = 0

    @property
    def all_diagnostics(self) -> list[Diagnostic]:
        out = list(self.diagnostics)
        for f in self.files:
            out.extend(f.diagnostics)
        return out

    @property
    def exit_code(self) -> int:
        if any(f.failed for f in self.files) or any(d.severity is Severity.ERROR for d in self.all_diagnostics):
            return EXIT_ERROR
        if any(f.changed for f in self.files) or self.new_files:
            return EXIT_CHANGED
        return EXIT_CLEAN


def _rules(cfg: RunConfig) -> Any:
    from dra_migrate.kinds import load_kind_rules

    return load_kind_rules(tuple(cfg.rule_dirs))


def run_migration(cfg: RunConfig) -> RunResult:
    result = RunResult()
    ctx = RunContext(cfg.options)
    rules = None
    claims: list[tuple[str, dict[str, Any]]] = []
    if list(cfg.paths) == ["-"]:
        raw = sys.stdin.buffer.read()
        rules = _rules(cfg)
        fr = process_source("<stdin>", raw, ctx, rules=rules, claims_elsewhere=cfg.claims_out is not None)
        result.files.append(fr)
        result.scanned = 1
        claims.extend(("<stdin>", d) for d in fr.new_documents)
        _finish(cfg, result, claims)
        return result
    for found in discover(cfg.paths, cfg.excludes, result.diagnostics):
        result.scanned += 1
        try:
            size = found.path.stat().st_size
            if size > cfg.max_file_size:
                raw = found.path.read_bytes()[: 1 << 16]
                if might_need_migration(raw):
                    result.files.append(FileResult(found.display, b"", None, [make(
                        "DRA105", f"{size} bytes is over the {cfg.max_file_size}-byte limit (--max-file-size)",
                        Location(found.display))], failed=True))
                continue
            raw = found.path.read_bytes()
        except OSError as exc:
            result.diagnostics.append(make("DRA106", f"cannot read: {exc.strerror}", Location(found.display)))
            continue
        if not might_need_migration(raw):
            if cfg.output_dir is not None:
                _write_output(cfg, result, found.path, found.root, raw)
            continue
        if rules is None:
            rules = _rules(cfg)
        fr = process_source(
            found.display, raw, ctx, rules=rules, claims_elsewhere=cfg.claims_out is not None,
            helm_template=is_helm_template_path(found.path),
        )
        result.files.append(fr)
        if fr.new_documents:
            claims.extend((found.display, d) for d in fr.new_documents)
        if cfg.mode == "diff" and fr.changed:
            assert fr.output is not None
            result.diffs.append(unified_diff(found.display, fr.original, fr.output))
        if cfg.mode == "write":
            out = fr.output if fr.changed else raw
            if cfg.output_dir is not None:
                _write_output(cfg, result, found.path, found.root, out)
            elif fr.changed:
                _write_in_place(result, found.path, found.display, out)
    _finish(cfg, result, claims)
    return result


def _finish(cfg: RunConfig, result: RunResult, claims: list[tuple[str, dict[str, Any]]]) -> None:
    _lint(cfg, result)
    if any(f.lowered for f in result.files) and not _dra_on_by_default(cfg.options.target_version):
        result.diagnostics.append(make(
            "DRA604", f"Kubernetes {cfg.options.target_version} has DynamicResourceAllocation off by default: enable "
            f"the feature gate and the {cfg.options.api_version} API (--runtime-config) before applying",
            Location("<run>")))
    if not claims:
        return
    from dra_migrate.emit.claims_file import claims_files

    for target, data in claims_files(cfg.claims_out, claims).items():
        display = str(target)
        existing = target.read_bytes() if target.exists() else b""
        if data == existing:
            continue
        result.new_files[display] = data
        if cfg.mode == "diff":
            result.diffs.append(unified_diff(display, existing, data))
        elif cfg.mode == "write":
            dest = target if cfg.output_dir is None else cfg.output_dir / target.name
            _write_in_place(result, dest, display, data)


def _lint(cfg: RunConfig, result: RunResult) -> None:
    """Cross-file scheduling lints (DRA8xx) over every object the run saw, as it is after the run."""
    from dra_migrate.lint import lint_objects

    objects = [o for f in result.files for o in f.objects]
    if not objects:
        return
    try:
        result.diagnostics.extend(lint_objects(objects, _rules(cfg), cfg.options.target_version))
    except Exception as exc:  # noqa: BLE001 - a lint bug must not cost the user the migration
        result.diagnostics.append(make("DRA902", f"internal error in the scheduling lints: {exc}", Location("<run>")))


def _write_output(cfg: RunConfig, result: RunResult, path: Path, root: Path, data: bytes) -> None:
    assert cfg.output_dir is not None
    try:
        rel = path.relative_to(root) if root != path.parent or path.is_relative_to(root) else Path(path.name)
    except ValueError:
        rel = Path(path.name)
    _write_in_place(result, cfg.output_dir / rel, str(cfg.output_dir / rel), data)


def _write_in_place(result: RunResult, path: Path, display: str, data: bytes) -> None:
    from dra_migrate.emit.writer import write_atomic

    try:
        write_atomic(path, data)
    except PermissionError:
        result.diagnostics.append(make("DRA111", "permission denied; the file is unchanged", Location(display)))
    except OSError as exc:
        result.diagnostics.append(make("DRA106", f"cannot write: {exc.strerror}", Location(display)))


def unified_diff(name: str, before: bytes, after: bytes) -> str:
    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, "a/" + name.lstrip("/"), "b/" + name.lstrip("/"))
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def report_json(cfg: RunConfig, result: RunResult) -> str:
    from dra_migrate import __version__

    diags = result.all_diagnostics
    doc = {
        "schemaVersion": 1,
        "tool": {"name": "dra-migrate", "version": __version__},
        "target": {"kubernetes": cfg.options.target_version, "apiVersion": cfg.options.api_version},
        "mode": cfg.mode,
        "summary": {
            "filesScanned": result.scanned,
            "filesParsed": len(result.files),
            "filesChanged": sum(1 for f in result.files if f.changed),
            "filesFailed": sum(1 for f in result.files if f.failed),
            "newFiles": sorted(result.new_files),
            "workloadsMigrated": sum(1 for f in result.files for t in f.lowered if not t.skip and t.requests),
            "errors": sum(1 for d in diags if d.severity is Severity.ERROR),
            "warnings": sum(1 for d in diags if d.severity is Severity.WARNING),
            "exitCode": result.exit_code,
        },
        "files": [
            {"path": f.path, "changed": f.changed, "failed": f.failed} for f in result.files
        ],
        "diagnostics": [d.to_json() for d in diags],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _dra_on_by_default(target: str) -> bool:
    try:
        from dra_migrate.features import Target

        return Target(target).dra_default_on
    except (ImportError, ValueError):
        return int(target.split(".")[1]) >= 34
