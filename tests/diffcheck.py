"""Minimal-diff oracle for one migrated file, independent of dra_migrate (it reads both texts with PyYAML only).

* `moved_lines`: every input line the line diff removes must belong to a node whose value changed or went away.
  A removed line whose node is unchanged is a reformat the migration did not mean: requoting, reindenting, a
  comment or a blank line dropped.
* `unexpected_changes`: after removing what a migration may change (GPU resource keys and the maps they empty,
  container claim references, `resourceClaims`, GPU node labels in nodeSelector and node affinity,
  `nvidia.com/gpu` tolerations, Ray's `num-gpus`), every document is equal before and after, and every added
  document holds only ResourceClaimTemplates and ResourceClaims. What the node selection and the claims now
  *mean* is the pod-equivalence oracle's business (tests/equivalence); this module checks that nothing else moved.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

CLAIM_KINDS = ("ResourceClaimTemplate", "ResourceClaim")
GPU_LABEL = re.compile(r"nvidia\.com/|gpu|accelerator", re.I)
GPU_RESOURCE = re.compile(r"^nvidia\.com/")
MISSING: Any = object()
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: same nodes and marks, faster
Path = tuple[str | int, ...]


@dataclass
class Doc:
    offset: int  # add to a mark's line to get the 0-based line in the file
    text: str  # the chunk the document was read from
    value: Any  # the parsed document; MISSING for a chunk that is not YAML (a template document)
    node: yaml.Node | None

    @property
    def first(self) -> int:
        return self.offset + (self.node.start_mark.line if self.node is not None else 0)


@dataclass(frozen=True)
class Item:
    path: Path
    start: int
    end: int
    flow: bool  # the value is a flow collection


# --- reading -----------------------------------------------------------------------------------------------------

def _decode(data: bytes) -> str:
    return data.decode("utf-8-sig")


def _chunks(text: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of every `---`-separated chunk."""
    lines = text.splitlines(keepends=True)
    start = 0
    for i, line in enumerate(lines):
        if i > start and re.match(r"---(\s|$)", line):
            yield start, "".join(lines[start:i])
            start = i
    yield start, "".join(lines[start:])


@lru_cache(maxsize=64)
def documents(data: bytes, name: str) -> list[Doc]:
    text = _decode(data)
    if name.endswith(".json"):
        import json

        return [Doc(0, text, json.loads(text), _compose_one(text))]
    try:
        nodes = list(yaml.compose_all(text, Loader=LOADER))
        values = list(yaml.load_all(text, Loader=LOADER))
    except yaml.YAMLError:
        out = []
        for first, chunk in _chunks(text):
            try:
                ns = list(yaml.compose_all(chunk, Loader=LOADER))
                vs = list(yaml.load_all(chunk, Loader=LOADER))
            except yaml.YAMLError:
                out.append(Doc(first, chunk, MISSING, None))
                continue
            out.extend(Doc(first, chunk, v, n) for n, v in zip(ns, vs, strict=True) if n is not None)
        return out
    return [Doc(0, text, v, n) for n, v in zip(nodes, values, strict=True) if n is not None]


def _compose_one(text: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=LOADER)
    except yaml.YAMLError:
        return None


def _end_line(node: yaml.Node, lines: list[str], first: int) -> int:
    """Last line a node occupies: a block collection ends where the next token starts."""
    line, col = node.end_mark.line + first, node.end_mark.column
    if line >= len(lines) or not lines[line][:col].strip():
        return max(line - 1, node.start_mark.line + first)
    return line


def items(doc: Doc, lines: list[str]) -> list[Item]:
    """Every mapping entry and sequence item of the document, with the lines it spans."""
    out: list[Item] = []

    def walk(node: yaml.Node, path: Path, offset: int) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else str(k.start_mark)
                p = (*path, key)
                out.append(Item(p, k.start_mark.line + offset, _end_line(v, lines, offset), _flow(v)))
                walk(v, p, offset)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                p = (*path, i)
                out.append(Item(p, v.start_mark.line + offset, _end_line(v, lines, offset), _flow(v)))
                walk(v, p, offset)

    if doc.node is not None:
        walk(doc.node, (), doc.offset)
    return out


def _flow(node: yaml.Node) -> bool:
    return isinstance(node, yaml.CollectionNode) and bool(node.flow_style)


def at(value: Any, path: Path) -> Any:
    for p in path:
        ok = p in value if isinstance(value, dict) else (
            isinstance(value, list) and isinstance(p, int) and 0 <= p < len(value))
        if not ok:
            return MISSING
        value = value[p]
    return value


