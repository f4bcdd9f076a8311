"""A whole migration run over many files: discovery, processing in order, outputs, exit code."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dra_migrate.check.lint import lint_objects
from dra_migrate.config import Options
from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.emit.claims_file import claims_target, json_stream
from dra_migrate.emit.writer import TreeWriter
from dra_migrate.lower.context import RepoFacts, RunContext, ScopedClass
from dra_migrate.lower.passes import SIDE_EFFECTS  # (pipeline imports the passes anyway)
from dra_migrate.pipeline import FileResult, might_need_migration, process_source
from dra_migrate.ruleset import prefilters
from dra_migrate.ruleset.features import Target
from dra_migrate.ruleset.kinds import KindRule, KindRuleSet, NonWorkloadRule, RuleError, load_kind_rules
from dra_migrate.ruleset.prefilter_derive import derive_for
from dra_migrate.run.bridge import classes_from, run_bridge, scan_paths, scan_raw
from dra_migrate.run.executor import Executor, install_caches, select
from dra_migrate.run.integrations import unit_names
from dra_migrate.run.integrations.kustomize_reach import kustomize_builds, tree_scope
from dra_migrate.run.integrations.layout import Layout
from dra_migrate.run.integrations.unit_names import related
from dra_migrate.run.model import RunConfig, RunResult
from dra_migrate.run.readpass import ReadOutcome, holds_repo_setting, worth_starting_early
from dra_migrate.run.readpass import outcome as read_outcome
from dra_migrate.run.sharing_configs import inventory_from, obsolete_config_diagnostics, read_files, scope_diagnostics
from dra_migrate.run.writes import Writes, settle_new_objects, unified_diff
from dra_migrate.source import realpaths
from dra_migrate.source.discover import KUSTOMIZATION_NAMES, Found, discover
from dra_migrate.source.filescan import Scan, scan
from dra_migrate.source.reader import STDIN, is_helm_template_path
from dra_migrate.source.realpaths import real_file

if TYPE_CHECKING:
    from dra_migrate.emit.writer import TreeWriter
    from dra_migrate.lower.names import NameTable
    from dra_migrate.perf.scout import Scout

def load_rules(rule_dirs: Sequence[Path]) -> tuple[KindRuleSet | None, Diagnostic | None]:
    """The kind rules, or a DRA402 diagnostic (file:line) when a rule file is invalid."""

    try:
        rules = load_kind_rules(tuple(rule_dirs))
    except RuleError as exc:
        return None, make(exc.code, f"{exc.message}; nothing is migrated until the rules load",
                          Location(exc.file or "<rules>", exc.line))
    known = SIDE_EFFECTS
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


def _use_prefilter(rule_dirs: Sequence[Path]) -> None:
    """This run's prefilter strings: the generated default, plus what --rules packs add (their kinds and GPU
    fields: dra_migrate.ruleset.prefilter_derive). An invalid pack adds nothing; load_rules reports it."""

    try:
        prefilters.use(derive_for(rule_dirs) if rule_dirs else ())
    except RuleError:
        prefilters.use(())


def run_migration(cfg: RunConfig) -> RunResult:
    install_caches()  # perf/'s CEL parser cache and verdict memo, for library callers too (if perf/ is there)
    with _interruptible() as interrupt:
        return _run(cfg, interrupt)


def _run(cfg: RunConfig, interrupt: _Interrupt) -> RunResult:
    result = RunResult()
    realpaths.clear()  # directories may have moved since the last run in this process
    _use_prefilter(cfg.rule_dirs)
    context = _context_files(cfg, result)
    if cfg.options.strategy == "extended-resource":

        result.facts = RepoFacts(extended_resource_classes=_scan_repo_classes(cfg, context))
        run_bridge(cfg, result, result.facts)
        result.diagnostics.extend(gate_override_problems(cfg.options))
        return result
    # What a translation started before the pre-pass sees (early, speculative ones): the caller's classes. The
    # pre-pass's facts come in below (ctx.use).
    given = RepoFacts(extended_resource_classes=dict(cfg.options.extended_resource_classes))
    ctx = RunContext(cfg.options, facts=given)
    rules, problem = load_rules(cfg.rule_dirs)
    if rules is None:
        assert problem is not None
        result.diagnostics.append(problem)
        return result
    claims: list[tuple[str, dict[str, Any]]] = []
    if list(cfg.paths) == ["-"]:
        raw = sys.stdin.buffer.read()
        result.scanned, result.stdin_output = 1, raw
        result.facts = _repo_prepass(cfg, result, [("<stdin>", raw), *((c.found.display, c.raw)
                                                                      for c in _settings(context))])
        ctx.use(result.facts)
        if might_need_migration(raw):  # as in a walk, a text without GPU keys passes through untouched
            fr = process_source(STDIN, raw, ctx, rules=rules, claims_elsewhere=cfg.claims_out is not None)
            result.files.append(fr)
            if fr.output is not None and fr.changed:
                output = fr.output
                if fr.new_documents and cfg.claims_out is None:  # JSON: no document to append, no sibling
                    text = output.decode("utf-8-sig")
                    stream = json_stream(fr.new_documents, text)
                    output = (text if text.endswith("\n") else text + "\n").encode() + stream.encode()
                    output = (b"\xef\xbb\xbf" if fr.output.startswith(b"\xef\xbb\xbf") else b"") + output
                    fr.new_documents = []
                result.stdin_output = output
                if cfg.mode == "diff":
                    result.diffs.append(unified_diff(STDIN, raw, output))
            claims.extend((STDIN, d) for d in fr.new_documents)
        _finish(cfg, result, claims, _lint(cfg, result))
        _drop_context_findings(cfg, result, context)
        return result

    layout = Layout()
    # One read of every file. Files that cannot hold a GPU request nor a repo-wide setting are settled at once
    # (copied to --output-dir); the others are kept, and the repo-wide pre-pass (sharing configs, DeviceClasses)
    # runs over them before any workload is translated, since those settings usually sit in other files.
    # With worker processes, translation starts during the read, speculatively: most repositories hold no
    # repo-wide setting, and then the pre-pass finds nothing and the early results are exactly the ones a
    # later start would give. Should a setting turn up, the early results are dropped and translation starts
    # over once the pre-pass is done; a file the layout reports instead (a kustomize patch) is skipped.
    # Early results wait in this process until the read is over: past pool.early_files files into the walk,
    # files are no longer started early, so memory stays bounded on a huge repository (the workers have the
    # files started early to translate meanwhile; the others go to them once the read is over).
    # The executor (run.executor): perf/'s worker processes, or the serial reference when perf/ is absent,
    # --jobs 1 or DRA_MIGRATE_EXECUTOR=serial; the same results either way.
    pool, writes = select(cfg, rules, ctx)
    speculate = pool.jobs > 1 and not cfg.sharing_configs and not any(holds_repo_setting(c.raw) for c in context)
    scout = _scout_for(cfg, pool)
    entries: list[tuple[str, Any]] = []
    for c in _settings(context):
        layout.note(c.found, c.raw)
    walked: set[str] = set()  # every path of the walk, and the kustomizations' bytes: for _name_prepass
    kustomizations: dict[str, bytes] = {}
    early = _Early()
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
                walked.add(found)
                continue  # the scout says nothing in this file concerns the run (and there is no --output-dir)
            walked.add(os.fspath(found))
            outcome = read_outcome(display, cfg.max_file_size, scanned)
            if found.name in KUSTOMIZATION_NAMES and isinstance(outcome[1], bytes):
                kustomizations[os.path.abspath(found)] = outcome[1]
            entry = _read_entry(cfg, writes, layout, found, outcome)
            if entry[0] == "kept":
                raw = entry[1][1]
                if speculate and holds_repo_setting(raw):
                    speculate = False
                if speculate and n < pool.early_files and worth_starting_early(os.fspath(found), raw):
                    early.hold(pool, entries, found)
            if entry[0] != "diagnostics" or entry[1]:  # most files: nothing to keep
                entries.append(entry)
        if speculate:
            early.start(pool, entries)
        kept = [(v[0], v[1]) for k, v in entries if k in ("kept", "submitted")]
        ctx.use(_repo_prepass(cfg, result, _with_context(kept, context), layout.kustomization_files()))
        hits = [(found, raw) for found, raw in kept if might_need_migration(raw)]
        names = _name_prepass(cfg, result, rules, hits, walked, kustomizations, context)
        result.facts = dataclasses.replace(ctx.facts, names=names)
        ctx.use(result.facts)
        if speculate:  # the files held for their names start now, while the layout is indexed
            early.release(pool, entries)
        layout.index(hits, cfg, rules, ctx)
        del kept, hits, walked, kustomizations
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
    _count_refused_writes(result)
    _finish(cfg, result, claims, lints)
    layout.finish(cfg, result)
    _drop_context_findings(cfg, result, context)
    return result


class _Early:
    """The files of the walk's current directory that may be translated before the read is over. They are
    started once the walk leaves the directory, except those whose names may depend on another's there
    (integrations.unit_names.related): they wait for the pre-pass that names them."""

    def __init__(self) -> None:
        self.directory: str | None = None
        self.held: list[int] = []  # their places in the run's entries
        self.unnamed: list[int] = []  # held for the names pre-pass

    def hold(self, pool: Executor, entries: list[tuple[str, Any]], found: Found) -> None:
        directory = os.path.dirname(os.fspath(found))
        if directory != self.directory:
            self.start(pool, entries)
            self.directory = directory
        self.held.append(len(entries))

    def start(self, pool: Executor, entries: list[tuple[str, Any]]) -> None:

        held, self.held = self.held, []
        waiting = related([entries[i][1][1] for i in held]) if len(held) > 1 else set()
        for n, i in enumerate(held):
            if n in waiting:
                self.unnamed.append(i)
                continue
            _submit(pool, entries, i)

    def release(self, pool: Executor, entries: list[tuple[str, Any]]) -> None:
        """The names pre-pass is done: the files held for it start (before the layout's pre-pass, which may
        still report some of them instead: those are skipped then, as other files started early)."""
        unnamed, self.unnamed = self.unnamed, []
        for i in unnamed:
            _submit(pool, entries, i)


def _submit(pool: Executor, entries: list[tuple[str, Any]], i: int) -> None:
    found, raw = entries[i][1]
    entries[i] = ("submitted", (found, raw, pool.submit(found.display, raw, is_helm_template_path(os.fspath(found)),
                                                        i)))


def _scout_for(cfg: RunConfig, pool: Executor) -> Scout | None:
    """The scout the command line started for this run's walk (dra_migrate.perf.scout), if the run can use it:
    one for another walk, or for a run that wants the total first (a progress bar) or runs with one process
    only, would not help. With --output-dir it must have been started to send every file's bytes."""
    scouting = sys.modules.get("dra_migrate.perf.scout")
    if scouting is None:  # never imported (perf/ removed, a forced serial run): nothing started a scout
        return None

    scout: Scout | None = scouting.take(cfg.paths, cfg.excludes, cfg.gitignore, cfg.max_file_size,
                                        cfg.output_dir is not None)
    if scout is not None and (cfg.progress is not None or pool.jobs <= 1
                              or prefilters.extended()):  # (the scout scans for the default strings only)
        scout.close()
        return None
    return scout


