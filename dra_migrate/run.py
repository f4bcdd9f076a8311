"""A whole migration run over many files: discovery, processing in order, outputs, exit code."""

from __future__ import annotations

import contextlib
import difflib
import itertools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dra_migrate import gcpause, parallel
from dra_migrate.diagnostics import Diagnostic, Location, Severity, make
from dra_migrate.discover import Found, discover
from dra_migrate.emit.background import BackgroundWrites, write_problem
from dra_migrate.filescan import DEFAULT_MAX_BYTES, Scan, scan
from dra_migrate.kinds import KindRule, KindRuleSet, NonWorkloadRule
from dra_migrate.lower.context import Options, RunContext
from dra_migrate.parallel import Processor as _Processor
from dra_migrate.pipeline import FileResult, might_need_migration, process_source
from dra_migrate.readpass import ReadOutcome, holds_repo_setting, worth_starting_early
from dra_migrate.readpass import outcome as read_outcome
from dra_migrate.source.reader import is_helm_template_path

if TYPE_CHECKING:
    from dra_migrate.emit.writer import TreeWriter
    from dra_migrate.scout import Scout

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
    sharing_configs: Sequence[Path] = ()  # device plugin configs outside the migrated paths (--sharing-config)
    gitignore: bool = True  # prune what .gitignore ignores from directory walks
    progress: Callable[[int, int, str], None] | None = None  # (index, total, file) before each file
    jobs: int | None = None  # worker processes; None: one per CPU when there is enough to translate
    keep_ir: bool = True  # keep each file's workload IR in the result (plan, pr); migrate needs only counts


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


def load_rules(rule_dirs: Sequence[Path]) -> tuple[KindRuleSet | None, Diagnostic | None]:
    """The kind rules, or a DRA402 diagnostic (file:line) when a rule file is invalid."""
    from dra_migrate.frontend.effects import EFFECTS
    from dra_migrate.kinds import RuleError, load_kind_rules
    from dra_migrate.lower.passes import PASS_SIDE_EFFECTS

    try:
        rules = load_kind_rules(tuple(rule_dirs))
    except RuleError as exc:
        return None, make(exc.code, f"{exc.message}; nothing is migrated until the rules load",
                          Location(exc.file or "<rules>", exc.line))
    known = set(EFFECTS) | PASS_SIDE_EFFECTS
    all_rules: list[KindRule | NonWorkloadRule] = [*rules.all(), *rules.non_workloads()]
    for rule in all_rules:
        unknown = [e for e in rule.side_effects if e not in known]
        if unknown:
            file, _, line = rule.source.rpartition(":")
            known_list = ", ".join(sorted(known))
            return None, make("DRA402", f"unknown side effect {unknown[0]!r} (known: {known_list}); "
                              "nothing is migrated until the rules load", Location(file, int(line)))
    return rules, None


