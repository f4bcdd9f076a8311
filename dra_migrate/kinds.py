"""Kind rules: where pod specs live in each workload kind (data in rules/kinds/*.yaml)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path as FsPath

import yaml

RULES_DIR = FsPath(__file__).resolve().parents[1] / "rules"
Path = tuple[str, ...]


@dataclass(frozen=True)
class KindRule:
    group: str
    kind: str
    versions: tuple[str, ...]
    pod_specs: tuple[Path, ...]
    containers: tuple[Path, ...] = ()
    source: str = ""


def parse_path(text: str) -> Path:
    out: list[str] = []
    buf = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "[":
            j = text.index("]", i)
            buf += text[i + 1 : j]
            i = j + 1
            continue
        if ch == ".":
            out.append(buf)
            buf = ""
        else:
            buf += ch
        i += 1
    out.append(buf)
    return tuple(out)


class KindRuleSet:
    def __init__(self, rules: Sequence[KindRule]) -> None:
        self._by_key = {(r.group, r.kind): r for r in rules}

    def lookup(self, api_version: str, kind: str) -> KindRule | None:
        group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
        rule = self._by_key.get((group, kind))
        if rule is None:
            return None
        version = api_version.rsplit("/", 1)[-1]
        if rule.versions and version not in rule.versions:
            return None
        return rule

    def all(self) -> list[KindRule]:
        return list(self._by_key.values())


@functools.lru_cache(maxsize=8)
def load_kind_rules(extra_dirs: tuple[FsPath, ...] = ()) -> KindRuleSet:
    rules: list[KindRule] = []
    for d in (RULES_DIR / "kinds", *extra_dirs):
        for f in sorted(d.glob("*.yaml")):
            data = yaml.safe_load(f.read_text()) or {}
            for entry in data.get("kinds", []):
                rules.append(
                    KindRule(
                        entry["group"],
                        entry["kind"],
                        tuple(entry.get("versions", ())),
                        tuple(parse_path(p) for p in entry.get("podSpecs", ())),
                        tuple(parse_path(p) for p in entry.get("containers", ())),
                        str(f),
                    )
                )
    return KindRuleSet(rules)


def resolve(data: object, path: Path) -> list[tuple[tuple[str | int, ...], object]]:
    """Expand '*' wildcards over plain data into concrete paths with the values found there."""
    found: list[tuple[tuple[str | int, ...], object]] = [((), data)]
    for seg in path:
        nxt: list[tuple[tuple[str | int, ...], object]] = []
        for prefix, value in found:
            if seg == "*":
                if isinstance(value, dict):
                    nxt.extend(((*prefix, k), v) for k, v in value.items() if isinstance(k, str))
                elif isinstance(value, list):
                    nxt.extend(((*prefix, i), v) for i, v in enumerate(value))
            elif isinstance(value, dict) and seg in value:
                nxt.append(((*prefix, seg), value[seg]))
        found = nxt
    return found
