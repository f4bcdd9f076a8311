"""Small helpers for reading plain YAML data, where any value may have any type."""

from __future__ import annotations

from typing import Any


def as_map(value: Any) -> dict[str, Any]:
    """`value` when it is a mapping, else an empty one (a missing or mistyped field reads as empty)."""
    return value if isinstance(value, dict) else {}