class _Interrupt:
    """SIGINT/SIGTERM only raise a flag; the run checks it between files, so the atomic write in progress
    always completes and no file is ever left half-processed."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def __call__(self, signum: int, _frame: object) -> None:
        self.signum = signum


@contextlib.contextmanager
def _interruptible() -> Iterator[_Interrupt]:
    flag = _Interrupt()
    if threading.current_thread() is not threading.main_thread():  # handlers can only be set there
        yield flag
        return
    previous = {s: signal.signal(s, flag) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def run_migration(cfg: RunConfig) -> RunResult:
    try:
        with _interruptible() as interrupt:
            return _run(cfg, interrupt)
    finally:
        gcpause.resume()  # whatever the run translated: what follows (reports) runs with the collector on


def _run(cfg: RunConfig, interrupt: _Interrupt) -> RunResult:
    result = RunResult()
    if cfg.options.strategy == "extended-resource":
        from dra_migrate.bridge import run_bridge

        _scan_repo_classes(cfg)
        run_bridge(cfg, result)
        result.diagnostics.extend(gate_override_problems(cfg.options))
        return result
    ctx = RunContext(cfg.options)
    rules, problem = load_rules(cfg.rule_dirs)
    if rules is None:
        assert problem is not None
        result.diagnostics.append(problem)
        return result
    claims: list[tuple[str, dict[str, Any]]] = []
    if list(cfg.paths) == ["-"]:
        raw = sys.stdin.buffer.read()
        _repo_prepass(cfg, result, [("<stdin>", raw)])
        fr = process_source("<stdin>", raw, ctx, rules=rules, claims_elsewhere=cfg.claims_out is not None)
        result.files.append(fr)
        result.scanned = 1
        claims.extend(("<stdin>", d) for d in fr.new_documents)
        _finish(cfg, result, claims, _lint(cfg, result))
        return result
    from dra_migrate.integrations.layout import Layout

    layout = Layout()
    # One read of every file. Files that cannot hold a GPU request nor a repo-wide setting are settled at once
    # (copied to --output-dir); the others are kept, and the repo-wide pre-pass (sharing configs, DeviceClasses)
    # runs over them before any workload is translated, since those settings usually sit in other files.
    # With worker processes, translation starts during the read, speculatively: most repositories hold no
    # repo-wide setting, and then the pre-pass finds nothing and the early results are exactly the ones a
    # later start would give. Should a setting turn up, the early results are dropped and translation starts
    # over once the pre-pass is done; a file the layout reports instead (a kustomize patch) is skipped.
    # Early results wait in this process until the read is over: past parallel.EARLY_FILES files into the walk,
    # files are no longer started early, so memory stays bounded on a huge repository (the workers have the
    # files started early to translate meanwhile; the others go to them once the read is over).
    writes = BackgroundWrites()
    pool = _Processor(cfg, rules, ctx, before_fork=writes.drain)
    speculate = pool.jobs > 1 and not cfg.sharing_configs
    scout = _scout_for(cfg, pool)
    entries: list[tuple[str, Any]] = []
    try:
        reads, total = _reads(cfg, result, pool, scout)
        for n, (found, scanned) in enumerate(reads):
            display = found if isinstance(found, str) else found.display
            if cfg.progress is not None:
                cfg.progress(n, total, display)
            if _interrupted(result, interrupt, display):
                break
            result.scanned += 1
            if isinstance(found, str):
                continue  # the scout says nothing in this file concerns the run (and there is no --output-dir)
            entry = _read_entry(cfg, writes, layout, found, read_outcome(display, cfg.max_file_size, scanned))
            if entry[0] == "kept":
                raw = entry[1][1]
                if speculate and holds_repo_setting(raw):
                    speculate = False
                if speculate and n < parallel.EARLY_FILES and worth_starting_early(os.fspath(found), raw):
                    ticket = pool.submit(found.display, raw, is_helm_template_path(os.fspath(found)), len(entries))
                    entry = ("submitted", (found, raw, ticket))
            if entry[0] != "diagnostics" or entry[1]:  # most files: nothing to keep
                entries.append(entry)
        kept = [(v[0], v[1]) for k, v in entries if k in ("kept", "submitted")]
        _repo_prepass(cfg, result, [(found.display, raw) for found, raw in kept])
        layout.index([found for found, raw in kept if might_need_migration(raw)])
        del kept
        if not speculate and any(k == "submitted" for k, _v in entries):
            # the pre-pass may have changed the settings the workers were started with: start over
            pool.reset()
            entries = [("kept", v[:2]) if k == "submitted" else (k, v) for k, v in entries]
        # What the run reports is gathered in file order, so the outcome does not depend on --jobs.
        entries = [_route(cfg, writes, layout, pool, v[0], v[1], i) if k == "kept"
                   else _recheck(cfg, writes, layout, pool, *v) if k == "submitted" else (k, v)
                   for i, (k, v) in enumerate(entries)]
        pool.flush()
        for i, (kind, value) in enumerate(entries):
            entries[i] = ("done", None)  # let the file's bytes go once settled
            if kind == "diagnostics":
                result.diagnostics.extend(value)
            elif kind == "file":
                result.files.append(value)
            elif kind == "process":
                found, raw, helm, ticket = value
                if _interrupted(result, interrupt, found.display):
                    break
                fr = pool.result(ticket, found.display, raw, helm)
                _settle(cfg, result, writes, layout, found, raw, fr, claims)
        # The lints read only the results: they run while the last rewrites reach the disk.
        lints = _lint(cfg, result)
    finally:
        if scout is not None:
            scout.close()
        pool.close()
        result.diagnostics.extend(writes.close())  # every write done before anything is reported
    _finish(cfg, result, claims, lints)
    layout.finish(cfg, result)
    return result


def _scout_for(cfg: RunConfig, pool: _Processor) -> Scout | None:
    """The scout the command line started for this run's walk (dra_migrate.scout), if the run can use it:
    one that sends every file (--output-dir copies them all), or the total first (a progress bar), or runs
    with one process only, would not help."""
    from dra_migrate import scout as scouting

    scout = scouting.take(cfg.paths, cfg.excludes, cfg.gitignore, cfg.max_file_size)
    if scout is not None and (cfg.output_dir is not None or cfg.progress is not None or pool.jobs <= 1):
        scout.close()
        return None
    return scout


HEAD_BYTES = 16 << 20  # what the run holds of a scout's first files before it decides how large it is


def _reads(cfg: RunConfig, result: RunResult, pool: _Processor, scout: Scout | None
           ) -> tuple[Iterator[tuple[Found | str, Scan]], int]:
    """The run's walk and read, (file, scan) in walk order, and the number of files when a progress bar
    wants it first. From the scout if there is one: a str is then a file that concerns the run in no way.
    The first LARGE_WALK files (or HEAD_BYTES of kept files) are taken at once to tell the pool how large
    the run is."""
    if scout is not None:
        reads = scout.reads(result.diagnostics)
        head: list[tuple[Found | str, Scan]] = []
        held = 0
        for pair in reads:
            head.append(pair)
            held += len(pair[1][1]) if isinstance(pair[1][1], bytes) else 0
            if len(head) >= parallel.LARGE_WALK or held >= HEAD_BYTES:
                break
        pool.large = len(head) >= parallel.LARGE_WALK or held >= HEAD_BYTES
        return itertools.chain(head, reads), 0
    walk: Iterator[Found] = discover(cfg.paths, cfg.excludes, result.diagnostics, gitignore=cfg.gitignore)
    total = 0
    if cfg.progress is not None:  # a progress bar wants the total; other runs stream the walk
        found_all = list(walk)
        total, walk = len(found_all), iter(found_all)
        del found_all
    first = list(itertools.islice(walk, parallel.LARGE_WALK))
    pool.large = len(first) >= parallel.LARGE_WALK
    return ((f, scan(os.fspath(f), cfg.max_file_size)) for f in itertools.chain(first, walk)), total


def _read_entry(cfg: RunConfig, writes: BackgroundWrites, layout: Any, found: Found, outcome: ReadOutcome
                ) -> tuple[str, Any]:
    """What the run does with a file it read: ("kept", (found, bytes)) for the pre-pass and translation,
    ("file", result) for a failed one, ("diagnostics", [...]) for the others (copied to --output-dir)."""
    kind, value = outcome
    if kind == "error":
        return "diagnostics", [value]
    if kind == "too-big":
        return ("file", value) if value is not None else ("diagnostics", [])
    layout.note(found, value)
    if kind == "kept":
        return "kept", (found, value)
    if cfg.output_dir is not None:
        _copy_out(cfg, writes, found, value)
    return "diagnostics", []


def _route(
    cfg: RunConfig, writes: BackgroundWrites, layout: Any, pool: _Processor, found: Found, raw: bytes, position: int
) -> tuple[str, Any]:
    """A kept file: reported by the layout (kustomize patches, chart templates), or sent to translation."""
    if not might_need_migration(raw):  # kept for the pre-pass only
        if cfg.output_dir is not None:
            _copy_out(cfg, writes, found, raw)
        return "diagnostics", []
    intercepted = layout.intercept(found, raw)
    if intercepted is not None:  # kustomize patches, chart templates: reported, never rewritten
        if cfg.output_dir is not None:
            _copy_out(cfg, writes, found, raw)
        return "diagnostics", intercepted
    helm = is_helm_template_path(os.fspath(found))
    return "process", (found, raw, helm, pool.submit(found.display, raw, helm, position))


def _recheck(
    cfg: RunConfig, writes: BackgroundWrites, layout: Any, pool: _Processor, found: Found, raw: bytes, ticket: int
) -> tuple[str, Any]:
    """A file started early: still translated, or reported by the layout (its result dropped)."""
    intercepted = layout.intercept(found, raw)
    if intercepted is None:
        return "process", (found, raw, is_helm_template_path(os.fspath(found)), ticket)
    pool.skip(ticket)
    if cfg.output_dir is not None:
        _copy_out(cfg, writes, found, raw)
    return "diagnostics", intercepted


def _settle(
    cfg: RunConfig, result: RunResult, writes: BackgroundWrites, layout: Any, found: Found, raw: bytes,
    fr: FileResult, claims: list[tuple[str, dict[str, Any]]],
) -> None:
    fr.original = raw
    layout.refine(found, fr)
    result.files.append(fr)
    if fr.new_documents:
        claims.extend((found.display, d) for d in fr.new_documents)
    if cfg.mode == "diff" and fr.changed:
        assert fr.output is not None
        result.diffs.append(unified_diff(found.display, fr.original, fr.output))
    if cfg.mode == "write":
        out = fr.output if fr.output is not None and fr.changed else raw
        if cfg.output_dir is not None:
            _copy_out(cfg, writes, found, out)
        elif fr.changed:
            writes.replace(found.display, found.path, out)
    fr.release()
    if not cfg.keep_ir:
        fr.drop_ir()


def _repo_prepass(cfg: RunConfig, result: RunResult, files: list[tuple[str, bytes]]) -> None:
    """Repo-wide settings, from the files the run read: device plugin sharing configs (plus --sharing-config
    files kept elsewhere) and DeviceClasses that already map an extended resource to DRA."""
    from dra_migrate.bridge import classes_from
    from dra_migrate.sharing.discover import inventory_from, obsolete_config_diagnostics, read_files

    elsewhere = read_files([str(p) for p in cfg.sharing_configs], cfg.excludes)
    inv = inventory_from(itertools.chain(files, elsewhere))
    cfg.options.extra["sharing"] = inv
    result.diagnostics.extend(obsolete_config_diagnostics(inv))
    # classes set by the caller win over the repository's
    cfg.options.extended_resource_classes = {**classes_from(raw for _d, raw in files),
                                             **cfg.options.extended_resource_classes}


def _scan_repo_classes(cfg: RunConfig) -> None:
    """Pre-pass: DeviceClasses of the repository that already map an extended resource to DRA."""
    if list(cfg.paths) == ["-"] or cfg.options.extended_resource_classes:
        return
    from dra_migrate.bridge import scan_paths

    cfg.options.extended_resource_classes = scan_paths(cfg.paths, cfg.excludes)


def _finish(
    cfg: RunConfig, result: RunResult, claims: list[tuple[str, dict[str, Any]]], lints: list[Diagnostic]
) -> None:
    """lints: what _lint found over the run's results."""
    result.diagnostics.extend(lints)
    if any(f.any_lowered for f in result.files) and not _dra_on_by_default(cfg.options.target_version):
        result.diagnostics.append(make(
            "DRA604", f"Kubernetes {cfg.options.target_version} has DynamicResourceAllocation off by default: enable "
            f"the feature gate and the {cfg.options.api_version} API (--runtime-config) before applying",
            Location("<run>")))
    result.diagnostics.extend(gate_override_problems(cfg.options))
    if not claims:
        return
    from dra_migrate.emit.claims_file import ClaimsFileError, claims_files, verify_claims_file

    try:
        planned = claims_files(cfg.claims_out, claims)
    except ClaimsFileError as exc:
        message = exc.message + "; no claim template was written"
        result.diagnostics.append(make(exc.code, message, Location(exc.path)))
        return
    for target, data in planned.items():
        display = str(target)
        existing = target.read_bytes() if target.exists() else b""
        if data == existing:
            continue
        problem = verify_claims_file(target, existing, data, [d for _src, d in claims])
        if problem:
            result.diagnostics.append(make("DRA901", f"self-check failed: {problem}; the file is untouched",
                                           Location(display)))
            continue
        result.new_files[display] = data
        if cfg.mode == "diff":
            result.diffs.append(unified_diff(display, existing, data))
        elif cfg.mode == "write":
            dest = target if cfg.output_dir is None else cfg.output_dir / target.name
            _write_in_place(result, dest, display, data)


