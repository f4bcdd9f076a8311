"""Safe CEL literals for values that come from manifests.

A label value must never change the structure of a generated expression, so every string goes through
`cel_string` (dra_migrate.cel.single_quoted_literal) and every regex fragment through `regex_escape`.
"""

from __future__ import annotations

from dra_migrate.cel.literal import single_quoted_literal as cel_string

# RE2 and Python re agree on these; escaping only them keeps regexes readable and valid in both.
_REGEX_META = frozenset("\\.+*?()|[]{}^$")


def regex_escape(value: str) -> str:
    """Escape RE2 metacharacters so `value` matches itself literally."""
    return "".join("\\" + ch if ch in _REGEX_META else ch for ch in value)


__all__ = ["cel_string", "regex_escape"]
