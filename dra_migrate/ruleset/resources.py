"""Classify extended resource names (data in rules/resources.yaml)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from dra_migrate.ruleset.files import rules_data


@dataclass(frozen=True, slots=True)
class ResourceClass:
    scheme: str  # gpu | shared | mig | hami | volcano-vgpu
    groups: tuple[tuple[str, str], ...] = ()

    def group(self, name: str) -> str | None:
        return dict(self.groups).get(name)


@functools.lru_cache(maxsize=1)
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(r["pattern"]), r["scheme"]) for r in rules_data("resources.yaml")["resources"])


@functools.lru_cache(maxsize=8192)  # every key of every GPU workload is asked about
def classify(name: str) -> ResourceClass | None:
    for pattern, scheme in _patterns():
        m = pattern.fullmatch(name)
        if m:
            return ResourceClass(scheme, tuple((k, v) for k, v in m.groupdict().items() if v is not None))
    return None
