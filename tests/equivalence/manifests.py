"""Reading a case: its objects, their documents' text, the pod specs in them and the diagnostics.

Pod specs are located with the kind rules (rules/kinds/*.yaml, plus a case's own rule packs): they are data
(where pod specs live in each kind), not translation code. Everything else here reads the YAML directly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO

Obj = dict[str, Any]
Key = tuple[str, str, str]  # kind, namespace, name
PathT = tuple[Any, ...]

# Device plugin resources (nvidia.md §B6): full GPUs, MIG mixed-strategy profiles, their `.shared` renames.
DP_RESOURCE = re.compile(r"^nvidia\.com/(?:gpu|mig-\d+g\.\d+gb(?:\.me)?)(?:\.shared)?$")
SEPARATOR = re.compile(r"^(---|\.\.\.)(\s|$)")


def mapping(value: Any) -> dict[str, Any]:
    """`value` if it is a mapping, else an empty one (manifests are untrusted)."""
    return value if isinstance(value, dict) else {}


def is_dp_resource(name: str) -> bool:
    return bool(DP_RESOURCE.match(name))


# --- documents ------------------------------------------------------------------------------------------------

def decode(data: bytes) -> str | None:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def split_documents(text: str) -> list[tuple[int, str]]:
    """(first line, raw text) of each YAML document; separator lines excluded, content after `---` kept."""
    docs: list[tuple[int, list[str]]] = [(1, [])]
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        m = SEPARATOR.match(line)
        if m:
            docs.append((number, []))
            rest = line[3:].strip()
            if m.group(1) == "---" and rest:
                docs[-1][1].append(rest + "\n")
        else:
            docs[-1][1].append(line)
    return [(first, "".join(lines)) for first, lines in docs]


class TolerantLoader(yaml.CSafeLoader):
    """SafeLoader that builds tagged nodes (custom !Tags, !!python/...) as plain data instead of failing:
    the oracle must see such workloads to check that they are refused."""


def _plain(loader: yaml.CSafeLoader, _suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


TolerantLoader.add_multi_constructor("!", _plain)
TolerantLoader.add_multi_constructor("tag:yaml.org,2002:python/", _plain)
TolerantLoader.add_constructor(None, lambda loader, node: _plain(loader, "", node))  # type: ignore[arg-type]

# The YAML core schema (YAML 1.2 §10.3); any other explicit tag is not plain Kubernetes data.
CORE_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "seq", "map")}


def foreign_tags(text: str) -> list[str]:
    """Explicit tags outside the core schema in one document's text."""
    out = []
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            tag = getattr(event, "tag", None)
            if tag and tag not in CORE_TAGS and tag != "!":
                out.append(str(tag))
    except yaml.YAMLError:
        pass
    return out


def _load(text: str, name: str) -> list[Any]:
    if name.endswith(".json"):
        try:
            return [json.loads(text)]
        except ValueError:
            return []
    try:
        return list(yaml.load_all(text, Loader=TolerantLoader))  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError:
        return []


def _expand(doc: Any) -> list[Obj]:
    if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
        return [i for i in doc["items"] if isinstance(i, dict)]
    return [doc] if isinstance(doc, dict) else []


def key_of(obj: Mapping[str, Any]) -> Key:
    meta = mapping(obj.get("metadata"))
    name = meta.get("name") or str(meta.get("generateName") or "").rstrip("-")  # as diagnostics name it
    return str(obj.get("kind")), str(meta.get("namespace") or ""), str(name)


@dataclass(frozen=True)
class Document:
    file: str
    text: str  # the document's own text (for the byte-identity property)
    objects: tuple[Obj, ...]
    first_line: int = 1
    last_line: int = 1

    def holds_line(self, line: int) -> bool:
        return self.first_line <= line <= self.last_line


def documents(name: str, data: bytes) -> list[Document]:
    """The documents of one file, each parsed on its own (a broken neighbour does not hide a workload)."""
    text = decode(data)
    if text is None:
        return []
    if name.endswith(".json"):
        objs = tuple(o for d in _load(text, name) for o in _expand(d))
        return [Document(name, text, objs, 1, text.count("\n") + 1)]
    out = []
    for first, raw in split_documents(text):
        objs = tuple(o for d in _load(raw, name) for o in _expand(d))
        out.append(Document(name, raw, objs, first, first + raw.count("\n")))
    return out


# --- kind rules -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class KindRule:
    group: str
    kind: str
    versions: tuple[str, ...]
    pod_specs: tuple[str, ...]
    containers: tuple[str, ...]


def _rules_from(path: Path) -> list[KindRule]:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader) or {}
    return [
        KindRule(str(r["group"]), str(r["kind"]), tuple(r.get("versions") or ()),
                 tuple(r.get("podSpecs") or ()), tuple(r.get("containers") or ()))
        for r in data.get("kinds") or []
    ]


@cache
def kind_rules(extra_dirs: tuple[Path, ...] = ()) -> tuple[KindRule, ...]:
    files = sorted((REPO / "rules" / "kinds").glob("*.yaml"))
    for d in extra_dirs:
        files.extend(sorted(d.glob("*.yaml")))
    return tuple(r for f in files for r in _rules_from(f))


def _segments(path: str) -> list[str]:
    return [s[1:-1] if s.startswith("[") else s for s in re.findall(r"\[[^\]]+\]|[^.]+", path)]


