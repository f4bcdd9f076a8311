"""One file through the whole pipeline: source → frontend → IR → lower → emit → self-check."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dra_migrate.check.lint import SeenObject, lint_view
from dra_migrate.diagnostics.model import Diagnostic, Location, Severity, make
from dra_migrate.emit import render
from dra_migrate.emit.comments import Opaque, comments_in, has_comment
from dra_migrate.emit.edits import OverlappingEdits, TextEdit, apply_edits
from dra_migrate.emit.patch import (
    Patcher,
    UnsupportedLayout,
    content_end,
    last_line_is_open_block_scalar,
    line_end_after,
)
from dra_migrate.emit.style import Style, detect_style
from dra_migrate.frontend.embedded import StringEditError, string_edits
from dra_migrate.frontend.parsed import ParsedDocument
from dra_migrate.frontend.workloads import build
from dra_migrate.ir import Workload
from dra_migrate.lower.claimants import file_claimants, local_names
from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.names import FileNames, TemplateNamer
from dra_migrate.lower.workload import lower_workload
from dra_migrate.plan import Append, Op, apply_ops, walk
from dra_migrate.ruleset import prefilters
from dra_migrate.ruleset.kinds import KindRuleSet, load_kind_rules
from dra_migrate.source.compose import ComposeError
from dra_migrate.source.nodes import Document, key_line
from dra_migrate.source.plain import to_plain
from dra_migrate.source.reader import BOM, STDIN, SourceError, SourceFile, compose_plain_documents, parse_source

if TYPE_CHECKING:
    from dra_migrate.frontend.embedded import StringHost

PREFILTER = prefilters.DEFAULT  # what may need migration without --rules: see dra_migrate.ruleset.prefilters


@dataclass(slots=True)
class FileResult:
    path: str
    original: bytes
    output: bytes | None = None  # None: unchanged
    diagnostics: list[Diagnostic] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    lowered: list[TemplateLowering] = field(default_factory=list)
    new_documents: list[dict[str, Any]] = field(default_factory=list)  # destined elsewhere (--claims-out / JSON)
    failed: bool = False  # an input or internal error: the file is left untouched
    # Every object as it is after the run (for the cross-file scheduling lints, dra_migrate.check.lint).
    objects: list[SeenObject] = field(default_factory=list)
    was_changed: bool | None = None  # set by release(), once the bytes are gone
    # (workloads migrated, GPUs they ask for, anything lowered) once drop_ir() let the IR go
    summary: tuple[int, int, bool] | None = None

    @property
    def migrated_workloads(self) -> int:
        if self.summary is not None:
            return self.summary[0]
        return sum(1 for t in self.lowered if not t.skip and t.requests)

    @property
    def gpus(self) -> int:
        if self.summary is not None:
            return self.summary[1]
        return sum(gpu_count(t) for t in self.lowered if not t.skip)

    @property
    def any_lowered(self) -> bool:
        return self.summary[2] if self.summary is not None else bool(self.lowered)

    def drop_ir(self) -> None:
        """Keep the counts, let the IR go: a batch run over a large repository reports counts and
        diagnostics, and holding every workload's IR to the end would grow memory with the repository."""
        self.summary = (self.migrated_workloads, self.gpus, self.any_lowered)
        self.workloads, self.lowered = [], []

    @property
    def changed(self) -> bool:
        if self.was_changed is not None:
            return self.was_changed
        return self.output is not None and self.output != self.original

    def release(self) -> None:
        """Drop the file's bytes once written or diffed: a run keeps what reports (and `plan`) need — paths,
        flags, diagnostics, the IR of GPU workloads — not the repository's text."""
        self.was_changed = self.changed
        self.original, self.output = b"", None


def gpu_count(tl: TemplateLowering) -> int:
    """GPUs a lowered template asks for (the preferred alternative of a firstAvailable request)."""
    total = 0
    for r in tl.requests:
        if r.choice is not None:
            total += r.choice.count
        elif r.alternatives:
            total += r.alternatives[0][1].count
    return total


def might_need_migration(raw: bytes) -> bool:
    return any(p in raw for p in prefilters.MIGRATION_BYTES)  # this run's strings (--rules adds some)


def reserve_existing_templates(docs: list[ParsedDocument], namer: TemplateNamer) -> None:
    for pd in docs:
        objs = pd.data.get("items", []) if isinstance(pd.data, dict) and pd.data.get("kind") == "List" else [pd.data]
        for obj in objs if isinstance(objs, list) else []:
            if isinstance(obj, dict) and obj.get("kind") in ("ResourceClaimTemplate", "ResourceClaim"):
                meta = obj.get("metadata") or {}
                if isinstance(meta, dict) and meta.get("name"):
                    namer.reserve(meta.get("namespace"), str(meta["name"]))


