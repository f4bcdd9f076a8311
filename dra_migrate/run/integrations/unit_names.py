"""The run's pre-pass for names: the names of pod templates whose apply unit holds other files with claimants.

A file's new ResourceClaimTemplates must not take a name another object of its apply unit (integrations.
apply_units) gets or has. Within the file that is the translation's own business (lower.claimants.local_names);
across files it needs the identities of the unit's other GPU workloads and claim templates, whether or not the
run was given those files: a pre-commit run on one staged file and a run over the whole repository must name its
objects the same. So for each file the run translates, the pre-pass finds the files applied with it (the whole
connected set of units, when a file is in several builds), keeps those that may need migration (the prefilter),
and only when there are two or more parses them and resolves their names together. The other files' names are
resolved within the file, as the translation does anyway.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dra_migrate.config import Options
from dra_migrate.frontend.workloads import build
from dra_migrate.lower.claimants import file_claimants
from dra_migrate.lower.names import Claimant, Existing, FileNames, NameTable, Scopes, UnitKey, resolve, words
from dra_migrate.ruleset import prefilters
from dra_migrate.ruleset.kinds import KindRuleSet
from dra_migrate.run.integrations.apply_units import ApplyUnits, discover_kustomizations, repository_root
from dra_migrate.source.filescan import DEFAULT_MAX_BYTES, scan
from dra_migrate.source.reader import is_helm_template_path, parse_source


@dataclass(slots=True)
class Seen:
    """What the run's read knows already: every path its walk yielded (as spelled), and the bytes of those
    that may need migration. Other files are read from disk when a unit holds them."""

    walked: set[str] = field(default_factory=set)
    hits: dict[str, bytes] = field(default_factory=dict)


@dataclass(slots=True)
class _Reader:
    seen: Seen
    max_bytes: int
    cache: dict[str, bytes | None] = field(default_factory=dict)
    parsed: int = 0  # files parsed (benchmarks, tests)
    cwd: str = field(default_factory=lambda: os.path.join(os.getcwd(), ""))

    def hit(self, path: str) -> bytes | None:
        """The bytes of `path` when it may need migration; None otherwise."""
        if path in self.cache:
            return self.cache[path]
        raw: bytes | None = None
        here = self.cwd
        spellings = (path, path[len(here):]) if path.startswith(here) else (path,)  # as a walk spells it
        walked = next((s for s in spellings if s in self.seen.walked), None)
        if walked is not None:
            raw = self.seen.hits.get(walked)
        else:
            kind, value = scan(path, self.max_bytes)
            if kind == "kept" and isinstance(value, bytes) and any(p in value for p in prefilters.MIGRATION_BYTES):
                raw = value
        self.cache[path] = raw
        return raw


class _Units:
    """The repository's apply units, and the claims files the run writes new objects to: all that goes to one
    claims file is applied together too, whatever unit its workload is in."""

    def __init__(self, units: ApplyUnits, targets: dict[str, str]) -> None:
        self.units, self.targets = units, targets
        self.sources: dict[str, list[str]] = {}
        for source, target in sorted(targets.items()):
            self.sources.setdefault(target, []).append(source)

    def units_of(self, f: str) -> list[tuple[UnitKey, str | None]]:
        out = self.units.units_of(f)
        for target in (self.targets.get(f), f if f in self.sources else None):
            if target is not None:
                out = [*out, (("claims", target), None)]
        return out

    def members(self, unit: UnitKey) -> list[str]:
        if unit[0] != "claims":
            return self.units.members(unit)
        return [*self.sources[unit[1]], *([unit[1]] if os.path.isfile(unit[1]) else [])]


def name_table(
    files: Sequence[tuple[str, str, bytes]],
    apply_units: ApplyUnits,
    rules: KindRuleSet,
    seen: Seen | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    claims_target: Callable[[str], str] | None = None,
    options: Options | None = None,
) -> NameTable:
    """files: (display path, absolute path, bytes) of each file the run translates; claims_target: where a
    file's new objects go when that is not the file itself (--claims-out), by absolute paths; options: the run's
    (the frontend reads the other files as the translation does)."""
    targets = {path: claims_target(path) for _d, path, _raw in files} if claims_target is not None else {}
    units = _Units(apply_units, targets)
    reader = _Reader(seen or Seen(), max_bytes)
    for _display, path, raw in files:
        reader.cache[path] = raw
    table = NameTable()
    display = {path: d for d, path, _raw in files}
    placed: set[str] = set()
    for _d, path, _raw in files:
        if path in placed:
            continue
        members, unit_keys = _component(path, units, reader)
        placed.update(members)
        related = _related(members, reader) if len(members) > 1 else set()
        for m in members - related:  # its names are its own: the translation resolves them within the file
            if m in display and any(ns is not None for _u, ns in units.units_of(m)):
                table.merged.add(display[m])
        if related:
            for member, names in _resolve(sorted(related), unit_keys, units, reader, rules, options).items():
                if member in display:
                    table.files[display[member]] = names
    table.parsed = reader.parsed
    return table


def _component(path: str, units: _Units, reader: _Reader) -> tuple[set[str], set[UnitKey]]:
    """The files that may need migration of every unit `path` is applied in, and of every unit those are
    applied in, and so on (a base applied in two overlays ties their names together)."""
    members, keys = {path}, set()
    todo = [path]
    while todo:
        f = todo.pop()
        for unit, _ns in units.units_of(f):
            if unit in keys:
                continue
            keys.add(unit)
            for m in units.members(unit):
                if m not in members and reader.hit(m) is not None and not is_helm_template_path(m):
                    members.add(m)
                    todo.append(m)
    return members, keys


_DOCUMENT = re.compile(r"^(?:---|\.\.\.)[^\S\r\n]*(?:#.*)?$", re.M)
_ROOT_KIND = re.compile(r"^kind\s*:", re.M)
_LIST_KIND = re.compile(r"^kind\s*:\s*['\"]?\w*List\b", re.M)
_METADATA = re.compile(r"^(\s*(?:-\s+)?)metadata\s*:(.*)$")
_NAME_KEY = re.compile(r"""^\s*["']?(?:generateName|name)["']?\s*:\s*(.*)$""")
_FLOW_NAME = re.compile(r"""(?:^|[{,\s])["']?(?:generateName|name)["']?\s*:\s*([^,}]*)""")
_LONG = 40  # a name this long may be cut (lower.names.compose): its file is compared with every other


def related(texts: Sequence[bytes]) -> set[int]:
    """The places of the texts whose claimants could get names that depend on another's (see _related)."""
    return {int(i) for i in _related_tokens({str(i): _metadata_names(t) for i, t in enumerate(texts)})}


def _related(members: set[str], reader: _Reader) -> set[str]:
    """The files whose claimants could share a name with another file's: every name a claimant can get starts
    with its workload's name word for word (lower.names.compose), so only files holding object names of which
    one starts with the other's words can interact. A file whose names its text does not show plainly is
    related to every other."""
    return _related_tokens({m: _metadata_names(reader.hit(m) or b"") for m in members})


def _related_tokens(tokens: dict[str, set[tuple[str, ...]] | None]) -> set[str]:
    if len(tokens) < 2:
        return set()
    if any(t is None for t in tokens.values()):
        return set(tokens)
    owners: dict[tuple[str, ...], set[str]] = {}
    for m, ts in tokens.items():
        for t in ts or ():
            owners.setdefault(t, set()).add(m)
    related: set[str] = set()
    for m, ts in tokens.items():
        for t in ts or ():
            for k in range(1, len(t) + 1):
                others = owners.get(t[:k], set()) - {m}
                if others:
                    related |= others | {m}
    return related


def _metadata_names(raw: bytes) -> set[tuple[str, ...]] | None:
    """The words of every object name in a block-YAML text (the `name:`/`generateName:` keys directly under a
    `metadata:` key at any depth, so objects embedded in others count too; `workload` for a document whose
    object has none, as lower.claimants names it), read line by line. None for what this reading cannot be
    sure of (JSON, a kind: List, flow or aliased metadata, a name written otherwise)."""
    text = raw.decode("utf-8", "replace")
    if text.lstrip("\ufeff \t\r\n").startswith(("{", "[")):
        return None
    out: set[tuple[str, ...]] = set()
    for doc in _DOCUMENT.split(text):
        if _ROOT_KIND.search(doc) is None:
            if "kind" in doc:
                return None
            continue
        if _LIST_KIND.search(doc) is not None:
            return None
        lines = doc.splitlines()
        root_named = False
        for i, line in enumerate(lines):
            m = _METADATA.match(line)
            if m is None:
                continue
            values = _metadata_values(lines, i, len(m.group(1)), m.group(2))
            if values is None:
                return None
            root_named = root_named or (not m.group(1) and bool(values))
            for value in values:
                name = _scalar(value)
                if name is None:
                    return None
                out.add(name or ("workload",))
        if not root_named:
            out.add(("workload",))
    return out


def _metadata_values(lines: list[str], at: int, indent: int, rest: str) -> list[str] | None:
    """The name values of the `metadata:` key on line `at` (its key at column `indent`)."""
    rest = rest.strip()
    if rest and not rest.startswith("#"):
        if not rest.startswith("{") or "}" not in rest:
            return None
        return list(_FLOW_NAME.findall(rest))
    values: list[str] = []
    child: int | None = None
    for line in lines[at + 1:]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        depth = len(line) - len(line.lstrip())
        if depth <= indent:
            break
        child = depth if child is None else child
        key = _NAME_KEY.match(line) if depth == child else None
        if key is not None:
            values.append(key.group(1))
    return values


def _scalar(value: str) -> tuple[str, ...] | None:
    """The words of a one-line scalar as YAML reads it; None when it is not plainly one."""
    value = value.strip()
    for prefix in ("&", "!"):  # an anchor or a tag before the value
        if value.startswith(prefix):
            value = value.partition(" ")[2].strip()
    if not value or value[0] in "*|>[{" or "\\" in value:
        return None
    if value[0] in "'\"":
        end = value.find(value[0], 1)
        if end < 0:
            return None
        value = value[1:end]
    else:
        value = re.split(r"\s#", value, maxsplit=1)[0].strip()
    return tuple(words(value)) if len(value) <= _LONG else None


def _resolve(members: list[str], keys: set[UnitKey], units: _Units, reader: _Reader, rules: KindRuleSet,
             options: Options | None) -> dict[str, FileNames]:
    common = os.path.commonpath([os.path.dirname(m) for m in members])
    claimants: list[tuple[str, Claimant, Scopes]] = []
    existing: list[tuple[Existing, Scopes]] = []
    for m in members:
        raw = reader.hit(m)
        assert raw is not None
        where = os.path.relpath(m, common).replace(os.sep, "/")
        try:
            fe = build(parse_source(where, raw), rules, options)
            found, there = file_claimants(fe.documents, rules, where)
        except Exception:  # noqa: BLE001 - a file the translation refuses has no names to take part with
            continue
        reader.parsed += 1
        applied = [(u, ns) for u, ns in units.units_of(m) if u in keys]

        def scopes(namespace: str | None, applied: list[tuple[UnitKey, str | None]] = applied) -> Scopes:
            return tuple((u, ns if ns is not None else namespace) for u, ns in applied)

        claimants.extend((m, c, scopes(c.namespace)) for c in found)
        existing.extend((e, scopes(e.namespace)) for e in there)
    named = resolve([(c, s) for _m, c, s in claimants], existing)
    out: dict[str, FileNames] = {}
    for (m, c, _s), n in zip(claimants, named, strict=True):
        out.setdefault(m, {})[c.key] = n
    return out


def run_table(
    given: Sequence[str],
    files: Sequence[tuple[str, str, bytes]],
    seen: Seen,
    kustomizations: dict[str, bytes],
    rules: KindRuleSet,
    max_bytes: int = DEFAULT_MAX_BYTES,
    claims_target: Callable[[str], str] | None = None,
    repository: bool = False,
    options: Options | None = None,
) -> NameTable:
    """The pre-pass of a run over the paths `given` (files, claims_target: see name_table; kustomizations: the
    ones its walk read, by absolute path). Overlays outside those paths may include the files: the
    kustomizations of each file's repository (its git checkout; outside one, only the run's own) are read too,
    unless the run walks the whole repository itself or `repository` says that `kustomizations` are all of the
    repository's already (a caller that walked it for other settings)."""
    given_dirs = [os.path.abspath(p) for p in given if p != "-" and os.path.isdir(p)]
    known: dict[str, str | None] = {}
    roots = {repository_root(os.path.dirname(path), known) for _d, path, _raw in files}
    found = dict(kustomizations)
    for root in sorted(r for r in roots if r is not None and not repository):
        if not any(root == g or root.startswith(os.path.join(g, "")) for g in given_dirs):
            for path, raw in discover_kustomizations(root).items():
                found.setdefault(path, raw)
    return name_table(files, ApplyUnits(found), rules, seen, max_bytes, claims_target, options)
