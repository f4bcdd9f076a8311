"""Target Kubernetes versions: served resource.k8s.io versions, DRA feature gates and the CEL environment.

The facts live in rules/features.yaml (validated by schemas/features.schema.json); this module only interprets
them. A `Target` answers "may the compiler emit X for this cluster?" for one release and optional gate
overrides.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from dra_migrate.ruleset._paths import rules_file, schema_file
from dra_migrate.ruleset.targets import DEFAULT_TARGET as DEFAULT_TARGET  # re-exported: the releases live in targets
from dra_migrate.ruleset.targets import SUPPORTED_VERSIONS as SUPPORTED_VERSIONS

API_GROUP = "resource.k8s.io"

RULES_FILE = rules_file("features.yaml")
SCHEMA_FILE = schema_file("features.schema.json")

Version = tuple[int, int]
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class FeatureDataError(Exception):
    """rules/features.yaml is malformed or inconsistent."""


class FeatureGateError(ValueError):
    """A --feature-gates value could not be understood."""


class UnknownFeatureError(KeyError):
    """A feature or gate name that features.yaml does not define."""

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0]) if self.args else ""


def parse_version(text: str) -> Version:
    """'1.34', 'v1.34', '1.34.2' → (1, 34)."""
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?", text.strip())
    if not m:
        raise ValueError(f"not a Kubernetes version: {text!r} (expected e.g. 1.34)")
    return int(m.group(1)), int(m.group(2))


def normalize_version(text: str) -> str:
    major, minor = parse_version(text)
    return f"{major}.{minor}"


# --- data model ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GateState:
    stage: str  # absent | alpha | beta | ga | deprecated
    default: bool
    locked: bool


_ABSENT = GateState("absent", False, False)


@dataclass(frozen=True, slots=True)
class GateSpec:
    name: str
    depends_on: tuple[str, ...]
    history: tuple[tuple[Version, GateState], ...]  # ascending by version

    def state_at(self, version: Version) -> GateState:
        current = _ABSENT
        for since, state in self.history:
            if since <= version:
                current = state
        return current


@dataclass(frozen=True, slots=True)
class FeatureSpec:
    name: str
    gate: str
    fields: tuple[str, ...]
    summary: str


@dataclass(frozen=True, slots=True)
class CelFunction:
    name: str
    arity: int | None  # None = any number of arguments


@dataclass(frozen=True, slots=True)
class CelLibrary:
    name: str
    introduced: Version
    new_from: Version | None
    new_until: Version | None
    gate: str | None
    functions: tuple[CelFunction, ...]


@dataclass(frozen=True, slots=True)
class TargetData:
    version: str
    served: tuple[str, ...]
    emit: str
    request_shape: str
    reserved_for_limit: int


@dataclass(frozen=True, slots=True)
class ApiVersionInfo:
    name: str
    introduced: Version
    deprecated: Version | None
    removed: Version | None
    enabled_by_default: bool


@dataclass(frozen=True)
class Features:
    default_target: str
    api_versions: dict[str, ApiVersionInfo]
    targets: dict[str, TargetData]
    limits: dict[str, int]
    gates: dict[str, GateSpec]
    features: dict[str, FeatureSpec]
    cel_libraries: dict[str, CelLibrary]
    # every function name known to any library → libraries offering it
    cel_index: dict[str, tuple[tuple[CelLibrary, int | None], ...]] = field(repr=False)

    def gate_for(self, name: str) -> str:
        """Resolve a feature name ('firstAvailable') or a gate name ('DRAPrioritizedList') to the gate."""
        if name in self.gates:
            return name
        if name in self.features:
            return self.features[name].gate
        known = sorted([*self.gates, *self.features])
        hint = difflib.get_close_matches(name, known, n=1)
        suffix = f"; did you mean {hint[0]!r}?" if hint else ""
        raise UnknownFeatureError(f"unknown DRA feature or feature gate {name!r}{suffix}")


# --- loading ------------------------------------------------------------------------------------------------


def _opt_version(data: Mapping[str, Any], key: str) -> Version | None:
    return parse_version(data[key]) if key in data else None


def _next_minor(v: Version) -> Version:
    return v[0], v[1] + 1


def _build(raw: dict[str, Any]) -> Features:
    errors: list[str] = []
    api_versions = {
        name: ApiVersionInfo(
            name,
            parse_version(d["introduced"]),
            _opt_version(d, "deprecated"),
            _opt_version(d, "removed"),
            d["enabled_by_default"],
        )
        for name, d in raw["api_versions"].items()
    }
    targets: dict[str, TargetData] = {}
    for ver, d in raw["targets"].items():
        targets[ver] = TargetData(
            ver, tuple(d["served"]), d["emit"], d["request_shape"], d["reserved_for_limit"]
        )
        for av in d["served"]:
            if av not in api_versions:
                errors.append(f"targets.{ver}: unknown API version {av}")
        if d["emit"] not in d["served"]:
            errors.append(f"targets.{ver}: emits {d['emit']} which it does not serve")
    if tuple(targets) != SUPPORTED_VERSIONS:
        errors.append(
            f"targets must be exactly {', '.join(SUPPORTED_VERSIONS)} in order, got {', '.join(targets)}"
        )
    if raw["default_target"] not in targets:
        errors.append(f"default_target {raw['default_target']} is not a target")

    gates: dict[str, GateSpec] = {}
    for name, d in raw["gates"].items():
        history = tuple(
            (parse_version(h["since"]), GateState(h["stage"], h["default"], h.get("locked", False)))
            for h in d["history"]
        )
        if [v for v, _ in history] != sorted(v for v, _ in history):
            errors.append(f"gates.{name}: history is not in ascending version order")
        gates[name] = GateSpec(name, tuple(d.get("depends_on", ())), history)
    for g in gates.values():
        errors.extend(
            f"gates.{g.name}: depends on unknown gate {dep}" for dep in g.depends_on if dep not in gates
        )

    features: dict[str, FeatureSpec] = {}
    for name, d in raw["features"].items():
        if d["gate"] not in gates:
            errors.append(f"features.{name}: unknown gate {d['gate']}")
        features[name] = FeatureSpec(name, d["gate"], tuple(d.get("fields", ())), d["summary"])

    libs: dict[str, CelLibrary] = {}
    for name, d in raw["cel_libraries"].items():
        introduced = parse_version(d["introduced"])
        removed = _opt_version(d, "removed")
        new_from = _opt_version(d, "new_expressions_from")
        new_until = _opt_version(d, "new_expressions_until")
        gate = d.get("gate")
        # new_expressions_* are stated for readers; they must follow from introduced/removed (see the YAML).
        # The CEL epoch is pinned to 1.0 upstream: those libraries are always offered.
        expected_from = introduced if introduced == (1, 0) else _next_minor(introduced)
        if new_from is not None and new_from != expected_from:
            errors.append(f"cel_libraries.{name}: new_expressions_from must be introduced + 1")
        if (removed is None) != (new_until is None) or (removed is not None and new_until != removed):
            errors.append(f"cel_libraries.{name}: new_expressions_until must equal removed")
        if gate is not None and gate not in gates:
            errors.append(f"cel_libraries.{name}: unknown gate {gate}")
        funcs = []
        for f in d["functions"]:
            fname, _, arity = f.partition("/")
            funcs.append(CelFunction(fname, int(arity) if arity else None))
        libs[name] = CelLibrary(name, introduced, new_from, new_until, gate, tuple(funcs))

    if errors:
        raise FeatureDataError("rules/features.yaml is inconsistent:\n  " + "\n  ".join(errors))

    index: dict[str, list[tuple[CelLibrary, int | None]]] = {}
    for lib in libs.values():
        for f in lib.functions:
            index.setdefault(f.name, []).append((lib, f.arity))
    return Features(
        default_target=raw["default_target"],
        api_versions=api_versions,
        targets=targets,
        limits=dict(raw["limits"]),
        gates=gates,
        features=features,
        cel_libraries=libs,
        cel_index={k: tuple(v) for k, v in index.items()},
    )


def load_features_from(path: Path, *, validate: bool = True) -> Features:
    """Load and check a features file (uncached; tests and --rules overrides use this).

    validate=False skips the JSON-schema check (the consistency checks of `_build` still run): only for the
    bundled file, which tests/ruleset/test_bundled_rules.py validates instead of every run paying for it."""
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER)  # noqa: S506 (safe loader)
    except (OSError, yaml.YAMLError) as exc:
        raise FeatureDataError(f"cannot read {path}: {exc}") from exc
    if validate:
        # lazy: start-up (jsonschema: ~39 ms, only load_features_from() needs it)
        import jsonschema

        schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
        problems = sorted(jsonschema.Draft202012Validator(schema).iter_errors(raw), key=lambda e: list(e.path))
        if problems:
            lines = [f"{'.'.join(map(str, e.path)) or '<root>'}: {e.message}" for e in problems[:20]]
            raise FeatureDataError(f"{path} does not match {SCHEMA_FILE.name}:\n  " + "\n  ".join(lines))
    return _build(raw)


@lru_cache(maxsize=1)
def load_features() -> Features:
    """The project's rules/features.yaml, loaded once per process."""
    return load_features_from(RULES_FILE, validate=False)