def template_names(path: str, documents: list[ParsedDocument], ctx: RunContext, rules: KindRuleSet) -> FileNames:
    """The claim template names of a file's pod templates: the run's pre-pass gave them when other files of
    its apply unit hold claimants too (integrations.unit_names); else they are resolved within the file."""
    claimants, existing = file_claimants(documents, rules, os.path.basename(path))
    if not claimants:
        return {}
    local = local_names(claimants, existing, path, merged=False)
    spaces = {c.namespace for c in claimants} | {e.namespace for e in existing}
    merged = local if len(spaces - {None}) <= 1 else local_names(claimants, existing, path, merged=True)
    return ctx.namer.file_names(path, local, merged)


def process_source(
    path: str,
    raw: bytes,
    ctx: RunContext,
    *,
    rules: KindRuleSet | None = None,
    claims_elsewhere: bool = False,
    helm_template: bool = False,
    self_check: bool = True,
) -> FileResult:
    result = FileResult(path, raw)
    try:
        src = parse_source(path, raw, helm_template=helm_template)
    except SourceError as exc:
        result.diagnostics.append(make(exc.code, exc.message, Location(path, exc.line, exc.col)))
        result.failed = True
        return result
    try:
        _migrate(src, result, ctx, rules or load_kind_rules(), claims_elsewhere, self_check)
    except ComposeError as exc:
        result.diagnostics.append(make(exc.code, exc.message, Location(path, exc.line, exc.col)))
        result.failed, result.output = True, None
    except Exception as exc:  # noqa: BLE001 - a bug must never cost the user a traceback or a file
        result.diagnostics.append(
            make("DRA902", f"internal error: {type(exc).__name__}: {exc}; the file is left untouched", Location(path))
        )
        result.failed, result.output = True, None
    return result


def _migrate(
    src: SourceFile, result: FileResult, ctx: RunContext, rules: KindRuleSet, claims_elsewhere: bool, self_check: bool
) -> None:
    fe = build(src, rules, ctx.options)
    result.diagnostics.extend(fe.diagnostics)
    reserve_existing_templates(fe.documents, ctx.namer)
    names = template_names(src.path, fe.documents, ctx, rules)
    file_style = Style(newline=src.newline, json=src.is_json)
    edits: list[TextEdit] = []
    expected: list[Any] = []
    any_change = False
    for pd in fe.documents:
        doc_ops: list[Op] = []
        doc_new: list[dict[str, Any]] = []
        hosted: dict[int, tuple[StringHost, list[Op]]] = {}  # ops inside manifest strings, per string
        for wl in pd.workloads:
            result.workloads.append(wl)
            result.diagnostics.extend(wl.diagnostics)
            ops, docs, lowered = lower_workload(wl, ctx, names)
            result.lowered.extend(lowered)
            for tl in lowered:
                result.diagnostics.extend(tl.diagnostics)
            if ops or docs:
                problems = _prewrite_checks(src, wl.host.pd if wl.host else pd, wl, ops, docs, ctx, rules)
                result.diagnostics.extend(problems)
                if any(d.severity is Severity.ERROR for d in problems):
                    result.failed = True
                    return
            if wl.host is not None and ops:
                hosted.setdefault(id(wl.host), (wl.host, []))[1].extend(ops)
                ops = []
            if wl.top_path and docs:  # inside a kind: List the new objects become list items
                ops.append(Append(("items",), tuple(docs)))
                docs = []
            doc_ops.extend(ops)
            doc_new.extend(docs)
        host_edits, value_ops = _hosted_edits(src, hosted.values(), file_style, result)
        if result.failed:
            return
        emitted = list(doc_new)
        if claims_elsewhere or src.is_json:
            result.new_documents.extend(doc_new)
            doc_new = []
        expected.append(apply_ops(pd.data, doc_ops + value_ops) if doc_ops or value_ops else pd.data)
        expected.extend(doc_new)
        _record_objects(src, pd, expected[-1 - len(doc_new)], emitted, result, rules)
        edits.extend(host_edits)
        if not doc_ops and not doc_new:
            any_change = any_change or bool(host_edits)
            continue
        any_change = True
        style = detect_style(pd.doc.root, src.newline, src.is_json, file_style, src.text)
        try:
            edits.extend(Patcher(src.text, pd.doc.root, style).apply(doc_ops))
        except UnsupportedLayout as exc:
            line, col = src.line_col(exc.offset)
            result.diagnostics.append(
                make("DRA216", f"{exc.message}; the file is left as is", Location(src.path, line, col))
            )
            result.failed = True
            return
        if doc_new and last_line_is_open_block_scalar(pd.doc.root, src.text) and not pd.doc.explicit_end:
            line, col = src.line_col(len(src.text))
            result.diagnostics.append(make(
                "DRA216", "the file ends inside a block scalar (| or >) without a final newline: appending the "
                "ResourceClaimTemplate would change that value; add the newline (or use --claims-out)",
                Location(src.path, line, col)))
            result.failed = True
            return
        if doc_new:
            edits.append(_new_documents_edit(src, pd, doc_new, style))
    if result.new_documents and src.is_json:
        where = ("follow the object on standard output as JSON values" if src.path == STDIN
                 else "go to a sibling file")
        result.diagnostics.append(make("DRA218", f"JSON input: new ResourceClaimTemplates {where}", Location(src.path)))
    if not any_change:
        return
    try:
        text = apply_edits(src.text, edits)
    except OverlappingEdits as exc:
        result.diagnostics.append(make("DRA901", f"self-check failed: {exc}", Location(src.path)))
        result.failed = True
        return
    if self_check:
        problem = check_output(src, text, expected, ctx, rules, edits)
        if problem:
            result.diagnostics.append(make(problem[0], problem[1], Location(src.path)))
            result.failed = True
            return
    result.output = ((BOM if src.bom else "") + text).encode("utf-8")


