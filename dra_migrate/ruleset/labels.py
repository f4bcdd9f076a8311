"""Label translation rules (data in rules/labels.yaml, schema in schemas/labels.schema.json)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from dra_migrate.ruleset._paths import rules_file, schema_file

DEFAULT_RULES = rules_file("labels.yaml")
SCHEMA = schema_file("labels.schema.json")


@dataclass(frozen=True, slots=True)
class LabelRule:
    key: str
    kind: str  # attribute | capacity | node | drop
    name: str  # attribute/capacity name; "" for node/drop
    transform: str
    table: str
    part: str
    policy: str  # move | keep; "" for node/drop
    mig_only: bool
    why: str


@dataclass(frozen=True, slots=True)
class Implication:
    """What a node label says about how the device plugin served GPUs on the nodes it selects."""

    label: str  # the exact key, or "" when `pattern` matches keys
    pattern: re.Pattern[str] | None
    values: dict[str, dict[str, str]]  # label value → implied {sharing, mig}
    value: str  # replicas | gfd-product | mig-profile | ""
    implies: dict[str, str]
    provider: str
    why: str

    def groups(self, key: str) -> dict[str, str] | None:
        """The key's named groups (e.g. `profile`) if this implication is about `key`, else None."""
        if self.pattern is None:
            return {} if key == self.label else None
        m = self.pattern.match(key)
        return {k: v for k, v in m.groupdict().items() if v is not None} if m else None


@dataclass(frozen=True, slots=True)
class LabelRules:
    labels: dict[str, LabelRule]
    prefixes: dict[str, LabelRule]
    tables: dict[str, dict[str, Any]]
    implications: tuple[Implication, ...] = ()

    def lookup(self, key: str) -> LabelRule | None:
        if key in self.labels:
            return self.labels[key]
        # Longest prefix wins so a specific prefix can refine a general one.
        for prefix in sorted(self.prefixes, key=len, reverse=True):
            if key.startswith(prefix):
                return self.prefixes[prefix]
        return None


def _rule(key: str, raw: dict[str, Any]) -> LabelRule:
    kind, _, name = raw["target"].partition(" ")
    return LabelRule(
        key=key,
        kind=kind,
        name=name,
        transform=raw.get("transform", ""),
        table=raw.get("table", ""),
        part=raw.get("part", ""),
        policy=raw.get("policy", ""),
        mig_only=bool(raw.get("mig_only", False)),
        why=raw["why"],
    )


def parse_label_rules(data: Any, *, validate: bool = True) -> LabelRules:
    """Validate raw rule data against the schema and build the lookup structure.

    validate=False only for the bundled file: tests/ruleset/test_bundled_rules.py validates it instead of every run."""
    if validate:
        # lazy: start-up (jsonschema: ~37 ms, only parse_label_rules() needs it)
        import jsonschema

        schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator(schema).validate(data)
    tables: dict[str, dict[str, Any]] = data["tables"]
    for key, raw in [*data["labels"].items(), *data.get("prefixes", {}).items()]:
        if "table" in raw and raw["table"] not in tables:
            raise ValueError(f"label rule {key!r} names unknown table {raw['table']!r}")
    return LabelRules(
        labels={k: _rule(k, v) for k, v in data["labels"].items()},
        prefixes={k: _rule(k, v) for k, v in data.get("prefixes", {}).items()},
        tables=tables,
        implications=tuple(_implication(raw) for raw in data.get("implications", [])),
    )


def _implication(raw: dict[str, Any]) -> Implication:
    pattern = raw.get("pattern")
    return Implication(
        label=raw.get("label", ""),
        pattern=re.compile(pattern) if pattern else None,
        values={str(k): dict(v) for k, v in (raw.get("values") or {}).items()},
        value=raw.get("value", ""),
        implies=dict(raw.get("implies") or {}),
        provider=raw.get("provider", ""),
        why=raw["why"],
    )


def load_label_rules(path: Path | None = None) -> LabelRules:
    if path is None:
        return _default_rules()
    return parse_label_rules(yaml.safe_load(path.read_text(encoding="utf-8")))


@lru_cache(maxsize=1)
def _default_rules() -> LabelRules:
    # the C loader: the pure-Python one costs a tenth of a second here, paid by every pre-commit run
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(DEFAULT_RULES.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 (safe loader)
    return parse_label_rules(data, validate=False)