# --- feature-gate flags -------------------------------------------------------------------------------------


def parse_feature_gates(text: str) -> dict[str, bool]:
    """Parse a kube-style '--feature-gates' value: 'A=true,B=false' → {'A': True, 'B': False}.

    Gate names must be known to features.yaml; whether the gate exists in a given release is checked later by
    `Target.override_problems`, because the flag is parsed before the target is known.
    """
    known = load_features().gates
    result: dict[str, bool] = {}
    for raw_item in text.split(","):
        item = raw_item.strip()
        if not item:
            continue
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not name:
            raise FeatureGateError(f"bad feature gate {item!r}: expected NAME=true or NAME=false")
        lowered = value.lower()
        if lowered not in ("true", "false"):
            raise FeatureGateError(f"bad feature gate {item!r}: value must be true or false, not {value!r}")
        if name not in known:
            hint = difflib.get_close_matches(name, list(known), n=1)
            suffix = f"; did you mean {hint[0]}?" if hint else ""
            raise FeatureGateError(
                f"unknown feature gate {name!r}{suffix} (known: {', '.join(sorted(known))})"
            )
        enabled = lowered == "true"
        if name in result and result[name] != enabled:
            raise FeatureGateError(f"feature gate {name} is given twice with different values")
        result[name] = enabled
    return result


