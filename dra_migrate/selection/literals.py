"""Safe CEL literals for values that come from manifests.

A label value must never change the structure of a generated expression, so every string goes through
`cel_string` and every regex fragment through `regex_escape`.
(To be replaced by dra_migrate.cel.string_literal.)
"""

from __future__ import annotations

_SIMPLE_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}

# RE2 and Python re agree on these; escaping only them keeps regexes readable and valid in both.
_REGEX_META = frozenset("\\.+*?()|[]{}^$")


def cel_string(value: str) -> str:
    """A single-quoted CEL string literal whose value is exactly `value`."""
    out: list[str] = []
    for ch in value:
        if ch in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            # Non-printable and non-ASCII characters are escaped so the expression text stays plain ASCII.
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "'" + "".join(out) + "'"


def regex_escape(value: str) -> str:
    """Escape RE2 metacharacters so `value` matches itself literally."""
    return "".join("\\" + ch if ch in _REGEX_META else ch for ch in value)