def _interrupted(result: RunResult, interrupt: _Interrupt, before: str) -> bool:
    """After SIGINT/SIGTERM: stop between files (a write in progress always finishes), say so once."""
    if interrupt.signum is None:
        return False
    if not any(d.code == "DRA116" for d in result.diagnostics):
        name = signal.Signals(interrupt.signum).name
        result.diagnostics.append(make("DRA116", f"interrupted by {name}: stopped before {before}; "
                                       "the files not reached are untouched", Location(before)))
    return True


def _lint(cfg: RunConfig, result: RunResult) -> list[Diagnostic]:
    """Cross-file scheduling lints (DRA8xx) over every object the run saw, as it is after the run."""
    from dra_migrate.lint import lint_objects

    objects = [o for f in result.files for o in f.objects]
    if not objects:
        return []
    try:
        rules, _problem = load_rules(cfg.rule_dirs)  # cached; a problem was reported when the run started
        return lint_objects(objects, rules, cfg.options.target_version) if rules is not None else []
    except Exception as exc:  # noqa: BLE001 - a lint bug must not cost the user the migration
        return [make("DRA902", f"internal error in the scheduling lints: {exc}", Location("<run>"))]


def _copy_out(cfg: RunConfig, writes: BackgroundWrites, found: Found, data: bytes) -> None:
    path, root = found.path, found.root
    writes.submit(found.display, lambda: _output_job(cfg, path, root, data))