# --- CEL call extraction ------------------------------------------------------------------------------------

_STRING_START = re.compile(r"""(?i:(?:r|b|rb|br)?)('''|\"\"\"|'|")""")
_CALL = re.compile(
    r"(?<![A-Za-z0-9_])(\.\s*)?([A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*)\s*\("
)


def _strip_strings(expr: str) -> str:
    """Replace every CEL string/bytes literal by an empty one: text inside quotes never looks like a call."""
    out: list[str] = []
    i, n = 0, len(expr)
    while i < n:
        ch = expr[i]
        if ch in "'\"" or (ch in "rRbB" and (i == 0 or not (expr[i - 1].isalnum() or expr[i - 1] == "_"))):
            m = _STRING_START.match(expr, i)
            if m and (ch in "'\"" or m.start(1) > i):
                prefix = expr[i : m.start(1)]
                quote = m.group(1)
                raw = "r" in prefix.lower()
                j = m.end()
                while j < n and not expr.startswith(quote, j):
                    j += 2 if (not raw and expr[j] == "\\") else 1
                out.append('""')
                i = min(j + len(quote), n)
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def _count_args(text: str, open_paren: int) -> int:
    depth, commas, i = 0, 0, open_paren + 1
    saw_token = False
    while i < len(text):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            commas += 1
        if not ch.isspace() and not (ch == ")" and depth == 0):
            saw_token = True
        i += 1
    return commas + 1 if saw_token else 0


