"""The finding type shared by schema validation and the semantic limit checks."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# Diagnostic codes (rules/codes.yaml) the findings map to.
NOT_SERVED = "DRA601"
SCHEMA = "DRA602"
LIMIT = "DRA603"


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    """One problem in an object at `path` ('spec.spec.devices.requests[0].exactly'; '' = whole object)."""

    path: str
    message: str
    code: str = SCHEMA

    def __str__(self) -> str:
        return f"{self.path or '<object>'}: {self.message}"


def join_path(prefix: str, *parts: str | int) -> str:
    """Append keys ('.key') and list indexes ('[i]') to a dotted path."""
    out = prefix
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}"
        else:
            out = part
    return out


def path_from(parts: Iterable[str | int]) -> str:
    return join_path("", *parts)


def split_api_version(api_version: str) -> tuple[str, str]:
    """'resource.k8s.io/v1' → ('resource.k8s.io', 'v1'); 'v1' → ('', 'v1')."""
    group, sep, version = api_version.rpartition("/")
    return (group, version) if sep else ("", api_version)