# --- pairing the documents of both sides -------------------------------------------------------------------------

def _key(o: Any) -> tuple[str, str, str]:
    meta = o.get("metadata") if isinstance(o.get("metadata"), dict) else {}
    return str(o.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name"))


def _is_claim(o: Any) -> bool:
    return isinstance(o, dict) and o.get("kind") in CLAIM_KINDS


def _without_new_claims(value: Any, before_keys: set[tuple[str, str, str]]) -> Any:
    """A `kind: List` without the claim items the migration added."""
    if isinstance(value, dict) and value.get("kind") == "List" and isinstance(value.get("items"), list):
        kept = [i for i in value["items"] if not (_is_claim(i) and _key(i) not in before_keys)]
        return {**value, "items": kept}
    return value


def _objects(value: Any) -> list[Any]:
    if isinstance(value, dict) and value.get("kind") == "List":
        return [i for i in value.get("items") or [] if isinstance(i, dict)]
    return [value] if isinstance(value, dict) else []


def pair(before: list[Doc], after: list[Doc]) -> tuple[list[tuple[Doc, Doc, Any]], list[str]]:
    """(before doc, after doc, after value without added claims) per input document, and the problems."""
    keys = {_key(o) for d in before for o in _objects(d.value)}
    problems: list[str] = []
    kept: list[Doc] = []
    for d in after:
        objs = _objects(d.value)
        if objs and all(_key(o) not in keys for o in objs):
            problems.extend(f"line {d.first + 1}: added object {_key(o)} is not a claim"
                            for o in objs if not _is_claim(o))
            continue
        kept.append(d)
    if len(kept) != len(before):
        problems.append(f"{len(before)} input documents, {len(kept)} kept in the output (besides added claims)")
    if problems:
        return [], problems
    return [(b, a, _without_new_claims(a.value, keys)) for b, a in zip(before, kept, strict=True)], problems


# --- what a migration may change ---------------------------------------------------------------------------------

def _gpu_resources_only(m: Any) -> bool:
    return isinstance(m, dict) and all(GPU_RESOURCE.match(str(k)) for k in m)


def _strip_selection(aff: Any) -> Any:
    """Node affinity without GPU label expressions (terms and preferences that empty are dropped)."""
    if not isinstance(aff, dict):
        return aff

    def term(t: Any) -> Any:
        if not isinstance(t, dict):
            return t
        out = dict(t)
        exprs = [e for e in t.get("matchExpressions") or []
                 if not (isinstance(e, dict) and GPU_LABEL.search(str(e.get("key"))))]
        out.pop("matchExpressions", None)
        if exprs:
            out["matchExpressions"] = exprs
        return out

    out = dict(aff)
    req = aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, dict):
        terms = [term(t) for t in req.get("nodeSelectorTerms") or []]
        terms = [t for t in terms if t]
        out.pop("requiredDuringSchedulingIgnoredDuringExecution")
        if terms:
            out["requiredDuringSchedulingIgnoredDuringExecution"] = {**req, "nodeSelectorTerms": terms}
    pref = aff.get("preferredDuringSchedulingIgnoredDuringExecution")
    if isinstance(pref, list):
        kept = [{**p, "preference": term(p.get("preference"))} if isinstance(p, dict) else p for p in pref]
        kept = [p for p in kept if not isinstance(p, dict) or p.get("preference")]
        out.pop("preferredDuringSchedulingIgnoredDuringExecution")
        if kept:
            out["preferredDuringSchedulingIgnoredDuringExecution"] = kept
    return out


def normalized(value: Any) -> Any:
    """The value without anything a migration may change."""
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if isinstance(value, str) and "kind:" in value and "\n" in value:
        try:
            inner = yaml.safe_load(value)
        except yaml.YAMLError:
            return value
        return normalized(inner) if isinstance(inner, dict) and "kind" in inner else value
    if not isinstance(value, dict):
        return value
    out: dict[Any, Any] = {}
    for k, v in value.items():
        if k == "resourceClaims":
            continue
        if k == "resources" and isinstance(v, dict):
            v = {rk: ({n: q for n, q in rv.items() if not GPU_RESOURCE.match(str(n))}
                      if rk in ("limits", "requests") and isinstance(rv, dict) else rv)
                 for rk, rv in v.items() if rk != "claims"}
            v = {rk: rv for rk, rv in v.items() if rv != {}}
        elif k == "nodeSelector" and isinstance(v, dict):
            v = {n: s for n, s in v.items() if not GPU_LABEL.search(str(n))}
        elif k == "nodeAffinity":
            v = _strip_selection(v)
        elif k == "tolerations" and isinstance(v, list):
            v = [t for t in v if not (isinstance(t, dict) and GPU_RESOURCE.match(str(t.get("key"))))]
        elif k == "rayStartParams" and isinstance(v, dict):
            v = {n: s for n, s in v.items() if n != "num-gpus"}
        v = normalized(v)
        if v in ({}, []) and k in ("resources", "nodeSelector", "affinity", "nodeAffinity", "tolerations",
                                   "rayStartParams", "limits", "requests"):
            continue
        out[k] = v
    return out