def resolve(node: Any, path: str) -> Iterator[tuple[PathT, Any]]:
    """Every (concrete path, value) a rule path ('*' = any key or index) reaches."""
    def walk(n: Any, segs: list[str], at: PathT) -> Iterator[tuple[PathT, Any]]:
        if not segs:
            yield at, n
            return
        head, rest = segs[0], segs[1:]
        if head == "*":
            items = n.items() if isinstance(n, dict) else enumerate(n) if isinstance(n, list) else []
            for k, v in items:
                yield from walk(v, rest, (*at, k))
        elif isinstance(n, dict) and head in n:
            yield from walk(n[head], rest, (*at, head))
    yield from walk(node, _segments(path), ())


def rule_for(obj: Mapping[str, Any], rules: Sequence[KindRule]) -> KindRule | None:
    api = str(obj.get("apiVersion") or "")
    group, _, version = api.rpartition("/")
    for r in rules:
        if r.kind == obj.get("kind") and r.group == group and (not r.versions or version in r.versions):
            return r
    return None


def at(node: Any, path: PathT) -> Any:
    for seg in path:
        node = node[seg]
    return node


@dataclass
class PodTemplate:
    """One pod spec of a workload object, with the containers the kind keeps outside `containers`."""

    path: PathT
    spec: Obj  # the pod spec mapping (resourceClaims, nodeSelector, ... live here)
    extra_containers: list[PathT] = field(default_factory=list)  # absolute paths of bare containers

    def containers(self, obj: Obj) -> list[tuple[str, Obj]]:
        """(role, container): role is 'app', 'init' or 'sidecar' (restartable init container)."""
        out: list[tuple[str, Obj]] = []
        for c in self.spec.get("initContainers") or []:
            if isinstance(c, dict):
                out.append(("sidecar" if c.get("restartPolicy") == "Always" else "init", c))
        out.extend(("app", c) for c in self.spec.get("containers") or [] if isinstance(c, dict))
        out.extend(("app", at(obj, p)) for p in self.extra_containers)
        return out


def pod_templates(obj: Obj, rules: Sequence[KindRule]) -> tuple[list[PodTemplate], list[PathT]]:
    """The object's pod specs and its bare containers that have no pod spec to hold claims."""
    rule = rule_for(obj, rules)
    if rule is None:
        return [], []
    specs = [PodTemplate(p, v) for ps in rule.pod_specs for p, v in resolve(obj, ps) if isinstance(v, dict)]
    bare: list[PathT] = []
    for cp in rule.containers:
        for p, v in resolve(obj, cp):
            if not isinstance(v, dict):
                continue
            owners = [s for s in specs if p[: len(s.path)] == s.path]
            if owners:
                max(owners, key=lambda s: len(s.path)).extra_containers.append(p)
            else:
                bare.append(p)
    return specs, bare


# --- container resources ----------------------------------------------------------------------------------------

class BadCount(ValueError):
    """A GPU count the API server or the device plugin would not take as a whole number of devices."""


_QUANTITY = re.compile(r"\+?(\d+(?:\.\d*)?|\.\d+)(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?")
_SUFFIX = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": Decimal(10**3),
           "M": Decimal(10**6), "G": Decimal(10**9), "T": Decimal(10**12), "P": Decimal(10**15),
           "E": Decimal(10**18), **{s: Decimal(2 ** (10 * (i + 1))) for i, s in enumerate(
               ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))}}


def whole_quantity(value: Any) -> int | None:
    """An extended-resource count as the API server validates it (a quantity whose MilliValue is a multiple of
    1000, not negative: validation.go ValidateResourceQuantityValue) and the kubelet reads it (Quantity.Value():
    "2000m" and "1e1" are 2 and 10 devices); None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value) if value >= 0 and float(value).is_integer() else None
    m = _QUANTITY.fullmatch(str(value).strip())
    if m is None:
        return None
    q = Decimal(m[1]) * (Decimal(10) ** int(m[2]) if m[2] else _SUFFIX.get(m[3] or "", Decimal(1)))
    return int(q) if q == q.to_integral_value() else None


def dp_limits(container: Mapping[str, Any]) -> dict[str, int]:
    """Device plugin resources of one container. The kubelet allocates from limits; an extended resource
    may give requests only when they equal the limits, so requests are read only where limits lack it."""
    res = mapping(container.get("resources"))
    out: dict[str, int] = {}
    for section in ("requests", "limits"):  # limits win
        for k, v in mapping(res.get(section)).items():
            if not is_dp_resource(str(k)):
                continue
            n = whole_quantity(v)
            if n is None:
                raise BadCount(f"{k}={v!r}")
            out[str(k)] = n
    return {k: v for k, v in out.items() if v}


def requests_dp(container: Mapping[str, Any]) -> bool:
    res = mapping(container.get("resources"))
    return any(is_dp_resource(str(k)) for section in ("requests", "limits") for k in mapping(res.get(section)))


# --- diagnostics ------------------------------------------------------------------------------------------------

DIAG = re.compile(
    # a whole-file diagnostic (DRA105, DRA103) has no line: it is line 0
    r"^(?P<file>[^:\n]+)(?::(?P<line>\d+):(?P<col>\d+))?: (?P<sev>error|warning|info) (?P<code>DRA\d+)"
    r"(?: \[(?P<obj>[^\]]+)\])?: (?P<msg>.*)$"
)


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    severity: str
    code: str
    obj: str | None  # "Kind/name" or "Kind/namespace/name"
    message: str

    def names(self, key: Key) -> bool:
        kind, ns, name = key
        return self.obj in ({f"{kind}/{name}"} if not ns else {f"{kind}/{ns}/{name}", f"{kind}/{name}"})


def parse_diagnostics(text: str) -> list[Diagnostic]:
    out = []
    for line in text.splitlines():
        m = DIAG.match(line)
        if m:
            out.append(Diagnostic(m["file"], int(m["line"] or 0), m["sev"], m["code"], m["obj"], m["msg"]))
    return out
