"""Names of what the migration adds: valid, short, readable, and a function of what each object is for.

A ResourceClaimTemplate is named after the pod template it serves: `<workload>-gpu` for a workload's only GPU
pod template, `<workload>-<role>-gpu` for one of several (the role is what the template is within its object:
`leader`, `worker`, a replicated job's name; see lower.claimants). Names can only collide among objects applied
together (one kustomize build, one `kubectl apply -f DIR`: integrations.apply_units). When several of those
derive the same name, each of them is qualified, in steps that depend only on the colliding set: by its kind,
or by its file's path within the unit, or by its kind and a hash of its identity (`resolve`). So a name never
depends on which files a run was given, nor on the order it read them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

_INVALID = re.compile(r"[^a-z0-9-]+")
_LABEL = 63
_NOT_WORD = re.compile(r"[^a-z0-9.]+")


def dns_label(text: str, max_len: int = 63) -> str:
    s = _INVALID.sub("-", text.lower()).strip("-")
    s = re.sub("-{2,}", "-", s) or "x"
    if len(s) > max_len:
        digest = hashlib.sha256(text.encode()).hexdigest()[:6]
        s = s[: max_len - 7].rstrip("-") + "-" + digest
    if not s[0].isalpha():
        s = ("r-" + s)[:max_len].rstrip("-")
    return s


def dns_subdomain(text: str, max_len: int = 253) -> str:
    parts = [dns_label(p, 63) for p in text.lower().split(".") if p]
    s = ".".join(parts) or "x"
    if len(s) > max_len:
        digest = hashlib.sha256(text.encode()).hexdigest()[:6]
        s = s[: max_len - 7].rstrip("-.") + "-" + digest
    return s


def unique(base: str, taken: set[str], max_len: int = 63) -> str:
    if base not in taken:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        cand = base[: max_len - len(suffix)].rstrip("-") + suffix
        if cand not in taken:
            return cand
        n += 1


def words(text: str) -> list[str]:
    """The dash-separated words of a name part, normalised (`Leader_Worker` → ['leader', 'worker'])."""
    return [w for w in _NOT_WORD.split(text.lower()) if w.strip(".")]


def compose(*parts: str) -> str:
    """The one naming function: a DNS subdomain made of `parts` in order, each joined without repeating the
    words it starts with that the name so far ends with (`vllm-deployment` + `deployment` + `gpu` →
    `vllm-deployment-gpu`; `mindspore-gpu` + `gpu` → `mindspore-gpu`). A name longer than a DNS label (63) keeps
    what follows the first part (role, qualifiers, `gpu`) and the first part is cut, followed by a hash of the
    whole name, so two long names stay apart and still say what they are for."""
    out: list[str] = []
    for part in parts:
        new = words(part)
        overlap = next((k for k in range(min(len(out), len(new)), 0, -1) if out[-k:] == new[:k]), 0)
        out.extend(new[overlap:])
    text = "-".join(out)
    head_words = len(words(parts[0])) if parts else 0
    tail = "-".join(out[head_words:])
    room = _LABEL - len(tail) - 8  # two dashes and a 6-character hash
    if len(text) > _LABEL and "." not in text and tail and room >= 8:
        digest = hashlib.sha256(text.encode()).hexdigest()[:6]
        text = f"{'-'.join(out[:head_words])[:room].rstrip('-')}-{digest}-{tail}"
    return dns_subdomain(text)


# Where a pod template sits in its file: document index, its object's line, its PodSpec's path (claimants.key_of).
NameKey = tuple[int, int, tuple[Any, ...]]
UnitKey = tuple[str, str]  # ("build", kustomization root) | ("dir", directory) | ("file", path): see apply_units
Scopes = tuple[tuple[UnitKey, str | None], ...]  # each unit an entry is applied in, with its namespace there


@dataclass(frozen=True, slots=True)
class Claimant:
    """A pod template that has, or will get, a claim template of its own name: it asks for GPUs, or it
    already references a ResourceClaimTemplate (a migrated one keeps its name from being taken by another)."""

    key: NameKey
    kind: str
    name: str  # the workload's name
    namespace: str | None  # None: wherever it is applied
    role: tuple[str, ...]  # what the template is within its workload (empty for a workload's only one)
    where: str  # its file, as named within its apply unit (messages, the last qualifier)
    needs_name: bool  # it asks for GPUs: it gets a new claim template
    owns: frozenset[str] = frozenset()  # the claim templates it references already

    @property
    def ref(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"

    @property
    def place(self) -> str:
        """Its file within its apply unit, without the extension (`vllm-7b`, `overlays-prod-statefulset`)."""
        head, _, base = self.where.rpartition("/")
        return f"{head}/{base.rsplit('.', 1)[0] if '.' in base else base}".strip("/").replace("/", "-")


@dataclass(frozen=True, slots=True)
class Existing:
    """A ResourceClaimTemplate already in the repository: its name is taken, except for the pod templates
    that reference it (it is theirs, see `resolve`)."""

    name: str
    namespace: str | None
    where: str


# name, and why it is not the plain `<workload>[-<role>]-gpu` (None when it is)
Named = tuple[str, str | None]
FileNames = dict[NameKey, Named]

_KIND, _FILE, _HASH = 1, 2, 3  # the qualification steps, in order


def candidate(c: Claimant, level: int, tail: str = "gpu") -> str:
    """The name of `c` qualified up to `level` (0: plain)."""
    kind = c.kind.lower()
    if level == 0:
        return compose(c.name, *c.role, tail)
    if level == _KIND:
        return compose(c.name, kind, *c.role, tail)
    if level == _FILE:
        return compose(c.name, c.place, *c.role, tail)
    identity = repr((c.where, c.key, c.namespace, c.kind, c.name, c.role))
    return compose(c.name, kind, *c.role, tail, hashlib.sha256(identity.encode()).hexdigest()[:6])


def _overlap(a: Scopes, b: Scopes) -> bool:
    """Applied together somewhere, into the same namespace (a missing one is wherever it is applied)."""
    units = dict(a)
    return any(u in units and (ns is None or units[u] is None or ns == units[u]) for u, ns in b)


@dataclass(slots=True)
class _Entry:
    claimant: Claimant | None
    existing: Existing | None
    scopes: Scopes
    level: int = 0
    why: str | None = None

    def describe(self) -> str:
        if self.existing is not None:
            return f"an existing ResourceClaimTemplate ({self.existing.where})"
        assert self.claimant is not None
        return f"the claim template of {self.claimant.ref} ({self.claimant.where})"


def resolve(
    claimants: Sequence[tuple[Claimant, Scopes]], existing: Sequence[tuple[Existing, Scopes]] = (), tail: str = "gpu"
) -> list[Named]:
    """Every claimant's name (in the order given) among objects that may be applied together. Whenever names
    collide, every claimant of the colliding set goes up to the first qualification step that tells them apart
    (the existing names do not move); the steps only depend on that set, so the outcome is the same in whatever
    order it is given."""
    entries = [_Entry(c, None, s) for c, s in claimants]
    fixed = [_Entry(None, e, s) for e, s in existing]
    for _round in range(4 * len(entries) + 4):  # every round raises a level; levels stop at _HASH
        by_name: dict[str, list[_Entry]] = {}
        for e in entries:
            assert e.claimant is not None
            by_name.setdefault(candidate(e.claimant, e.level, tail), []).append(e)
        for f in fixed:
            assert f.existing is not None
            if f.existing.name in by_name:
                by_name[f.existing.name].append(f)
        moved = False
        for group in by_name.values():
            if len(group) > 1:
                for part in _colliding(group):
                    moved |= _qualify(part, tail)
        if not moved:
            break
    out: dict[int, Named] = {}
    taken: dict[str, list[_Entry]] = {}
    order = sorted(range(len(entries)), key=lambda i: (claimants[i][0].where, repr(claimants[i][0].key)))
    for i in order:
        e = entries[i]
        assert e.claimant is not None
        name = candidate(e.claimant, e.level, tail)
        if _clash(e, name, taken, fixed):  # a hash that collides: not expected, but a name must stay unique
            n = 2
            while _clash(e, f"{name}-{n}", taken, fixed):
                n += 1
            name = f"{name}-{n}"
        taken.setdefault(name, []).append(e)
        out[i] = (name, e.why if name != candidate(e.claimant, 0, tail) else None)
    return [out[i] for i in range(len(entries))]


def _clash(e: _Entry, name: str, taken: dict[str, list[_Entry]], fixed: list[_Entry]) -> bool:
    named = taken.get(name, []) + [f for f in fixed if f.existing is not None and f.existing.name == name]
    return any(_collide(e, o) for o in named)


def _collide(a: _Entry, b: _Entry) -> bool:
    if a.claimant is not None and b.existing is not None:
        return not _own(a.claimant, b.existing) and _overlap(a.scopes, b.scopes)
    if b.claimant is not None and a.existing is not None:
        return _collide(b, a)
    return a is not b and _overlap(a.scopes, b.scopes)


def _own(c: Claimant, e: Existing) -> bool:
    """A template the pod template references already is its own, unless it needs a new one beside it."""
    return e.name in c.owns and not c.needs_name


def _colliding(group: list[_Entry]) -> list[list[_Entry]]:
    """The connected sets of entries of one name that collide (pairwise collision is not transitive: two
    namespaces each collide with a namespace-less object, not with each other)."""
    parts: list[list[_Entry]] = []
    left = list(group)
    while left:
        part, todo = [], [left.pop(0)]
        while todo:
            cur = todo.pop()
            part.append(cur)
            near = [o for o in left if _collide(cur, o)]
            left = [o for o in left if o not in near]
            todo.extend(near)
        if len(part) > 1:
            parts.append(part)
    return parts


def _qualify(part: list[_Entry], tail: str) -> bool:
    movable = [e for e in part if e.claimant is not None and e.level < _HASH]
    if not movable:
        return False
    target = max(e.level for e in movable) + 1
    while target < _HASH and len({candidate(e.claimant, target, tail) for e in movable if e.claimant}) < len(movable):
        target += 1  # a step that would not tell them apart is skipped, so it cannot collide with a third
    for e in movable:
        if e.why is None:
            assert e.claimant is not None
            others = sorted(o.describe() for o in part if o is not e)[:3]
            e.why = (f"{candidate(e.claimant, e.level, tail)!r} would also be the name of "
                     f"{', '.join(others)}, applied together with it")
        e.level = target
    return True


@dataclass(slots=True)
class NameTable:
    """The run's pre-pass result (integrations.unit_names): the names of the pod templates of files whose apply
    unit holds other files with GPU workloads or claim templates. Any other file's names are its own business:
    they are resolved within the file, with its namespaces merged when a build puts all its objects in one."""

    files: dict[str, FileNames] = field(default_factory=dict)  # by the file's path as the run names it
    merged: set[str] = field(default_factory=set)
    parsed: int = 0  # files the pre-pass parsed

    def entry(self, path: str) -> FileEntry | None:
        """What the table says of one file (what a worker forked before the pre-pass is sent with it)."""
        if path in self.files:
            return ("names", self.files[path])
        return ("merged", None) if path in self.merged else None


# what a NameTable says of one file: its names, or that it is to be resolved with its namespaces merged
FileEntry = tuple[str, FileNames | None]


class TemplateNamer:
    """What a file's translation learns from the rest of the run: the names the pre-pass gave its pod templates
    (`file_names`, from RepoFacts.names), the existing claims (`reserve`) and the sharing pass's
    ResourceClaims, one per workload (`claim_name`). These three calls are all a file takes from the run, so a
    translation made elsewhere can be checked against this namer by making them again (perf.recording)."""

    def __init__(self, facts: Any = None) -> None:
        self.facts = facts  # the run's RepoFacts (RunContext binds it): the pre-pass's NameTable is there
        self.taken: dict[str, set[str]] = {}
        # (namespace, workload name, kind, suffix) -> the shared ResourceClaim name it got
        self.claims: dict[tuple[str, str, str, str], str] = {}

    def table_entry(self, path: str) -> FileEntry | None:
        """What the run's pre-pass says of the file at `path` (None: nothing, its names are its own)."""
        table = getattr(self.facts, "names", None)
        return table.entry(path) if isinstance(table, NameTable) else None

    def file_names(self, path: str, local: FileNames, local_merged: FileNames) -> FileNames:
        """The names of a file's pod templates: the pre-pass's, else `local` (resolved within the file), or
        `local_merged` (the same with its namespaces as one) for a file a build puts in one namespace."""
        entry = self.table_entry(path)
        return local if entry is None else local_merged if entry[1] is None else entry[1]

    def reserve(self, namespace: str | None, name: str) -> None:
        self.taken.setdefault(namespace or "", set()).add(name)

    def claim_name(self, namespace: str | None, workload_name: str, kind: str, suffix: str) -> str:
        """The name of a workload's shared ResourceClaim: `<workload>-<suffix>`, the same for every copy of
        that workload (the same kind, namespace and name: one app in several clusters' directories), so it
        does not depend on which other files the run holds; the kind is added only when another workload's
        name took it."""
        key = (namespace or "", workload_name, kind, suffix)
        name = self.claims.get(key)
        if name is None:
            taken = self.taken.setdefault(key[0], set())
            base = dns_subdomain(f"{workload_name}-{suffix}")
            if base in taken:
                base = dns_subdomain(f"{workload_name}-{kind.lower()}-{suffix}")
            name = self.claims[key] = unique(base, taken, 253)
            taken.add(name)
        return name
