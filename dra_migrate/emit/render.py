"""Render plain values as YAML text in a given layout. Only new text is rendered; nothing is re-dumped."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import yaml

from dra_migrate.emit.style import Style

_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_./][A-Za-z0-9_./ ()\[\]'=&|!<>+*,-]*$")


@functools.lru_cache(maxsize=4096)
def _plain_ok(s: str) -> bool:
    if not s or s != s.strip() or not _PLAIN_SAFE.match(s) or ": " in s or " #" in s:
        return False
    try:
        return yaml.load("k: " + s, Loader=yaml.CSafeLoader) == {"k": s} and yaml.load(
            "[" + s + "]", Loader=yaml.CSafeLoader
        ) == [s]
    except yaml.YAMLError:
        return False


def scalar(value: Any, *, flow: bool = False, json_style: bool = False) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    s = str(value)
    if json_style:
        return json.dumps(s, ensure_ascii=False)
    if _plain_ok(s) and not (flow and any(c in s for c in ",[]{}")):
        return s
    if "'" not in s and s.isprintable():
        return "'" + s + "'"
    return json.dumps(s, ensure_ascii=False)


def key(k: str, *, json_style: bool = False) -> str:
    return scalar(k, flow=True, json_style=json_style)


def flow(value: Any, style: Style, indent: int = 0, pretty: bool = False) -> str:
    """A value in flow syntax. `pretty` lays JSON out over several lines at `indent`."""
    if style.json:
        if pretty and isinstance(value, (dict, list)) and value:
            text = json.dumps(value, indent=style.indent, ensure_ascii=False)
            return text.replace("\n", "\n" + " " * indent)
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{" + ", ".join(f"{key(k)}: {flow(v, style)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[" + ", ".join(flow(v, style) for v in value) + "]"
    return scalar(value, flow=True)


def block_entry(k: str, value: Any, indent: int, style: Style) -> list[str]:
    """Lines (without newline) for `k: value` as a block mapping entry at column `indent`."""
    pad = " " * indent
    if isinstance(value, dict) and value:
        lines = [f"{pad}{key(k)}:"]
        for ck, cv in value.items():
            lines.extend(block_entry(ck, cv, indent + style.indent, style))
        return lines
    if isinstance(value, list) and value:
        lines = [f"{pad}{key(k)}:"]
        for item in value:
            lines.extend(block_item(item, indent + style.seq_offset, style))
        return lines
    return [f"{pad}{key(k)}: {flow(value, style) if isinstance(value, (dict, list)) else scalar(value)}"]


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
    return [f"{pad}- {flow(value, style) if isinstance(value, (dict, list)) else scalar(value)}"]


def document(obj: dict[str, Any], style: Style) -> str:
    lines: list[str] = []
    for k, v in obj.items():
        lines.extend(block_entry(k, v, 0, style))
    return style.newline.join(lines) + style.newline
