"""kustomize: what a kustomization file says (resources, components, patches, name transformers), and minimal
text edits of it through the core's patcher and self-check."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.emit.edits import apply_edits
from dra_migrate.emit.patch import Patcher, UnsupportedLayout
from dra_migrate.emit.style import detect_style
from dra_migrate.ir import DocPath
from dra_migrate.plan import apply_ops
from dra_migrate.run.integrations.kustomize_edit import append_ops
from dra_migrate.source.compose import ComposeError, compose_documents
from dra_migrate.source.discover import KUSTOMIZATION_NAMES
from dra_migrate.source.helm import gpu_key_lines, gpu_text_lines
from dra_migrate.source.nodes import Scalar, find, key_line
from dra_migrate.source.plain import to_plain
from dra_migrate.source.reader import SourceError, parse_source
from dra_migrate.source.realpaths import real_dir, real_join

PATCH_FIELDS = ("patchesStrategicMerge", "patches", "patchesJson6902")  # the order kustomize applies them in
# Fields that change a build in ways the patch analysis does not model (kustomize's own OpenAPI, plugins).
UNMODELLED_FIELDS = ("openapi", "crds", "transformers", "validators")


@dataclass(slots=True)
class PatchEntry:
    """One patch of a kustomization: a file (`path`) or inline text (`text`), with its optional target."""

    field: str  # patches | patchesStrategicMerge | patchesJson6902
    index: int  # position in that list
    line: int  # 1-based line of the entry in the kustomization
    path: Path | None  # resolved patch file
    text: str | None  # inline patch text
    target: dict[str, Any] | None
    entry: str  # as written (the path, or "inline")

    @property
    def doc_path(self) -> DocPath:
        """Where the inline text is in the kustomization document."""
        if self.field == "patchesStrategicMerge":
            return (self.field, self.index)
        return (self.field, self.index, "patch")

    def where(self, display: str) -> str:
        return f"{display}:{self.line}" if self.line else display


@dataclass(slots=True, eq=False)
class Kustomization:
    path: Path  # the file, in a real directory (symbolic links resolved) when a BuildIndex holds it
    display: str
    data: dict[str, Any]
    text: str
    kind: str = "Kustomization"  # or Component
    resources: list[tuple[str, Path, int]] = field(default_factory=list)  # (entry, resolved, line); dirs too
    components: list[tuple[str, Path, int]] = field(default_factory=list)
    patches: list[PatchEntry] = field(default_factory=list)
    configurations: list[Path] = field(default_factory=list)
    unmodelled: list[str] = field(default_factory=list)

    @property
    def dir(self) -> Path:
        return self.path.parent

    @property
    def patch_files(self) -> dict[Path, PatchEntry]:
        return {p.path: p for p in self.patches if p.path is not None}

    @property
    def name_prefix(self) -> str:
        return str(self.data.get("namePrefix") or "")

    @property
    def name_suffix(self) -> str:
        return str(self.data.get("nameSuffix") or "")

    @property
    def namespace(self) -> str | None:
        ns = self.data.get("namespace")
        return str(ns) if ns else None


def find_kustomization(directory: Path) -> Path | None:
    for name in KUSTOMIZATION_NAMES:
        f = directory / name
        if f.is_file():
            return f
    return None


def is_remote(entry: str) -> bool:
    return "://" in entry or entry.startswith(("git@", "github.com/", "gitlab.com/", "bitbucket.org/"))


def load(path: Path, display: str, raw: bytes | None = None) -> Kustomization | None:
    """The kustomization at `path` (its bytes if the run read them), or None when it is not one."""
    try:
        text = (raw if raw is not None else path.read_bytes()).decode("utf-8").removeprefix("\ufeff")
        docs = compose_documents(text)
    except (OSError, UnicodeDecodeError, ComposeError):
        return None
    if len(docs) != 1:
        return None
    root = docs[0].root
    data = to_plain(root)
    if not isinstance(data, dict):
        return None
    k = Kustomization(path, display, data, text, kind=str(data.get("kind") or "Kustomization"))
    here = path.parent

    def line(p: DocPath) -> int:
        return key_line(root, p)[0]

    for key in ("resources", "bases"):
        for i, entry in enumerate(data.get(key) or [] if isinstance(data.get(key), list) else []):
            if isinstance(entry, str) and not is_remote(entry):
                k.resources.append((entry, _resolve(here, entry), line((key, i))))
    components = data.get("components")
    for i, entry in enumerate(components if isinstance(components, list) else []):
        if isinstance(entry, str) and not is_remote(entry):
            k.components.append((entry, _resolve(here, entry), line(("components", i))))
    configurations = data.get("configurations")
    for entry in configurations if isinstance(configurations, list) else []:
        if isinstance(entry, str):
            k.configurations.append(_resolve(here, entry))
    for fld in PATCH_FIELDS:
        entries = data.get(fld)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            patch = _patch_entry(fld, i, entry, here, line((fld, i)))
            if patch is not None:
                k.patches.append(patch)
    replicas = data.get("replicas")
    for i, entry in enumerate(replicas if isinstance(replicas, list) else []):
        patch = _replicas_entry(i, entry, line(("replicas", i)))
        if patch is not None:
            k.patches.append(patch)
    k.unmodelled = [f for f in UNMODELLED_FIELDS if data.get(f)]
    return k


def _replicas_entry(i: int, entry: Any, line: int) -> PatchEntry | None:
    """A `replicas:` entry ({name, count}) as the patch kustomize's replica count transformer makes of it: it
    sets spec.replicas of the objects of that name (original or current), after the patches. Modelled so
    that the pods a workload runs at once in the built output are what the migration sizes shared claims for."""
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        return None
    count = entry.get("count")
    if not isinstance(count, int) or isinstance(count, bool):
        return None
    text = json.dumps([{"op": "add", "path": "/spec/replicas", "value": count}])
    return PatchEntry("replicas", i, line, None, text, {"name": re.escape(entry["name"])}, "replicas")


def _resolve(here: Path, entry: str) -> Path:
    """os.path.realpath(here / entry), `here`'s part cached (a repository's kustomizations share directories)."""
    return Path(real_join(real_dir(os.fspath(here)), entry))


def _patch_entry(fld: str, i: int, entry: Any, here: Path, line: int) -> PatchEntry | None:
    if fld == "patchesStrategicMerge":
        if not isinstance(entry, str):
            return None
        if "\n" in entry.strip():  # an inline patch: a string holding YAML
            return PatchEntry(fld, i, line, None, entry, None, "inline")
        return PatchEntry(fld, i, line, _resolve(here, entry.strip()), None, None, entry.strip())
    if not isinstance(entry, dict):
        return None
    target = entry.get("target") if isinstance(entry.get("target"), dict) else None
    if isinstance(entry.get("path"), str):
        return PatchEntry(fld, i, line, _resolve(here, entry["path"]), None, target, entry["path"])
    if isinstance(entry.get("patch"), str):
        return PatchEntry(fld, i, line, None, entry["patch"], target, "inline")
    return None


# --- reports of patches left as they are -------------------------------------------------------------


def inline_patch_mentions(k: Kustomization, entry: PatchEntry, why: str, code: str = "DRA702") -> list[Diagnostic]:
    """A diagnostic (DRA702: it stays as it is) for each GPU resource an inline patch sets: a key, or a JSON 6902
    path naming one. Only the patch's own YAML code counts: comments and block-scalar strings inside it (a
    ConfigMap's data) are never a request, nor is the rest of the kustomization."""
    return [make(code, f"inline kustomize patch sets {resource}: {why}", Location(k.display, line, col))
            for line, col, resource in _inline_mentions(k, entry)]