def _hosted_edits(
    src: SourceFile, hosted: Iterable[tuple[StringHost, list[Op]]], file_style: Style, result: FileResult
) -> tuple[list[TextEdit], list[Op]]:
    """Edits inside manifest strings (frontend.embedded), and the ops stating each new string's value."""
    edits: list[TextEdit] = []
    values: list[Op] = []
    for host, ops in hosted:
        try:
            host_edits, value = string_edits(host, ops, file_style)
        except (UnsupportedLayout, StringEditError) as exc:
            offset = host.shift(exc.offset) if isinstance(exc, UnsupportedLayout) else host.region_start
            line, col = src.line_col(max(offset, 0))
            result.diagnostics.append(make("DRA216", f"manifest string: {exc}; the file is left as is",
                                           Location(src.path, line, col)))
            result.failed = True
            return [], []
        edits.extend(host_edits)
        values.append(value)
    return edits, values


def _record_objects(
    src: SourceFile, pd: ParsedDocument, final: Any, new: list[dict[str, Any]], result: FileResult,
    rules: KindRuleSet,
) -> None:
    line = key_line(pd.doc.root, ("kind",))[0] if pd.doc.root is not None else 0

    def seen(obj: dict[str, Any], at: int, emitted: bool = False) -> None:
        view = lint_view(obj, rules)
        if view is not None:
            result.objects.append(SeenObject(view, src.path, at, emitted))

    if isinstance(final, dict) and final.get("kind") == "List" and isinstance(final.get("items"), list):
        originals = pd.data.get("items") if isinstance(pd.data, dict) else None
        count = len(originals) if isinstance(originals, list) else 0
        for i, item in enumerate(final["items"]):
            if isinstance(item, dict):
                item_line = key_line(pd.doc.root, ("items", i, "kind"))[0] if i < count else line
                seen(item, item_line, emitted=i >= count)
    elif isinstance(final, dict):
        seen(final, line)
    wl_line = pd.workloads[0].line if pd.workloads else line
    for d in new:
        seen(d, wl_line, emitted=True)


def _new_documents_edit(src: SourceFile, pd: ParsedDocument, docs: list[dict[str, Any]], style: Style) -> TextEdit:
    doc = pd.doc
    text = src.text
    nl = src.newline
    if doc.explicit_end:
        pos = line_end_after(text, doc.end)
    else:
        assert doc.root is not None
        pos = line_end_after(text, content_end(doc.root, text))
    body = "".join("---" + nl + render.document(d, style) for d in docs)
    if pos >= len(text) and not text.endswith("\n"):
        return TextEdit(pos, pos, nl + body.rstrip("\r\n"), 0, 1_000_000)
    return TextEdit(pos, pos, body, 0, 1_000_000)