HEAD_BYTES = 16 << 20  # what the run holds of a scout's first files before it decides how large it is


def _reads(cfg: RunConfig, result: RunResult, pool: Executor, scout: Scout | None
           ) -> tuple[Iterator[tuple[Found | str, Scan]], int]:
    """The run's walk and read, (file, scan) in walk order, and the number of files when a progress bar
    wants it first. From the scout if there is one: a str is then a file that concerns the run in no way.
    The first pool.large_walk files (or HEAD_BYTES of kept files) are taken at once to tell the pool how
    large the run is (not for an executor that does not ask)."""
    limit = pool.large_walk
    if scout is not None:
        reads = scout.reads(result.diagnostics)
        head: list[tuple[Found | str, Scan]] = []
        held = 0
        for pair in reads:
            head.append(pair)
            held += len(pair[1][1]) if isinstance(pair[1][1], bytes) else 0
            if limit is None or len(head) >= limit or held >= HEAD_BYTES:
                break
        pool.large = limit is not None and (len(head) >= limit or held >= HEAD_BYTES)
        return itertools.chain(head, reads), 0
    walk: Iterator[Found] = discover(cfg.paths, cfg.excludes, result.diagnostics, gitignore=cfg.gitignore)
    total = 0
    if cfg.progress is not None:  # a progress bar wants the total; other runs stream the walk
        found_all = list(walk)
        total, walk = len(found_all), iter(found_all)
        del found_all
    if limit is None:
        return ((f, scan(os.fspath(f), cfg.max_file_size)) for f in walk), total
    first = list(itertools.islice(walk, limit))
    pool.large = len(first) >= limit
    return ((f, scan(os.fspath(f), cfg.max_file_size)) for f in itertools.chain(first, walk)), total