def cel_function_calls(expression: str) -> list[tuple[str, int]]:
    """The (function name, argument count) of every call in a CEL expression, in order of appearance.

    Crude but careful: string literals are ignored, member calls (`x.f(a)`) give `f` with one argument (the
    receiver does not count) and namespaced functions keep their namespace (`sets.contains`, `cel.bind`).
    """
    known = load_features().cel_index
    text = _strip_strings(expression)
    calls: list[tuple[str, int]] = []
    for m in _CALL.finditer(text):
        chain = [p.strip() for p in m.group(2).split(".")]
        name = chain[-1]
        if not m.group(1) and len(chain) >= 2:
            qualified = ".".join(chain[-2:])
            if len(chain) == 2 and qualified in known:
                name = qualified
        calls.append((name, _count_args(text, m.end() - 1)))
    return calls


# --- Target -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One target release, optionally with the cluster's feature-gate settings (gate name → enabled)."""

    version: str = DEFAULT_TARGET
    gates: Mapping[str, bool] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        version = normalize_version(self.version)
        if version not in SUPPORTED_VERSIONS:
            raise ValueError(
                f"unsupported target Kubernetes version {self.version}: "
                f"supported are {', '.join(SUPPORTED_VERSIONS)}"
            )
        object.__setattr__(self, "version", version)
        known = load_features().gates
        for name in self.gates:
            if name not in known:
                raise FeatureGateError(f"unknown feature gate {name!r}")

    # -- API versions --

    @property
    def _data(self) -> TargetData:
        return load_features().targets[self.version]

    @property
    def _v(self) -> Version:
        return parse_version(self.version)

    @property
    def api_version(self) -> str:
        """The resource.k8s.io version dra-migrate emits for this target, e.g. 'resource.k8s.io/v1'."""
        return f"{API_GROUP}/{self._data.emit}"

    @property
    def served_api_versions(self) -> tuple[str, ...]:
        return tuple(f"{API_GROUP}/{v}" for v in self._data.served)

    @property
    def request_shape(self) -> str:
        """'flat' (v1beta1 at 1.32: request fields sit on the request) or 'exactly'."""
        return self._data.request_shape

    @property
    def api_enabled_by_default(self) -> bool:
        """Whether the emitted API version is enabled without --runtime-config."""
        return load_features().api_versions[self._data.emit].enabled_by_default

    @property
    def dra_default_on(self) -> bool:
        """Whether DRA works on a default-configured cluster (core gate on and emitted API enabled)."""
        return self.feature_enabled("DynamicResourceAllocation", {}) and self.api_enabled_by_default

    def serves(self, api_version: str) -> bool:
        return api_version in self.served_api_versions

    # -- feature gates --

    def gate_state(self, name: str) -> GateState:
        feats = load_features()
        return feats.gates[feats.gate_for(name)].state_at(self._v)

    def feature_stage(self, name: str) -> str:
        """'absent', 'alpha', 'beta', 'ga' or 'deprecated' for a feature ('firstAvailable') or gate name."""
        return self.gate_state(name).stage

    def feature_enabled(self, name: str, overrides: Mapping[str, bool] | None = None) -> bool:
        """Whether a feature or gate is on: defaults of this release, then `self.gates`, then `overrides`.

        A gate that does not exist in the release is off whatever is asked; a locked gate keeps its default
        (use `override_problems` to tell the user). A gate is also off when a gate it depends on is off.
        """
        feats = load_features()
        settings = {**self.gates, **(overrides or {})}
        return self._gate_on(feats.gate_for(name), settings, frozenset())

    def feature_usable(self, name: str, overrides: Mapping[str, bool] | None = None) -> bool:
        """`feature_enabled`, taking DynamicResourceAllocation itself as on.

        Whether DRA as a whole is on is said once per run (DRA604); asking for a DRA sub-feature presumes the
        cluster enables DRA, so at 1.32/1.33 `--feature-gates DRAPrioritizedList=true` is enough to use it.
        """
        return self.feature_enabled(name, {"DynamicResourceAllocation": True, **(overrides or {})})

    def first_version_with(self, name: str) -> str | None:
        """The first supported release in which a feature's gate exists (None: none of them)."""
        gate = load_features().gate_for(name)
        for v in SUPPORTED_VERSIONS:
            if Target(v).gate_state(gate).stage != "absent":
                return v
        return None

    def first_version_on_by_default(self, name: str) -> str | None:
        for v in SUPPORTED_VERSIONS:
            if Target(v).feature_usable(name):
                return v
        return None

    def _gate_on(self, gate: str, settings: Mapping[str, bool], seen: frozenset[str]) -> bool:
        spec = load_features().gates[gate]
        state = spec.state_at(self._v)
        if state.stage == "absent" or gate in seen:
            return False
        value = state.default if state.locked else settings.get(gate, state.default)
        return value and all(self._gate_on(dep, settings, seen | {gate}) for dep in spec.depends_on)

    def override_problems(self, overrides: Mapping[str, bool] | None = None) -> list[str]:
        """Gate settings this release would refuse (the API server does not start with them)."""
        problems = []
        for name, value in {**self.gates, **(overrides or {})}.items():
            state = self.gate_state(name)
            if state.stage == "absent":
                problems.append(f"feature gate {name} does not exist in Kubernetes {self.version}")
            elif state.locked and value != state.default:
                problems.append(
                    f"feature gate {name} is locked to {str(state.default).lower()} "
                    f"in Kubernetes {self.version}"
                )
        return problems

    def reserved_for_limit(self) -> int:
        """Maximum entries in ResourceClaim status.reservedFor (pods sharing one claim)."""
        return self._data.reserved_for_limit

    # -- CEL --

    def cel_library_available(self, name: str, overrides: Mapping[str, bool] | None = None) -> bool:
        """Whether *new* selector expressions may use a library (NewExpressions environment)."""
        lib = load_features().cel_libraries[name]
        if lib.gate is not None:
            return self.feature_enabled(lib.gate, overrides)
        v = self._v
        return (
            lib.new_from is not None and lib.new_from <= v and (lib.new_until is None or v <= lib.new_until)
        )

    def cel_functions_unavailable(
        self, expression: str, overrides: Mapping[str, bool] | None = None
    ) -> list[str]:
        """Functions an expression calls that this release does not offer to new expressions.

        Each name is reported once, in order of appearance; 'name/N' when the function exists here but not
        with N arguments (e.g. 'semver/2' before 1.34). Unknown functions are reported as well.
        """
        index = load_features().cel_index
        missing: list[str] = []
        for name, arity in cel_function_calls(expression):
            offers = index.get(name, ())
            usable = [a for lib, a in offers if self.cel_library_available(lib.name, overrides)]
            if any(a is None or a == arity for a in usable):
                continue
            label = f"{name}/{arity}" if usable else name
            if label not in missing:
                missing.append(label)
        return missing

    def cel_libraries_for(self, function: str) -> list[str]:
        """Names of the libraries that define a function (to say which one an expression would need)."""
        return [lib.name for lib, _ in load_features().cel_index.get(function.partition("/")[0], ())]