def _inline_mentions(k: Kustomization, entry: PatchEntry) -> list[tuple[int, int, str]]:
    try:
        docs = compose_documents(k.text)
    except ComposeError:
        return []
    node, _ = find(docs[0].root if docs else None, entry.doc_path)
    if not isinstance(node, Scalar):
        return []
    if node.style not in ("|", ">"):  # a quoted or plain one-line patch: reported at the scalar's line
        return [(node.line + 1, node.col + 1, r) for _n, _c, r in patch_gpu_lines(node.value)]
    lines = k.text.splitlines()
    first = node.line + 1  # the patch's own lines: after the indicator line, to the scalar's end
    last = k.text.count("\n", 0, max(node.start, node.end - 1))
    body = lines[first:last + 1]
    indent = min((len(b) - len(b.lstrip(" ")) for b in body if b.strip()), default=0)
    snippet = "\n".join(b[indent:] for b in body)
    return [(first + n, col + indent, r) for n, col, r in patch_gpu_lines(snippet)]


def patch_gpu_lines(text: str) -> list[tuple[int, int, str]]:
    """GPU resources a patch sets: keys, else (a JSON 6902 patch) names in its path strings; comments and block
    scalars skipped."""
    return list(gpu_key_lines(text)) or list(gpu_text_lines(text))


def patch_file_mentions(display: str, raw: bytes, where: str, why: str, code: str = "DRA701") -> list[Diagnostic]:
    """A diagnostic (DRA701: it stays as it is) for each GPU key in a patch file listed at `where`."""
    return [
        make(code, f"{key} in a kustomize patch (listed at {where}): {why}", Location(display, line, col),
             resource=key)
        for line, col, key in patch_gpu_lines(raw.decode("utf-8", "replace"))
    ]


# --- edits ---------------------------------------------------------------------------------------------


def append_entries(raw: bytes, display: str, additions: dict[str, list[Any]]) -> tuple[bytes, bytes] | str:
    """(old, new) bytes of a kustomization with each of `additions` appended to its list (created when absent),
    entries already there skipped; or the reason it cannot be done. A minimal text edit through the core's
    patcher, checked by re-parsing the result."""
    return edit_document(raw, display, lambda data: append_ops(data, additions))


def add_resource(kustomization: Path, entry: str) -> tuple[bytes, bytes] | str:
    """(old, new) bytes of the kustomization with `entry` in `resources:`, or a reason it cannot be done."""
    return append_entries(kustomization.read_bytes(), str(kustomization), {"resources": [entry]})


def edit_document(raw: bytes, display: str, make_ops: Any) -> tuple[bytes, bytes] | str:
    """Apply `make_ops(data)` (a list of plan ops, or a reason) to a one-document YAML file as text edits.
    The result is re-parsed and must equal the ops applied to the data; anything else is a reason."""
    try:
        src = parse_source(display, raw)
    except SourceError as exc:
        return exc.message
    if len(src.documents) != 1 or src.documents[0].root is None:
        return "not a single YAML document"
    root = src.documents[0].root
    data = to_plain(root)
    if not isinstance(data, (dict, list)):
        return "not a mapping"
    ops = make_ops(data)
    if isinstance(ops, str):
        return ops
    if not ops:
        return raw, raw
    style = detect_style(root, src.newline, src.is_json, None, src.text)
    try:
        text = apply_edits(src.text, Patcher(src.text, root, style).apply(ops))
    except UnsupportedLayout as exc:
        return exc.message
    try:
        after = [to_plain(d.root) for d in compose_documents(text)]
    except ComposeError as exc:
        return f"self-check failed: the edited file does not parse ({exc.message})"
    if after != [apply_ops(data, ops)]:
        return "self-check failed: the edit changed more than intended"
    return raw, (("\ufeff" if src.bom else "") + text).encode("utf-8")