def _output_job(cfg: RunConfig, path: Path, root: Path, data: bytes) -> list[Diagnostic]:
    assert cfg.output_dir is not None
    try:
        rel = path.relative_to(root) if root != path.parent or path.is_relative_to(root) else Path(path.name)
    except ValueError:
        rel = Path(path.name)
    dest = cfg.output_dir / rel
    try:
        _tree_writer(cfg.output_dir).write(dest, data)
    except PermissionError:
        return [make("DRA111", "permission denied; the file is unchanged", Location(str(dest)))]
    except OSError as exc:
        return [make("DRA106", f"cannot write: {exc.strerror}", Location(str(dest)))]
    return []


_TREE_WRITERS: dict[Path, TreeWriter] = {}


def _tree_writer(output_dir: Path) -> TreeWriter:
    """One writer per output directory and process (it remembers the directories it made)."""
    writer = _TREE_WRITERS.get(output_dir)
    if writer is None:
        from dra_migrate.emit.writer import TreeWriter

        if len(_TREE_WRITERS) > 16:
            _TREE_WRITERS.clear()
        writer = _TREE_WRITERS[output_dir] = TreeWriter()
    return writer


def _write_in_place(result: RunResult, path: Path, display: str, data: bytes) -> None:
    result.diagnostics.extend(_in_place_job(path, display, data))


def _in_place_job(path: Path, display: str, data: bytes) -> list[Diagnostic]:
    from dra_migrate.emit.writer import write_atomic

    try:
        write_atomic(path, data)
    except OSError as exc:
        return [write_problem(display, exc)]
    return []


def unified_diff(name: str, before: bytes, after: bytes) -> str:
    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, "a/" + name.lstrip("/"), "b/" + name.lstrip("/"))
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def report_json(cfg: RunConfig, result: RunResult) -> str:
    """Kept for callers of the old location; the writer lives in dra_migrate.reports.json."""
    from dra_migrate.reports import json as json_report

    return json_report.render(cfg, result)


def gate_override_problems(options: Options) -> list[Diagnostic]:
    """DRA608 for --feature-gates settings the target release would refuse (once per run)."""
    from dra_migrate.features import Target

    problems = Target(options.target_version).override_problems(options.feature_gates)
    return [make("DRA608", f"--feature-gates: {p}; the setting is ignored", Location("<run>")) for p in problems]


def _dra_on_by_default(target: str) -> bool:
    try:
        from dra_migrate.features import Target

        return Target(target).dra_default_on
    except (ImportError, ValueError):
        return int(target.split(".")[1]) >= 34