def _read_entry(cfg: RunConfig, writes: Writes, layout: Any, found: Found, outcome: ReadOutcome
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
    cfg: RunConfig, writes: Writes, layout: Any, pool: Executor, found: Found, raw: bytes, position: int
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
        return _reported(layout, found, intercepted)
    helm = is_helm_template_path(os.fspath(found))
    return "process", (found, raw, helm, pool.submit(found.display, raw, helm, position))


def _recheck(
    cfg: RunConfig, writes: Writes, layout: Any, pool: Executor, found: Found, raw: bytes, ticket: int
) -> tuple[str, Any]:
    """A file started early: still translated, or reported by the layout (its result dropped)."""
    intercepted = layout.intercept(found, raw)
    if intercepted is None:
        return "process", (found, raw, is_helm_template_path(os.fspath(found)), ticket)
    pool.skip(ticket)
    if cfg.output_dir is not None:
        _copy_out(cfg, writes, found, raw)
    return _reported(layout, found, intercepted)


def _reported(layout: Any, found: Found, diagnostics: list[Diagnostic]) -> tuple[str, Any]:
    """A file the layout reports instead of translating. A workload file it refuses is still a file with GPU
    keys, left as is (the counts say so); patches and templates are reports about other files' builds."""
    if layout.refuses(found):
        return "file", FileResult(found.display, b"", None, list(diagnostics))
    return "diagnostics", diagnostics


def _settle(
    cfg: RunConfig, result: RunResult, writes: Writes, layout: Any, found: Found, raw: bytes,
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


def _repo_prepass(cfg: RunConfig, result: RunResult, files: list[tuple[str, bytes]],
                  kustomizations: Sequence[tuple[str, Path]] = ()) -> RepoFacts:
    """Repo-wide settings, from the files the run read: device plugin sharing configs (plus --sharing-config
    files kept elsewhere) with the workloads each governs (its directory tree, the kustomize builds that
    include it, or the sharing-scopes mapping), and DeviceClasses that already map an extended resource to DRA."""

    elsewhere = read_files([str(p) for p in cfg.sharing_configs], cfg.excludes)
    inv = inventory_from(files, elsewhere, kustomizations, cfg.sharing_scopes)
    result.diagnostics.extend(obsolete_config_diagnostics(inv))
    result.diagnostics.extend(scope_diagnostics(inv, cfg.sharing_scopes))
    # A DeviceClass serves the workloads of its own cluster only, like a sharing config: the caller's classes
    # apply everywhere (and win), the repository's to their directory tree and the kustomize builds holding them.
    found = [(display, classes) for display, raw in files if (classes := scan_raw(raw))]
    builds = kustomize_builds(kustomizations) if found else None  # (only when there is a class to place)
    scoped = tuple(ScopedClass(resource, name, display, tree_scope([display], builds))
                   for display, classes in found for resource, name in classes.items() if builds is not None)
    return RepoFacts(sharing=inv, extended_resource_classes=dict(cfg.options.extended_resource_classes),
                     scoped_classes=scoped)


def _name_prepass(cfg: RunConfig, result: RunResult, rules: KindRuleSet, hits: list[tuple[Found, bytes]],
                  walked: set[str], kustomizations: dict[str, bytes], context: list[ContextFile]
                  ) -> NameTable | None:
    """The names of pod templates whose apply unit (a kustomize build, a directory) holds other files with GPU
    workloads or claim templates, whether the run was given those files or not (integrations.unit_names). With
    the repository context (the command line's runs), the repository's kustomizations are those the run and its
    context read; otherwise they are looked for from the files' git checkout."""

    if cfg.repo_context:
        for c in _settings(context):
            if c.found.name in KUSTOMIZATION_NAMES:
                kustomizations.setdefault(os.path.abspath(c.found), c.raw)

    files = [(found.display, os.path.abspath(found), raw) for found, raw in hits]
    seen = unit_names.Seen(walked, {os.fspath(found): raw for found, raw in hits})
    target = None
    if cfg.claims_out is not None:

        claims_out = cfg.claims_out

        def target(path: str) -> str:
            return os.path.abspath(claims_target(claims_out, path))

    try:
        return unit_names.run_table(cfg.paths, files, seen, kustomizations, rules, cfg.max_file_size, target,
                                    repository=cfg.repo_context, options=cfg.options)
    except Exception as exc:  # noqa: BLE001 - a bug must not cost the user the migration
        result.diagnostics.append(make("DRA902", f"internal error in the pre-pass for names: {type(exc).__name__}: "
                                       f"{exc}; names are made unique within each file only", Location("<run>")))
        return None


def _scan_repo_classes(cfg: RunConfig, context: list[ContextFile]) -> dict[str, str]:
    """Pre-pass: DeviceClasses of the repository that already map an extended resource to DRA (the caller's,
    when it gave some)."""
    if cfg.options.extended_resource_classes:
        return dict(cfg.options.extended_resource_classes)

    classes = {} if list(cfg.paths) == ["-"] else scan_paths(cfg.paths, cfg.excludes)
    for name, cls in classes_from(c.raw for c in _settings(context)).items():
        classes.setdefault(name, cls)
    return classes


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

    settle_new_objects(cfg, result, cfg.claims_out, claims, "claim template")


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

    objects = [o for f in result.files for o in f.objects]
    if not objects:
        return []
    try:
        rules, _problem = load_rules(cfg.rule_dirs)  # cached; a problem was reported when the run started
        return lint_objects(objects, rules, cfg.options.target_version) if rules is not None else []
    except Exception as exc:  # noqa: BLE001 - a lint bug must not cost the user the migration
        return [make("DRA902", f"internal error in the scheduling lints: {exc}", Location("<run>"))]


def _copy_out(cfg: RunConfig, writes: Writes, found: Found, data: bytes) -> None:
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

        if len(_TREE_WRITERS) > 16:
            _TREE_WRITERS.clear()
        writer = _TREE_WRITERS[output_dir] = TreeWriter()
    return writer


def _count_refused_writes(result: RunResult) -> None:
    """A rewrite the disk refused (a read-only file: DRA111) leaves the file as it was: it counts as failed
    and untouched, not as changed, and the refusal becomes the file's own diagnostic."""
    refused = {d.location.file: d for d in result.diagnostics if d.code in ("DRA106", "DRA111")}
    if not refused:
        return
    moved: set[int] = set()
    for f in result.files:
        d = refused.get(f.path)
        if d is not None and f.changed:
            f.failed, f.was_changed = True, False
            f.diagnostics.append(d)
            moved.add(id(d))
    result.diagnostics = [d for d in result.diagnostics if id(d) not in moved]


@dataclass(slots=True)
class ContextFile:
    """A file of the repository the run's pre-pass reads (see _context_files); `named`: one of the run's own
    files (the run reads it; only its place in the walk is kept)."""

    found: Found
    raw: bytes
    real: str  # the resolved path
    named: bool
    setting: bool  # may hold a repo-wide setting, or is a kustomization (its bytes are kept)
    workload: bool  # outside the run, may hold a container's GPU request


def _context_files(cfg: RunConfig, result: RunResult) -> list[ContextFile]:
    """The files of the repository at cfg.context_root that can hold a repo-wide setting (the pre-pass
    prefilter strings: sharing configs, Nodes pointing at them, DeviceClasses) and its kustomizations, in the
    order of a walk of the whole repository; [] when the run's own paths cover the root.

    A run over some of the repository's files (the pre-commit hook's staged files, `migrate apps/`) then
    reads these settings exactly as a run over all of it: the same pre-pass code sees the same files in the
    same order, and decides the same (which config applies where is the pre-pass's rule, not this walk's)."""
    if not cfg.repo_context:
        return []
    root = cfg.context_root
    named = [p for p in cfg.paths if p != "-"]
    if root is None:
        return []  # said at the end (_drop_context_findings), if any file needed the settings
    named_real = [Path(p).resolve() for p in named]
    if any(p.is_dir() and root.is_relative_to(p) for p in named_real):
        return []  # the run walks the whole repository itself

    named_files = {str(p) for p in named_real if not p.is_dir()}
    named_dirs = tuple(os.path.join(str(p), "") for p in named_real if p.is_dir())
    try:
        top = os.path.relpath(root)
    except ValueError:
        top = str(root)
    if top.startswith(".." + os.sep + ".."):
        top = str(root)
    out: list[ContextFile] = []
    for found in discover([top], cfg.excludes, None, gitignore=cfg.gitignore):
        real = real_file(os.fspath(found))
        if real in named_files or real.startswith(named_dirs):
            out.append(ContextFile(found, b"", real, True, False, False))  # the run reads it: its place only
            continue
        kind, raw = scan(os.fspath(found), cfg.max_file_size)
        if kind != "kept" and (kind != "plain" or found.name not in KUSTOMIZATION_NAMES):
            continue
        assert isinstance(raw, bytes)
        setting = holds_repo_setting(raw) or found.name in KUSTOMIZATION_NAMES
        gpu = might_need_migration(raw) and (b"limits" in raw or b"requests" in raw)  # (a container's request)
        if setting or gpu:  # a workload's bytes are not kept: it is only counted (DRA121)
            out.append(ContextFile(found, raw if setting else b"", real, False, setting, gpu))
    return out


def _with_context(kept: list[tuple[Found, bytes]], context: list[ContextFile]) -> list[tuple[str, bytes]]:
    """What the pre-pass reads: the run's kept files and the repository's other setting files, in the order
    of a walk of the whole repository (the run's own files under the run's names)."""
    if not context:
        return [(found.display, raw) for found, raw in kept]
    position = {c.real: i for i, c in enumerate(context)}  # the place of each in a walk of the repository

    ordered = [(position.get(real_file(os.fspath(found)), len(position)), found.display, raw)
               for found, raw in kept]
    ordered.extend((position[c.real], c.found.display, c.raw) for c in _settings(context))
    ordered.sort(key=lambda t: t[0])
    return [(display, raw) for _i, display, raw in ordered]


def _settings(context: list[ContextFile]) -> list[ContextFile]:
    """The repository's setting files outside the run's paths."""
    return [c for c in context if c.setting and not c.named]


def _drop_context_findings(cfg: RunConfig, result: RunResult, context: list[ContextFile]) -> None:
    """What the pre-pass found to say about the repository's other files is not this run's to report (a run on
    the staged files reports on those). Say what the run could not see: no repository root (DRA120); a shared
    claim while other files of the repository may hold GPU workloads (DRA121: a workload of the same name is
    told apart from it only among the files a run translates)."""
    others = {c.found.display for c in _settings(context)}
    if others:
        result.diagnostics = [d for d in result.diagnostics if d.location.file not in others]
    elsewhere = sum(1 for c in context if c.workload)
    if elsewhere:
        shared = next((d for f in result.files for d in f.diagnostics if d.code == "DRA502"), None)
        if shared is not None:
            result.diagnostics.append(make(
                "DRA121", f"a shared ResourceClaim is emitted while {elsewhere} other file(s) of the repository "
                "outside this run may request GPUs too: a workload of the same name and namespace there gets a "
                "claim name of its own (with its kind) only in a run that translates both; migrate them in one run "
                f"(dra-migrate migrate {_shown(cfg.context_root)})", shared.location, shared.object))
    if cfg.repo_context and cfg.context_root is None and result.files:
        named = next((p for p in cfg.paths if p != "-"), "<stdin>")
        result.diagnostics.append(make(
            "DRA120", "no repository root (no git work tree, no .dra-migrate.yaml): sharing configs, DeviceClasses "
            "and kustomizations are read from the given paths only", Location(named)))


def _shown(root: Path | None) -> str:
    """The repository root as the user would type it from here."""
    if root is None:
        return "."
    rel = os.path.relpath(root)
    return str(root) if rel.startswith(".." + os.sep + "..") else rel


def gate_override_problems(options: Options) -> list[Diagnostic]:
    """DRA608 for --feature-gates settings the target release would refuse (once per run)."""

    problems = Target(options.target_version).override_problems(options.feature_gates)
    return [make("DRA608", f"--feature-gates: {p}; the setting is ignored", Location("<run>")) for p in problems]


def _dra_on_by_default(target: str) -> bool:
    try:

        return Target(target).dra_default_on
    except (ImportError, ValueError):
        return int(target.split(".")[1]) >= 34