def check_output(
    src: SourceFile, text: str, expected: list[Any], ctx: RunContext, rules: KindRuleSet | None = None,
    edits: list[TextEdit] | None = None,
) -> tuple[str, str] | None:
    """Parse the output independently and require exactly the intended data, every comment of the input
    (those in text the edits removed, when `edits` are given: the rest is copied), and a fixed point."""
    try:
        docs, _templates = compose_plain_documents(text)  # template documents, left as they were, stay out
    except ComposeError as exc:
        return "DRA901", f"self-check failed: the output does not parse ({exc.message} at line {exc.line})"
    actual = [to_plain(d.root) for d in docs]
    if actual != expected:
        return "DRA901", "self-check failed: " + explain_difference(expected, actual)
    lost = _lost_comment(src, text, docs, edits)
    if lost is not None:
        return "DRA901", f"self-check failed: the comment {lost!r} would be lost"
    if not _fixed_point(src.path, text, docs, actual, ctx, rules or load_kind_rules()):
        return "DRA903", "migrating the output again would change it again"
    return None


def _lost_comment(src: SourceFile, text: str, docs: list[Document], edits: list[TextEdit] | None) -> str | None:
    """A comment of the input that the output no longer has (a carried comment counts where it went)."""
    removed = [(0, len(src.text))] if edits is None else [(e.start, e.end) for e in edits if e.end > e.start]
    removed = [(a, b) for a, b in removed if "#" in src.text[a:b]]
    if not removed:
        return None

    before = Opaque([d.root for d in src.documents], src.text)
    after = Opaque([d.root for d in docs], text)
    for a, b in removed:
        for c in comments_in(src.text, a, b, before):
            if not has_comment(text, c.text, after):
                return c.text
    return None


def _fixed_point(
    path: str, text: str, docs: list[Document], plain: list[Any], ctx: RunContext, rules: KindRuleSet
) -> bool:
    """A second run on the output would leave it alone: its frontend and lowering ask for no edit and no new
    object. Reuses the self-check's parse; nothing is validated, patched or rendered (a second run that wanted
    to change anything is already a failure, whatever it would have written)."""
    try:
        src = parse_source(path, text.encode("utf-8"), documents=docs)
    except SourceError:
        return True  # the output parsed above; what a second run would refuse it would leave as is
    fe = build(src, rules, ctx.options, plain=plain)
    again = RunContext(ctx.options, facts=ctx.facts)
    reserve_existing_templates(fe.documents, again.namer)
    for pd in fe.documents:
        for wl in pd.workloads:
            ops, new_docs, _ = lower_workload(wl, again)
            if ops or new_docs:
                return False
    return True


def explain_difference(expected: Any, actual: Any) -> str:
    # lazy: start-up (deepdiff: ~83 ms, only explain_difference() needs it)
    from deepdiff import DeepDiff  # heavy: only imported when something is wrong

    diff = DeepDiff(expected, actual, verbose_level=1)
    paths = []
    for kind, items in diff.items():
        for p in list(items)[:5] if hasattr(items, "__iter__") else []:
            paths.append(f"{kind}: {p}")
    return "unexpected difference at " + "; ".join(paths[:5]) if paths else "unexpected difference"


def _prewrite_checks(
    src: SourceFile,
    pd: ParsedDocument,
    wl: Workload,
    ops: list[Op],
    docs: list[dict[str, Any]],
    ctx: RunContext,
    rules: KindRuleSet,
) -> list[Diagnostic]:
    # lazy: start-up (check: ~12 ms, only _prewrite_checks() needs it)
    from dra_migrate.check import prewrite

    loc = Location(src.path, wl.line, 1)
    out: list[Diagnostic] = []
    for obj in docs:
        out.extend(prewrite.check_target_features(obj, ctx.options.target_version, ctx.options.feature_gates, loc))
        if ctx.options.validate:
            out.extend(prewrite.validate_new_object(obj, ctx.options.target_version, loc))
        for device_class, expr in prewrite.selectors_of(obj):
            problem = prewrite.check_selector(device_class, expr)
            if problem:
                out.append(make(problem[0], problem[1], loc, wl.ref))
    if ctx.options.validate and ops:
        before = walk(pd.data, wl.item_path)
        after = walk(apply_ops(pd.data, [o for o in ops if o.path[: len(wl.item_path)] == wl.item_path]), wl.item_path)
        if isinstance(before, dict) and isinstance(after, dict):
            out.extend(prewrite.validate_changed_object(before, after, ctx.options.target_version, loc, rules))
    return out
