"""Safe construction of CEL literals from arbitrary text."""

from __future__ import annotations

import unicodedata

_SIMPLE_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_SINGLE_QUOTED_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Everything RE2 treats specially outside a character class; RE2 rejects escapes of letters/digits,
# so only these are escaped (unlike Python's re.escape).
_RE2_META = set("\\.+*?()|[]{}^$")


def _needs_unicode_escape(ch: str) -> bool:
    # Controls, format chars, separators other than space, unassigned/private code points: escape them so
    # the literal is plain printable text and no parser can read a line break or a quote into it.
    cat = unicodedata.category(ch)
    return cat[0] in "CZ" and ch != " "


def string_literal(value: str) -> str:
    """A double-quoted CEL string literal denoting exactly `value`."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            raise ValueError("a CEL string cannot contain a lone surrogate code point")
        if ch in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[ch])
        elif _needs_unicode_escape(ch):
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def single_quoted_literal(value: str) -> str:
    """A single-quoted CEL string literal denoting exactly `value`, in plain printable ASCII.

    Single quotes are the style of the NVIDIA driver's DeviceClass selectors, so generated selectors read like
    them inside YAML double-quoted scalars; everything outside printable ASCII becomes a \\u/\\U escape.
    """
    out = ["'"]
    for ch in value:
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            raise ValueError("a CEL string cannot contain a lone surrogate code point")
        if ch in _SINGLE_QUOTED_ESCAPES:
            out.append(_SINGLE_QUOTED_ESCAPES[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    out.append("'")
    return "".join(out)


def regex_literal_escape(value: str) -> str:
    """Escape `value` so that an RE2 pattern matches it literally (wrap the result with string_literal)."""
    out = []
    for ch in value:
        if ch in _RE2_META:
            out.append("\\" + ch)
        elif _needs_unicode_escape(ch):
            out.append(f"\\x{{{ord(ch):x}}}")
        else:
            out.append(ch)
    return "".join(out)