def differences(a: Any, b: Any, path: Path = ()) -> list[Path]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[Path] = []
        for k in list(a) + [k for k in b if k not in a]:
            out.extend(differences(a.get(k, MISSING), b.get(k, MISSING), (*path, k)))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b, strict=True)) for p in differences(x, y, (*path, i))]
    return [] if a == b else [path]


def _label(path: Path) -> str:
    return ".".join(str(p) for p in path) or "(document)"


def unexpected_changes(before: bytes, after: bytes, name: str) -> list[str]:
    pairs, problems = pair(documents(before, name), documents(after, name))
    for b, a, value in pairs:
        if b.value is MISSING or a.value is MISSING:
            if b.text != a.text:
                problems.append(f"line {b.first + 1}: a document that is not YAML changed")
            continue
        for p in differences(normalized(b.value), normalized(value)):
            problems.append(f"line {b.first + 1}: {_label(p)} changed")
    return problems


# --- line-level check --------------------------------------------------------------------------------------------

def removed_lines(before: str, after: str) -> list[int]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    if a and b and not before.endswith(("\n", "\r")):
        # documents appended after a last line without a line break must give it one: not a rewrite
        eol = "\r\n" if "\r\n" in before else "\n"
        a[-1] += eol
        if not after.endswith(("\n", "\r")):
            b[-1] += eol
    out: list[int] = []
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            out.extend(range(i1, i2))
    return out


def moved_lines(before: bytes, after: bytes, name: str) -> tuple[list[str], list[str]]:
    """(problems, comments lost): removed input lines not explained by a changed node, and the comment text of
    removed lines that appears nowhere in the output."""
    text, out_text = _decode(before), _decode(after)
    if before.startswith(b"\xef\xbb\xbf") != after.startswith(b"\xef\xbb\xbf"):
        return ["the byte order mark changed"], []
    lines = text.splitlines(keepends=True)
    removed = removed_lines(text, out_text)
    if not removed:
        return [], []
    bdocs = documents(before, name)
    pairs, problems = pair(bdocs, documents(after, name))
    if problems:
        return problems, []
    spans: list[tuple[Doc, Any, list[Item]]] = [(b, v, items(b, lines)) for b, _a, v in pairs]
    lost = [c for i in removed if (c := _comment(lines[i])) and c not in out_text]
    bad: list[str] = []
    for i in removed:
        if not _explained(i, lines, spans):
            bad.append(f"line {i + 1} rewritten but its node is unchanged: {lines[i].rstrip()!r}")
    return bad, lost


def _comment(line: str) -> str | None:
    m = re.search(r"(?:^|\s)(#.*)$", line.rstrip("\r\n"))
    return m.group(1).strip() if m and m.group(1).strip() != "#" else None


def _explained(i: int, lines: list[str], spans: list[tuple[Doc, Any, list[Item]]]) -> bool:
    for doc, after_value, its in spans:
        if doc.node is not None and doc.node.start_mark.line + doc.offset <= i <= _end_line(doc.node, lines,
                                                                                             doc.offset):
            return doc.value is not MISSING and _line_explained(i, lines, doc.value, after_value, its)
    return False


def _line_explained(i: int, lines: list[str], before: Any, after: Any, its: list[Item]) -> bool:
    def changed(p: Path) -> bool:
        return at(before, p) != at(after, p)

    starting = [it for it in its if it.start == i]
    if starting:
        # a node on one line (or a flow collection) is its line: rewritten iff its value changed; the key line
        # of a block collection goes only with the key (or when the collection empties)
        return any(changed(it.path) if it.end == i or it.flow else at(after, it.path) in (MISSING, {}, [])
                   for it in starting)
    inside = [it for it in its if it.start < i <= it.end]
    if not inside:
        return False
    innermost = max(inside, key=lambda it: len(it.path)).path
    if not lines[i].strip() or lines[i].lstrip().startswith("#"):
        return at(after, innermost) in (MISSING, {}, [])  # a blank or comment line goes with its node only
    return changed(innermost)  # a continuation line: block scalar, multi-line flow collection
