"""Render plain values as YAML (or JSON) text in a given layout. Only new text is rendered; nothing is
re-dumped. What may be written plain, and how quoting is done, is in emit/scalars.py."""

from __future__ import annotations

import json
from typing import Any

from dra_migrate.emit.scalars import plain_ok, quoted
from dra_migrate.emit.style import JsonLayout, Style

_DEFAULT = Style()


def scalar(value: Any, style: Style = _DEFAULT, *, flow: bool = False, is_key: bool = False) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    s = str(value)
    if style.json:
        return json.dumps(s, ensure_ascii=False)
    always = style.key_quote if is_key else style.quote
    if always:
        return quoted(s, always)
    if plain_ok(s, flow):
        return s
    return quoted(s, style.quote_char)


def key(k: str, style: Style = _DEFAULT) -> str:
    return scalar(k, style, flow=True, is_key=True)


def flow(value: Any, style: Style, indent: int = 0, pretty: bool = False) -> str:
    """A value in flow syntax. `pretty` lays JSON out over several lines, its closing bracket at `indent`."""
    if style.json:
        return json_text(value, style.json_layout, indent, pretty, style.newline)
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{" + ", ".join(f"{key(k, style)}: {flow(v, style)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[" + ", ".join(flow(v, style) for v in value) + "]"
    return scalar(value, style, flow=True)


def json_text(value: Any, layout: JsonLayout, indent: int, pretty: bool, newline: str = "\n") -> str:
    """JSON in the file's layout: one line with its separators, or one entry per line at its indentation
    (scalar-only objects and arrays on one line where the file writes them so)."""
    one_line = (
        not pretty
        or not isinstance(value, (dict, list))
        or not value
        or (layout.inline_leaves and not any(isinstance(v, (dict, list)) for v in _values(value)))
    )
    if one_line:
        return json.dumps(value, ensure_ascii=False, separators=(layout.item_sep, layout.key_sep))
    inner = indent + layout.indent
    pad = " " * inner
    if isinstance(value, dict):
        entries = [
            f"{pad}{json.dumps(k, ensure_ascii=False)}{layout.key_sep}"
            f"{json_text(v, layout, inner, True, newline)}"
            for k, v in value.items()
        ]
        opening, closing = "{", "}"
    else:
        entries = [pad + json_text(v, layout, inner, True, newline) for v in value]
        opening, closing = "[", "]"
    return opening + newline + ("," + newline).join(entries) + newline + " " * indent + closing


def _values(value: dict[str, Any] | list[Any]) -> list[Any]:
    return list(value.values()) if isinstance(value, dict) else value


def block_entry(k: str, value: Any, indent: int, style: Style) -> list[str]:
    """Lines (without newline) for `k: value` as a block mapping entry at column `indent`."""
    pad = " " * indent
    if isinstance(value, dict) and value:
        lines = [f"{pad}{key(k, style)}:"]
        for ck, cv in value.items():
            lines.extend(block_entry(ck, cv, indent + style.indent, style))
        return lines
    if isinstance(value, list) and value:
        lines = [f"{pad}{key(k, style)}:"]
        for item in value:
            lines.extend(block_item(item, indent + style.seq_offset, style))
        return lines
    return [f"{pad}{key(k, style)}: {flow(value, style) if isinstance(value, (dict, list)) else scalar(value, style)}"]


def block_item(value: Any, indent: int, style: Style) -> list[str]:
    """Lines for one block sequence item whose dash is at column `indent`."""
    pad = " " * indent
    step = style.item_offset
    dash = "-" + " " * (step - 1)
    if isinstance(value, dict) and value:
        inner: list[str] = []
        for ck, cv in value.items():
            inner.extend(block_entry(ck, cv, indent + step, style))
        inner[0] = pad + dash + inner[0][indent + step :]
        return inner
    if isinstance(value, list) and value:
        inner = []
        for item in value:
            inner.extend(block_item(item, indent + step, style))
        inner[0] = pad + dash + inner[0][indent + step :]
        return inner
    return [f"{pad}- {flow(value, style) if isinstance(value, (dict, list)) else scalar(value, style)}"]


def document(obj: dict[str, Any], style: Style) -> str:
    lines: list[str] = []
    for k, v in obj.items():
        lines.extend(block_entry(k, v, 0, style))
    return style.newline.join(lines) + style.newline