def default_target() -> Target:
    return Target(load_features().default_target)


def feature_problem(target: str, feature: str, gates: Mapping[str, bool]) -> tuple[str, str] | None:
    """(code, message) when `target` with `gates` cannot accept a feature; DRA609 (info) when only the gates
    given on the command line make it acceptable; None when the target has it on by default."""
    t = Target(target)
    gate = load_features().gate_for(feature)
    state = t.gate_state(gate)
    if state.stage == "absent":
        first = t.first_version_with(feature)
        since = f"; it exists from Kubernetes {first} (gate {gate})" if first else ""
        return "DRA605", f"{feature} does not exist in Kubernetes {target}{since}: choose a newer --target-version"
    if t.feature_usable(feature, gates):
        if t.feature_usable(feature):
            return None
        return "DRA609", (f"{feature} relies on feature gate {gate} ({state.stage}, off by default in "
                          f"{target}), enabled by --feature-gates: enable it on the cluster too")
    default_on = t.first_version_on_by_default(feature)
    later = f", on by default from {default_on}" if default_on else ""
    if gates.get(gate) is False and state.default:
        how = f"is turned off by --feature-gates {gate}=false"
    else:
        how = f"is {state.stage} and off by default in Kubernetes {target}{later}"
    return "DRA606", (f"{feature} needs feature gate {gate}, which {how}; if the cluster enables it, pass "
                      f"--feature-gates {gate}=true")
