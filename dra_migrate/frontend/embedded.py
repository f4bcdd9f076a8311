"""Objects embedded whole in other objects: a Katib trialSpec, an AppWrapper component, an Argo manifest.

A kind rule's `embedded` paths name where a complete object (its own apiVersion and kind) sits inside the
outer one. The controller creates that object as it is, so it is dispatched by its own group and kind
through the same rules, with paths from the outer document's root: its edits splice into the original text
like any other. Its namespace is the outer object's (or its own, as the rule says), and its claim template
is written next to the outer document.

An object in a YAML string (`format: yaml-string`, Argo's `manifest: |`) is edited inside the string: the
literal block's lines are parsed as a document of their own, padded with newlines so that its lines,
columns and offsets are the outer file's, and the edits made there are shifted back into the outer text.
The string value the outer parser then reads is checked to parse into exactly the migrated object (what
`kubectl create -f` in the Argo executor applies). Anything else (folded or quoted strings, several
documents, keep-chomping, unparseable text) is reported with a named reason (DRA415) and left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.emit.edits import apply_edits
from dra_migrate.emit.patch import Patcher
from dra_migrate.emit.style import detect_style
from dra_migrate.frontend.parsed import ParsedDocument as PD
from dra_migrate.frontend.parsed import gpu_keys_in
from dra_migrate.ir import DocPath, Workload
from dra_migrate.plan import ReplaceValue, apply_ops
from dra_migrate.ruleset import prefilters
from dra_migrate.ruleset.kinds import EmbeddedObject, KindRule, format_path, resolve
from dra_migrate.source.compose import ComposeError, compose_documents
from dra_migrate.source.nodes import Scalar, find, key_line
from dra_migrate.source.plain import to_plain
from dra_migrate.source.reader import SourceError, parse_source

if TYPE_CHECKING:
    from dra_migrate.emit.edits import TextEdit
    from dra_migrate.emit.style import Style
    from dra_migrate.frontend.parsed import ParsedDocument
    from dra_migrate.plan import Op
    from dra_migrate.source.reader import SourceFile

MAX_DEPTH = 4  # outer objects around an embedded one (an AppWrapper holding a Katib Experiment holding a Job)
CODE = "DRA415"


@dataclass(slots=True)
class StringHost:
    """A literal block scalar holding one embedded document, parsed on its own (see the module doc)."""

    outer_path: DocPath  # path of the string in the outer document
    src: SourceFile  # the padded block text as a source of its own (same path, lines and columns)
    pd: ParsedDocument  # its one document, its data and (after the frontend) nothing else
    region_start: int  # offset in the outer text of the first line after the block header
    pad: int  # length of the padding before that line in src.text
    indent: int
    strip: bool  # `|-`: no final line break in the value

    def shift(self, offset: int) -> int:
        return offset - self.pad + self.region_start

    def value_of(self, padded: str) -> str | None:
        """The string the outer parser reads from these block lines (None: a line is not indented enough)."""
        lines = padded[self.pad :].replace("\r\n", "\n").split("\n")
        out: list[str] = []
        for line in lines:
            if line[: self.indent] == " " * self.indent:
                out.append(line[self.indent :])
            elif not line.strip(" "):
                out.append("")
            else:
                return None
        text = "\n".join(out).rstrip("\n")
        return text if self.strip or not text else text + "\n"


@dataclass(slots=True)
class Outer:
    """What an embedded object inherits from the objects around it."""

    top_path: DocPath  # the outermost object's path in its document: () or ("items", i)
    namespace: str | None
    name: str
    via: str
    carriers: list[tuple[str, str, str, str]]
    side_effects: tuple[str, ...]
    depth: int
    note: str = ""  # the rule's note on where the controller creates it
    host: StringHost | None = None
    in_string: bool = False
    pods_run_in: str = ""  # the outer object is cluster-scoped and this one takes its namespace (Workload)


Visit = Callable[["SourceFile", "ParsedDocument", Any, DocPath, Outer], None]


def adopt(wl: Workload, outer: Outer | None) -> None:
    """An embedded workload takes its namespace, a name, its place and its carriers from the outer object."""
    if outer is None:
        return
    wl.outer_path = outer.top_path
    wl.via = outer.via
    wl.carriers = list(outer.carriers)
    wl.host = outer.host
    wl.embedded_note = outer.note
    wl.name = wl.name or outer.name


# Argo substitutes these in a manifest before kubectl sees it; the workflow's namespace is the outer one.
OUTER_NAMESPACE_PLACEHOLDERS = frozenset({"{{workflow.namespace}}"})
PLACEHOLDER = re.compile(r"\{\{|\$\{|\$\(")


def inherits_namespace(entry: EmbeddedObject, own: str | None) -> bool:
    # `outer`: the controller creates it in the outer object's namespace (Katib sets it, AppWrapper
    # rejects any other); `own-or-outer`: kubectl in the Argo executor pod honours the manifest's own.
    return entry.namespace != "own-or-outer" or not own or own.replace(" ", "") in OUTER_NAMESPACE_PLACEHOLDERS


def namespace_for(entry: EmbeddedObject, own: str | None, outer_ns: str | None) -> str | None:
    return outer_ns if inherits_namespace(entry, own) else own


def _inherit_namespace(inherited: Outer, entry: EmbeddedObject, own: Any, wl: Workload) -> None:
    own = own if isinstance(own, str) else None
    inherited.namespace = namespace_for(entry, own, wl.namespace)
    inherited.pods_run_in = wl.pods_run_in if inherits_namespace(entry, own) else ""


def _placeholder_namespace(entry: EmbeddedObject, value: Any) -> str | None:
    """A namespace only known at run time (an Argo parameter): where the template must go is unknown."""
    meta = value.get("metadata") if isinstance(value, dict) else None
    own = meta.get("namespace") if isinstance(meta, dict) else None
    if entry.namespace != "own-or-outer" or not isinstance(own, str) or not PLACEHOLDER.search(own):
        return None
    if own.replace(" ", "") in OUTER_NAMESPACE_PLACEHOLDERS:
        return None
    return f"its namespace {own!r} is only known when the workflow runs, so is where its claim template must be"


def dispatch(
    src: SourceFile,
    pd: ParsedDocument,
    wl: Workload,
    rule: KindRule,
    item_path: DocPath,
    outer: Outer | None,
    diags: list[Diagnostic],
    visit: Visit,
) -> list[DocPath]:
    """Visit every object embedded in `wl.data` as the rule says; the concrete paths found, from the object."""
    found: list[DocPath] = []
    if not rule.embedded:
        return found
    depth = (outer.depth if outer else 0) + 1
    for entry in rule.embedded:
        min_version, claims_note = entry.claims or (rule.claims_min_version, rule.claims_note)
        carrier = (wl.kind, wl.api_version, min_version, claims_note)
        for concrete, value in resolve(wl.data, entry.path):
            found.append(concrete)
            path = (*item_path, *concrete)
            where = _where(src, pd, path)
            reason = _refusal(wl.data, concrete, value, entry, depth, outer)
            if reason is not None:
                if _mentions_gpu(value):
                    diags.append(make(CODE, f"{format_path(concrete)} of {wl.kind} {wl.name!r}: {reason}; its GPU "
                                      "requests are reported, not rewritten", where, wl.ref))
                continue
            if entry.in_string and not _mentions_gpu(value):
                continue  # no GPU in the string: not worth parsing
            own_meta = value.get("metadata") if isinstance(value, dict) else None
            inherited = Outer(
                top_path=outer.top_path if outer else item_path,
                namespace=None,
                name=wl.name,
                via=f"{wl.ref if wl.name else wl.kind} > ",
                carriers=[*(outer.carriers if outer else []), carrier] if wl.claims_support else
                list(outer.carriers if outer else []),
                side_effects=(*(outer.side_effects if outer else ()), *rule.side_effects),
                depth=depth,
                note=entry.note,
                host=outer.host if outer else None,
            )
            if not entry.in_string:
                _inherit_namespace(inherited, entry, own_meta.get("namespace") if isinstance(own_meta, dict) else None,
                                   wl)
                visit(src, pd, value, path, inherited)
                continue
            host, problem = _string_host(src, pd, path, str(value))
            if host is None:
                diags.append(make(CODE, f"{format_path(concrete)} of {wl.kind} {wl.name!r}: {problem}; its GPU "
                                  "requests are reported, not rewritten", problem_where(problem, where), wl.ref))
                continue
            data = host.pd.data
            if (problem := _placeholder_namespace(entry, data)) is not None:
                diags.append(make(CODE, f"{format_path(concrete)} of {wl.kind} {wl.name!r}: {problem}; its GPU "
                                  "requests are reported, not rewritten", where, wl.ref))
                continue
            meta = data.get("metadata") if isinstance(data, dict) else None
            _inherit_namespace(inherited, entry, meta.get("namespace") if isinstance(meta, dict) else None, wl)
            inherited.host = host
            inherited.in_string = True
            visit(host.src, host.pd, data, (), inherited)
            pd.workloads.extend(host.pd.workloads)  # the pipeline edits them through their host
            host.pd.workloads = []
    return found


def problem_where(problem: Any, fallback: Location) -> Location:
    return problem.location if isinstance(problem, _Problem) else fallback


@dataclass(slots=True)
class _Problem:
    message: str
    location: Location

    def __str__(self) -> str:
        return self.message


def _where(src: SourceFile, pd: ParsedDocument, path: DocPath) -> Location:
    line, col = key_line(pd.doc.root, path)
    return Location(src.path, line, col)


def _mentions_gpu(value: Any) -> bool:
    if isinstance(value, str):
        return any(p in value for p in prefilters.MIGRATION)

    return bool(gpu_keys_in(value))


def _refusal(
    obj: Any, concrete: DocPath, value: Any, entry: EmbeddedObject, depth: int, outer: Outer | None
) -> str | None:
    """Why the value at `concrete` is not migrated as an embedded object, or None."""
    if entry.only_if_key is not None:
        parent: Any = obj
        for seg in concrete[:-1]:
            parent = parent[seg]
        got = parent.get(entry.only_if_key) if isinstance(parent, dict) else None
        if got not in entry.only_if_values:
            shown = "absent" if got is None else repr(got)
            return (f"{entry.only_if_key} is {shown}, not one of {', '.join(entry.only_if_values)}: the controller "
                    "does not create it as a whole object (a patch or a lookup)")
    if depth > MAX_DEPTH:
        return f"embedded more than {MAX_DEPTH} objects deep"
    if entry.in_string:
        if not isinstance(value, str):
            return "not a string holding a manifest"
        if outer is not None and outer.in_string:
            return "a manifest string inside another manifest string"
        return None
    if not isinstance(value, dict) or not isinstance(value.get("apiVersion"), str) or not isinstance(
        value.get("kind"), str
    ):
        return "not an object with apiVersion and kind"
    return None


def _string_host(
    src: SourceFile, pd: ParsedDocument, path: DocPath, value: str
) -> tuple[StringHost | None, Any]:
    node, via_alias = find(pd.doc.root, path, pd.doc.aliased)
    if not isinstance(node, Scalar) or via_alias:
        return None, "the manifest is an alias or not a plain scalar"
    if node.style != "|":
        kind = {">": "a folded (>) block", "'": "a single-quoted string", '"': "a double-quoted string"}.get(
            node.style, "a plain multi-line string")
        return None, f"the manifest is {kind}, not a literal block (|): its lines cannot be edited in place"
    text = src.text
    header_end = text.find("\n", node.start)
    if header_end < 0 or header_end >= node.end:
        return None, "the manifest block is empty"
    header = text[node.start : header_end].split("#", 1)[0].strip().rstrip("\r")
    if "+" in header:
        return None, "the manifest block keeps its trailing blank lines (|+)"
    region_start = header_end + 1
    last = len(text[region_start : node.end].rstrip())
    if last == 0:
        return None, "the manifest block is empty"
    nl = text.find("\n", region_start + last)
    region_end = node.end if nl < 0 or nl >= node.end else nl + 1
    region = text[region_start:region_end]
    first = next(line for line in region.split("\n") if line.strip())
    indent = len(first) - len(first.lstrip(" "))
    line_no = src.line_col(region_start)[0] - 1
    pad = src.newline * line_no
    probe = StringHost(path, src, pd, region_start, len(pad), indent, "-" in header)
    if probe.value_of(pad + region) != node.value:
        return None, "the manifest block's lines could not be mapped to its value (indentation indicator?)"
    try:  # what kubectl reads
        real = [d for d in compose_documents(node.value) if d.root is not None]
    except ComposeError as exc:
        where = Location(src.path, line_no + max(exc.line, 1), exc.col + indent)
        why = " until Argo substitutes its {{...}} placeholders" if "{{" in node.value else ""
        return None, _Problem(f"the manifest is not valid YAML{why} ({exc.message})", where)
    if len(real) != 1:
        return None, f"the manifest holds {len(real)} documents, not one object"
    data = to_plain(real[0].root)
    if not isinstance(data, dict):
        return None, "the manifest is not an object"
    try:
        inner = parse_source(src.path, (pad + region).encode("utf-8"))
    except SourceError as exc:
        return None, _Problem(f"the manifest's lines cannot be edited in place ({exc.code}: {exc.message})",
                              Location(src.path, exc.line, exc.col))
    docs = [d for d in inner.documents if d.root is not None]
    if len(docs) != 1 or to_plain(docs[0].root) != data:
        return None, "the manifest's lines read differently inside the block than as the string kubectl applies"
    probe.src = inner
    probe.pd = PD(docs[0], data)
    return probe, None


# --- edits inside a string (pipeline) -----------------------------------------------------------------


class StringEditError(Exception):
    """The edits inside a manifest string would not give the intended object."""


def string_edits(host: StringHost, ops: list[Op], file_style: Style) -> tuple[list[TextEdit], Op]:
    """Outer-text edits for `ops` (paths in the host's document) and the op that states the new string for
    the self-check's expected data. Raises emit.patch.UnsupportedLayout or StringEditError."""
    src, doc = host.src, host.pd.doc
    style = detect_style(doc.root, src.newline, False, file_style, src.text)
    inner = Patcher(src.text, doc.root, style).apply(ops)
    if any(e.start < host.pad for e in inner):
        raise StringEditError("an edit falls before the manifest block")
    value = host.value_of(apply_edits(src.text, inner))
    expected = apply_ops(host.pd.data, ops)
    try:
        got = [to_plain(d.root) for d in compose_documents(value or "") if d.root is not None]
    except ComposeError as exc:
        raise StringEditError(f"the edited manifest does not parse ({exc.message})") from None
    if value is None or got != [expected]:
        raise StringEditError("the edited manifest string would not hold the migrated object")
    shifted = [replace(e, start=host.shift(e.start), end=host.shift(e.end)) for e in inner]
    return shifted, ReplaceValue(host.outer_path, value)
