"""Kind rules: where pod specs, bare containers and CR-specific GPU fields live in each workload kind.

The data lives in ``rules/kinds/*.yaml`` (validated by ``schemas/kind-rules.schema.json``); this module
loads it, lets callers look a kind up by ``apiVersion`` + ``kind`` and expands rule paths over plain data.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

from dra_migrate.ruleset import _paths

Path = tuple[str, ...]  # parsed path segments; "*" is the wildcard
WILDCARD = "*"

RULES_DIR = _paths.RULES_DIR
KINDS_DIR = _paths.rules_file("kinds")
SCHEMA_FILE = _paths.schema_file("kind-rules.schema.json")

RULE_ERROR_CODE = "DRA402"

# The C loader is several times faster and rule loading runs on every invocation that finds a GPU file.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class RuleError(Exception):
    """A rule file is unreadable, violates the schema, or contradicts another rule."""

    def __init__(self, message: str, file: str = "", line: int = 0, code: str = RULE_ERROR_CODE) -> None:
        self.code = code
        self.message = message
        self.file = file
        self.line = line  # 1-based; 0 = whole file
        where = f"{file}:{line}" if line > 0 else file
        super().__init__(f"{where}: {message}" if where else message)


@dataclass(frozen=True)
class GpuField:
    path: Path
    note: str


@dataclass(frozen=True)
class EmbeddedObject:
    """A whole object inside another one (see the schema's embeddedObject)."""

    path: Path
    note: str
    namespace: str  # "outer" or "own-or-outer"
    in_string: bool = False  # format yaml-string: the value is a string holding one YAML document
    only_if_key: str | None = None  # sibling key that must have one of only_if_values
    only_if_values: tuple[str, ...] = ()
    claims: tuple[str, str] | None = None  # (minVersion, note) when it differs from the rule's


@dataclass(frozen=True)
class KindRule:
    group: str
    kind: str
    versions: tuple[str, ...]  # empty = any version
    pod_specs: tuple[Path, ...]
    containers: tuple[Path, ...]
    gpu_fields: tuple[GpuField, ...]
    claims_min_version: str  # e.g. "v1.9.0" or "unknown"
    claims_note: str
    side_effects: tuple[str, ...]
    source: str  # "file:line" of the rule
    embedded: tuple[EmbeddedObject, ...] = ()
    # a cluster-scoped kind whose pods run in the namespaces of the objects that use it: where, for the message
    pods_run_in: str = ""

    def matches_version(self, version: str) -> bool:
        return not self.versions or version in self.versions


@dataclass(frozen=True)
class DocumentRule:
    """A document that is not a Kubernetes object, recognised by its top-level keys."""

    name: str
    keys: tuple[str, ...]
    gpu_fields: tuple[GpuField, ...]
    note: str
    source: str

    def matches(self, data: Mapping[str, Any]) -> bool:
        return all(k in data for k in self.keys)


@dataclass(frozen=True)
class NonWorkloadRule:
    group: str
    kind: str
    versions: tuple[str, ...]
    gpu_fields: tuple[GpuField, ...]
    note: str
    source: str
    side_effects: tuple[str, ...] = ()

    def matches_version(self, version: str) -> bool:
        return not self.versions or version in self.versions


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` → ("apps", "v1"); ``v1`` → ("", "v1")."""
    group, sep, version = api_version.strip().rpartition("/")
    return (group, version) if sep else ("", api_version.strip())


class KindRuleSet:
    """Rules keyed by (group, kind); one key may hold several rules for disjoint versions."""

    def __init__(
        self,
        kinds: Sequence[KindRule] = (),
        non_workloads: Sequence[NonWorkloadRule] = (),
        documents: Sequence[DocumentRule] = (),
    ) -> None:
        self._kinds: dict[tuple[str, str], list[KindRule]] = {}
        for rule in kinds:
            self._kinds.setdefault((rule.group, rule.kind), []).append(rule)
        self._non_workloads: dict[tuple[str, str], list[NonWorkloadRule]] = {}
        for nw in non_workloads:
            self._non_workloads.setdefault((nw.group, nw.kind), []).append(nw)
        self._documents = list(documents)

    def lookup(self, api_version: str, kind: str) -> KindRule | None:
        group, version = split_api_version(api_version)
        for rule in self._kinds.get((group, kind), ()):
            if rule.matches_version(version):
                return rule
        return None

    def lookup_non_workload(self, api_version: str, kind: str) -> NonWorkloadRule | None:
        group, version = split_api_version(api_version)
        for rule in self._non_workloads.get((group, kind), ()):
            if rule.matches_version(version):
                return rule
        return None

    def lookup_document(self, data: Mapping[str, Any]) -> DocumentRule | None:
        """The rule for a document without apiVersion/kind whose top-level keys it has."""
        return next((d for d in self._documents if d.matches(data)), None)

    def documents(self) -> list[DocumentRule]:
        return list(self._documents)

    def all(self) -> list[KindRule]:
        return [r for rules in self._kinds.values() for r in rules]

    def non_workloads(self) -> list[NonWorkloadRule]:
        return [r for rules in self._non_workloads.values() for r in rules]


# --- paths ------------------------------------------------------------------------------------------


def parse_path(text: str) -> Path:
    """``spec.a.*.[x.y].b`` → ("spec", "a", "*", "x.y", "b"). Raises ValueError on bad syntax."""
    segments: list[str] = []
    i, n = 0, len(text)
    if n == 0:
        raise ValueError("empty path")
    while True:
        if i < n and text[i] == "[":
            end = text.find("]", i + 1)
            if end < 0:
                raise ValueError(f"unclosed '[' in path {text!r}")
            seg = text[i + 1 : end]
            if not seg or "[" in seg:
                raise ValueError(f"bad bracketed key in path {text!r}")
            if seg == WILDCARD:
                # A literal "*" key would be indistinguishable from the wildcard in the parsed tuple.
                raise ValueError(f"'[*]' is not allowed in path {text!r}; write '*' for the wildcard")
            i = end + 1
        else:
            end = text.find(".", i)
            end = n if end < 0 else end
            seg = text[i:end]
            if not seg:
                raise ValueError(f"empty segment in path {text!r}")
            if "[" in seg or "]" in seg:
                raise ValueError(f"'[' must start a segment in path {text!r}")
            if WILDCARD in seg and seg != WILDCARD:
                raise ValueError(f"'*' must be a whole segment in path {text!r}")
            i = end
        segments.append(seg)
        if i == n:
            return tuple(segments)
        if text[i] != ".":
            raise ValueError(f"expected '.' after ']' in path {text!r}")
        i += 1
        if i == n:
            raise ValueError(f"trailing '.' in path {text!r}")


def format_path(path: Sequence[str | int]) -> str:
    """Inverse of parse_path for display; int segments (list indexes) are shown as [n]."""
    out: list[str] = []
    for seg in path:
        if isinstance(seg, int):
            out.append(f"[{seg}]")
        elif "." in seg or "[" in seg or "]" in seg:
            out.append(f".[{seg}]" if out else f"[{seg}]")
        else:
            out.append(f".{seg}" if out else seg)
    return "".join(out)


def resolve(data: object, path: Sequence[str]) -> list[tuple[tuple[str | int, ...], object]]:
    """Expand ``path`` over plain data: every concrete path (str keys, int list indexes) and its value.

    A concrete segment never indexes a list (rule paths name map keys); '*' iterates map values in order
    and list items by index. Missing keys and scalars along the way simply yield nothing.
    """
    results: list[tuple[tuple[str | int, ...], object]] = []

    def walk(node: object, i: int, prefix: tuple[str | int, ...]) -> None:
        if i == len(path):
            results.append((prefix, node))
            return
        seg = path[i]
        if seg == WILDCARD:
            if isinstance(node, Mapping):
                for key, child in node.items():
                    walk(child, i + 1, (*prefix, key))
            elif isinstance(node, list):
                for idx, child in enumerate(node):
                    walk(child, i + 1, (*prefix, idx))
        elif isinstance(node, Mapping) and seg in node:
            walk(node[seg], i + 1, (*prefix, seg))

    walk(data, 0, ())
    return results


# --- loading ----------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _validator() -> Any:
    # lazy: start-up (jsonschema: ~37 ms, only _validator() needs it)
    import jsonschema  # only rule packs given with --rules are validated at run time

    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    # check_schema (meta-validation) costs more than validating every rule file, so it runs in the tests.
    return jsonschema.Draft202012Validator(schema)


def _rule_files(directory: pathlib.Path) -> list[pathlib.Path]:
    if not directory.is_dir():
        raise RuleError("rule directory does not exist", str(directory))
    return sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def _node_at(root: yaml.Node, where: Sequence[str | int]) -> yaml.Node:
    """The deepest YAML node along a data path (for error lines)."""
    node = root
    for seg in where:
        if isinstance(node, yaml.MappingNode) and isinstance(seg, str):
            nxt = next((v for k, v in node.value if getattr(k, "value", None) == seg), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(seg, int) and seg < len(node.value):
            nxt = node.value[seg]
        else:
            nxt = None
        if nxt is None:
            break
        node = nxt
    return node


def _check_duplicate_keys(node: yaml.Node, file: str) -> None:
    # PyYAML keeps the last of duplicated keys silently; in a rule file that hides a mistake.
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen:  # aliases share nodes
            continue
        seen.add(id(n))
        if isinstance(n, yaml.MappingNode):
            keys: set[object] = set()
            for k, v in n.value:
                if k.value in keys:
                    raise RuleError(f"duplicate key {k.value!r}", file, k.start_mark.line + 1)
                keys.add(k.value)
                stack.append(v)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)


_Parsed = tuple[list[KindRule], list[NonWorkloadRule], list[DocumentRule]]


def _parse_file(path: pathlib.Path, validate: bool = True) -> _Parsed:
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(f"cannot read rule file: {exc}", file) from exc
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            raise RuleError("empty rule file", file)
        _check_duplicate_keys(root, file)
        data = loader.construct_document(root)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RuleError(f"invalid YAML: {exc}", file, mark.line + 1 if mark else 0) from exc
    finally:
        loader.dispose()

    errors = list(_validator().iter_errors(data)) if validate else []
    if errors:
        # lazy: start-up (jsonschema: ~37 ms, only _parse_file() needs it)
        import jsonschema

        err = jsonschema.exceptions.best_match(errors) or errors[0]
        where: list[str | int] = list(err.absolute_path)
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            # Point at the unexpected key itself rather than at the start of its mapping.
            allowed = err.schema.get("properties", {}) if isinstance(err.schema, dict) else {}
            where += [k for k in err.instance if k not in allowed][:1]
        line = _node_at(root, where).start_mark.line + 1
        at = format_path(where) or "(top level)"
        raise RuleError(f"schema violation at {at}: {err.message}", file, line)

    def line_of(*where: str | int) -> int:
        return int(_node_at(root, where).start_mark.line) + 1

    def paths(raw: Sequence[str], *where: str | int) -> tuple[Path, ...]:
        out: list[Path] = []
        for j, text_path in enumerate(raw):
            try:
                out.append(parse_path(text_path))
            except ValueError as exc:
                raise RuleError(str(exc), file, line_of(*where, j)) from exc
        return tuple(out)

    def gpu_fields(raw: Sequence[Mapping[str, str]], *where: str | int) -> tuple[GpuField, ...]:
        out: list[GpuField] = []
        for j, entry in enumerate(raw):
            try:
                out.append(GpuField(parse_path(entry["path"]), entry["note"]))
            except ValueError as exc:
                raise RuleError(str(exc), file, line_of(*where, j, "path")) from exc
        return tuple(out)

    def embedded(raw: Sequence[Mapping[str, Any]], *where: str | int) -> tuple[EmbeddedObject, ...]:
        out: list[EmbeddedObject] = []
        for j, entry in enumerate(raw):
            try:
                parsed = parse_path(entry["path"])
            except ValueError as exc:
                raise RuleError(str(exc), file, line_of(*where, j, "path")) from exc
            only_if = entry.get("onlyIf") or {}
            claims = entry.get("claimsSupport")
            out.append(
                EmbeddedObject(
                    parsed,
                    entry["note"],
                    entry["namespace"],
                    entry.get("format", "object") == "yaml-string",
                    only_if.get("key"),
                    tuple(only_if.get("in", ())),
                    (claims["minVersion"], claims["note"]) if claims else None,
                )
            )
        return tuple(out)

    kinds: list[KindRule] = []
    for i, r in enumerate(data.get("kinds", [])):
        claims = r["claimsSupport"]
        kinds.append(
            KindRule(
                group=r["group"],
                kind=r["kind"],
                versions=tuple(r.get("versions", ())),
                pod_specs=paths(r.get("podSpecs", ()), "kinds", i, "podSpecs"),
                containers=paths(r.get("containers", ()), "kinds", i, "containers"),
                gpu_fields=gpu_fields(r.get("gpuFields", ()), "kinds", i, "gpuFields"),
                claims_min_version=claims["minVersion"],
                claims_note=claims["note"],
                side_effects=tuple(r.get("sideEffects", ())),
                source=f"{file}:{line_of('kinds', i)}",
                embedded=embedded(r.get("embedded", ()), "kinds", i, "embedded"),
                pods_run_in=(r.get("clusterScoped") or {}).get("podsRunIn", ""),
            )
        )
    non_workloads: list[NonWorkloadRule] = []
    for i, r in enumerate(data.get("nonWorkloads", [])):
        non_workloads.append(
            NonWorkloadRule(
                group=r["group"],
                kind=r["kind"],
                versions=tuple(r.get("versions", ())),
                gpu_fields=gpu_fields(r["gpuFields"], "nonWorkloads", i, "gpuFields"),
                note=r["note"],
                source=f"{file}:{line_of('nonWorkloads', i)}",
                side_effects=tuple(r.get("sideEffects", ())),
            )
        )
    documents: list[DocumentRule] = []
    for i, r in enumerate(data.get("documents", [])):
        documents.append(
            DocumentRule(
                name=r["name"],
                keys=tuple(r["keys"]),
                gpu_fields=gpu_fields(r["gpuFields"], "documents", i, "gpuFields"),
                note=r["note"],
                source=f"{file}:{line_of('documents', i)}",
            )
        )
    return kinds, non_workloads, documents


def _check_document_names(rules: Sequence[DocumentRule]) -> None:
    seen: dict[str, DocumentRule] = {}
    for rule in rules:
        if rule.name in seen:
            file, _, line = rule.source.rpartition(":")
            raise RuleError(f"document rule {rule.name!r} repeats the one at {seen[rule.name].source}", file, int(line))
        seen[rule.name] = rule


def _check_overlaps(rules: Sequence[KindRule | NonWorkloadRule]) -> None:
    """Within one directory, two rules for the same (group, kind) must name disjoint versions."""
    by_key: dict[tuple[str, str], list[KindRule | NonWorkloadRule]] = {}
    for rule in rules:
        for other in by_key.get((rule.group, rule.kind), ()):
            if not rule.versions or not other.versions or set(rule.versions) & set(other.versions):
                file, _, line = rule.source.rpartition(":")
                raise RuleError(
                    f"rule for {rule.group or 'core'}/{rule.kind} overlaps the one at {other.source} "
                    "(same group and kind, overlapping versions)",
                    file,
                    int(line),
                )
        by_key.setdefault((rule.group, rule.kind), []).append(rule)


def _load_layer(directory: pathlib.Path, validate: bool) -> _Parsed:
    kinds: list[KindRule] = []
    non_workloads: list[NonWorkloadRule] = []
    documents: list[DocumentRule] = []
    for f in _rule_files(directory):
        k, nw, docs = _parse_file(f, validate)
        kinds += k
        non_workloads += nw
        documents += docs
    _check_overlaps(kinds)
    _check_overlaps(non_workloads)
    _check_document_names(documents)
    return kinds, non_workloads, documents


def _override(base: list[Any], layer: list[Any]) -> list[Any]:
    # A later layer replaces every earlier rule of the same (group, kind), whatever their versions.
    replaced = {(r.group, r.kind) for r in layer}
    return [r for r in base if (r.group, r.kind) not in replaced] + layer


def _signature(dirs: Sequence[pathlib.Path]) -> tuple[tuple[str, tuple[tuple[str, int, int], ...]], ...]:
    sig = []
    for d in dirs:
        files: Iterator[pathlib.Path] = iter(_rule_files(d))
        sig.append((str(d), tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in files)))
    return tuple(sig)


@lru_cache(maxsize=8)
def _load_cached(
    signature: tuple[tuple[str, tuple[tuple[str, int, int], ...]], ...], validate_builtin: bool
) -> KindRuleSet:
    kinds: list[KindRule] = []
    non_workloads: list[NonWorkloadRule] = []
    documents: list[DocumentRule] = []
    for n, (directory, _files) in enumerate(signature):
        k, nw, docs = _load_layer(pathlib.Path(directory), validate=n > 0 or validate_builtin)
        kinds = _override(kinds, k)
        non_workloads = _override(non_workloads, nw)
        replaced = {d.name for d in docs}  # a later layer replaces a document rule of the same name
        documents = [d for d in documents if d.name not in replaced] + docs
    return KindRuleSet(kinds, non_workloads, documents)


def load_kind_rules(
    extra_dirs: Sequence[pathlib.Path] = (), *, validate_builtin: bool = False
) -> KindRuleSet:
    """Built-in rules from ``<repo>/rules/kinds``, then each extra dir in order (later wins per group+kind).

    Extra (user) dirs are always schema-validated. The built-in files are validated by the test suite
    instead of on every run: schema validation costs ~10x the rest of loading.
    Results are cached per directory list and file mtimes/sizes, so repeated calls are cheap and edited
    rule files are picked up.
    """
    dirs = [KINDS_DIR, *(pathlib.Path(d).resolve() for d in extra_dirs)]
    return _load_cached(_signature(dirs), validate_builtin)
