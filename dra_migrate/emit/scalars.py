"""When a string may be written plain, and how to quote it when not.

A plain scalar is only safe when every reader of the manifest resolves it to the same string. Readers
differ: the API server and kubectl read YAML through sigs.k8s.io/yaml, which uses go-yaml v2's resolver
(goyaml.v2/resolve.go): `y`, `Y`, `n`, `N`, `yes`, `on`, `off`... are booleans, and a scalar starting with a
digit, `+`, `-` or `.` is tried as an int (`strconv.ParseInt(s, 0, 64)` with `_` removed: `0o17`, `0x1f`,
`1_0`), a float (`1e3`, `08`) or a timestamp. PyYAML follows YAML 1.1 (no `y`/`n`, but sexagesimal
`1:20`); YAML 1.2 readers (ruamel.yaml's default, go-yaml v3) read `yes` and `on` as strings and `0o17` as an
int. So plain is allowed only for strings that start with a letter, `_` or `/`, are not one of those words
in any case, and contain nothing that could end or change the scalar, and for quantity-like words
(`10240Mi`, `1g.10gb`); anything else is quoted. Quoting
never changes a string's value for any of them.
"""

from __future__ import annotations

import functools
import re

import yaml

# first character: a letter, `_` or `/` (never a digit, sign, dot or YAML indicator); then a conservative set
_PLAIN_SAFE = re.compile(r"[A-Za-z_/][A-Za-z0-9_./ ()\[\]'=&|!<>+*,-]*")
# every word some reader resolves to a boolean or null (go-yaml v2, YAML 1.1), in any capitalisation
RESERVED_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null", "~"})
_FLOW_INDICATORS = frozenset(",[]{}")
# digits, then a letter other than e/E, then letters, digits, dots and dashes: a quantity (`10240Mi`, `500m`)
# or a MIG profile (`1g.10gb`). No reader takes it for a number: it is no int (not even with a 0x/0o/0b
# prefix, excluded below), no float (no exponent), no timestamp (no dash right after the digits), no
# sexagesimal (no colon)
_DIGIT_WORD = re.compile(r"[0-9]+[A-DF-Za-df-z][A-Za-z0-9.-]*")


def _digit_word(s: str) -> bool:
    return _DIGIT_WORD.fullmatch(s) is not None and not (s[0] == "0" and s[1] in "xXoObB")


def plain_candidate(s: str) -> bool:
    """Whether `s` reads back as the same string when written plain, for every reader (cheap rules only)."""
    if s[:1].isdigit():
        return _digit_word(s)
    return (
        bool(s)
        and _PLAIN_SAFE.fullmatch(s) is not None
        and s[-1] != " "
        and s.lower() not in RESERVED_WORDS
        and ": " not in s
        and " #" not in s
        and not s.endswith(":")
    )


@functools.lru_cache(maxsize=4096)
def plain_ok(s: str, flow: bool = False) -> bool:
    """`plain_candidate`, confirmed by PyYAML reading it back, in a block value and in a flow sequence."""
    if not plain_candidate(s) or (flow and not _FLOW_INDICATORS.isdisjoint(s)):
        return False
    try:
        return yaml.load("k: " + s, Loader=yaml.CSafeLoader) == {"k": s} and yaml.load(
            "[" + s + "]", Loader=yaml.CSafeLoader
        ) == [s]
    except yaml.YAMLError:
        return False


def quoted(s: str, prefer: str = "'") -> str:
    """`s` quoted with `prefer`, unless the other quote needs no escaping where `prefer` would (the rule
    Prettier uses). Strings a single-quoted scalar cannot carry (line breaks, tabs, control characters)
    are always double-quoted, with escapes."""
    if not s.isprintable():
        return double_quoted(s)
    if prefer == '"':
        return "'" + s + "'" if '"' in s and "'" not in s else double_quoted(s)
    return double_quoted(s) if "'" in s else "'" + s + "'"


def double_quoted(s: str) -> str:
    """A YAML double-quoted scalar: printable characters as they are, the rest escaped. Unlike json.dumps it
    escapes U+0085, U+2028 and U+2029, which YAML 1.1 readers fold as line breaks inside quotes."""
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(_escape(ch))
    out.append('"')
    return "".join(out)


_SHORT_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0", "\x1b": "\\e"}


def _escape(ch: str) -> str:
    if ch in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[ch]
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02X}"
    if code <= 0xFFFF:
        return f"\\u{code:04X}"
    return f"\\U{code:08X}"
