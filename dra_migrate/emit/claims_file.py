"""Claim templates written outside their workload's file: --claims-out, and siblings of JSON input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dra_migrate.emit import render
from dra_migrate.emit.style import Style


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")))


def claims_files(claims_out: Path | None, claims: list[tuple[str, dict[str, Any]]]) -> dict[Path, bytes]:
    """Target file → full new content; existing files are extended, never truncated."""
    grouped: dict[Path, list[dict[str, Any]]] = {}
    for source, obj in claims:
        if claims_out is None:
            src = Path(source)
            target = src.with_name(src.stem + ".dra-claims.json")
        elif claims_out.suffix in (".yaml", ".yml", ".json"):
            target = claims_out
        else:
            target = claims_out / (Path(source).stem + ".claims.yaml")
        grouped.setdefault(target, []).append(obj)
    out: dict[Path, bytes] = {}
    for target, objs in grouped.items():
        out[target] = _json_list(target, objs) if target.suffix == ".json" else _yaml_docs(target, objs)
    return out


def _json_list(target: Path, objs: list[dict[str, Any]]) -> bytes:
    items: list[dict[str, Any]] = []
    if target.exists():
        try:
            data = json.loads(target.read_text())
            items = list(data.get("items", [])) if isinstance(data, dict) else []
        except ValueError:
            items = []
    seen = {_key(o) for o in items}
    items.extend(o for o in objs if _key(o) not in seen)
    return (json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2) + "\n").encode()


def _yaml_docs(target: Path, objs: list[dict[str, Any]]) -> bytes:
    import yaml

    existing = target.read_text() if target.exists() else ""
    seen: set[tuple[str, str, str]] = set()
    if existing:
        for d in yaml.safe_load_all(existing):
            if isinstance(d, dict):
                seen.add(_key(d))
    style = Style()
    parts = [existing] if existing else []
    for o in objs:
        if _key(o) in seen:
            continue
        seen.add(_key(o))
        if parts and not parts[-1].endswith("\n"):
            parts.append("\n")
        parts.append(("---\n" if parts else "") + render.document(o, style))
    return "".join(parts).encode()
