"""Claim templates written outside their workload's file: --claims-out, and siblings of JSON input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dra_migrate.emit import render
from dra_migrate.emit.style import Style, json_layout
from dra_migrate.source.compose import ComposeError, compose_documents
from dra_migrate.source.plain import to_plain


class ClaimsFileError(Exception):
    """An existing claims file that cannot be read safely: it is never truncated or rewritten blindly."""

    def __init__(self, code: str, message: str, path: Path) -> None:
        super().__init__(message)
        self.code, self.message, self.path = code, message, str(path)


def _read_existing(target: Path) -> str:
    if not target.exists():
        return ""
    try:
        return target.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ClaimsFileError("DRA103", "existing claims file is not valid UTF-8", target) from None
    except OSError as exc:
        raise ClaimsFileError("DRA106", f"cannot read existing claims file: {exc.strerror}", target) from None


def _parse_yaml(text: str, target: Path) -> list[Any]:
    try:
        return [to_plain(d.root) for d in compose_documents(text.removeprefix("\ufeff"))]
    except ComposeError as exc:
        raise ClaimsFileError(exc.code, f"existing claims file: {exc.message} (line {exc.line})", target) from None


def _parse_json_items(text: str, target: Path) -> list[Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ClaimsFileError("DRA101", f"existing claims file is not valid JSON: {exc}", target) from None
    if not (isinstance(data, dict) and isinstance(data.get("items", []), list)):
        raise ClaimsFileError("DRA101", "existing claims file is not a JSON List object", target)
    return list(data.get("items", []))


def verify_claims_file(target: Path, existing: bytes, data: bytes, objs: list[dict[str, Any]]) -> str | None:
    """The self-check for claim files: re-read the output independently and require the old content intact
    (as a prefix) plus only the given new objects."""
    try:
        text = data.decode("utf-8")
        old_text = existing.decode("utf-8")
        if target.suffix == ".json":
            old, new = _parse_json_items(old_text, target) if old_text else [], _parse_json_items(text, target)
        else:
            if not data.startswith(existing):
                return "the existing content would not be kept byte for byte"
            old, new = _parse_yaml(old_text, target) if old_text else [], _parse_yaml(text, target)
    except (UnicodeDecodeError, ClaimsFileError) as exc:
        return f"the output does not parse back ({exc})"
    if new[: len(old)] != old:
        return "the existing objects would change"
    added = new[len(old) :]
    if any(o not in objs for o in added):
        return "an added object is not one of the new claim templates"
    if len({_key(o) for o in added if isinstance(o, dict)}) != len(added):
        return "an object would be added twice"
    return None


def _is_new(seen: dict[tuple[str, str, str], dict[str, Any]], obj: dict[str, Any], target: Path) -> bool:
    """Add `obj` to `seen` (the file's objects so far); False when it is there already (a run over sources
    whose claims were written before). Two different objects of one kind, namespace and name cannot both be
    in the file: nothing is written (a safety net: names are unique among all that goes to one claims file,
    integrations.unit_names)."""
    key = _key(obj)
    if key not in seen:
        seen[key] = obj
        return True
    if seen[key] != obj:
        where = f" in namespace {key[1]!r}" if key[1] else ""
        raise ClaimsFileError("DRA901", f"self-check failed: {key[0]} {key[2]!r}{where} would be in the file "
                              "twice, with different contents", target)
    return False


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")))


def claims_target(claims_out: Path | None, source: str) -> Path:
    """Where the new objects of `source` go: the --claims-out file, a file per source name in the --claims-out
    directory, or (JSON input without --claims-out) a sibling of the source."""
    if claims_out is None:
        src = Path(source)
        return src.with_name(src.stem + ".dra-claims.json")
    if claims_out.suffix in (".yaml", ".yml", ".json"):
        return claims_out
    return claims_out / (Path(source).stem + ".claims.yaml")


def claims_files(claims_out: Path | None, claims: list[tuple[str, dict[str, Any]]]) -> dict[Path, bytes]:
    """Target file → full new content; existing files are extended, never truncated."""
    grouped: dict[Path, list[dict[str, Any]]] = {}
    split_from: dict[Path, Path] = {}  # a JSON sibling → the manifest its templates come from
    for source, obj in claims:
        target = claims_target(claims_out, source)
        if claims_out is None:
            split_from.setdefault(target, Path(source))
        grouped.setdefault(target, []).append(obj)
    out: dict[Path, bytes] = {}
    for target, objs in grouped.items():
        if target.suffix == ".json":
            out[target] = _json_list(target, objs, split_from.get(target))
        else:
            out[target] = _yaml_docs(target, objs)
    return out


def _json_list(target: Path, objs: list[dict[str, Any]], source: Path | None) -> bytes:
    """The JSON List of claim templates, laid out as the file it extends, else as the JSON manifest it was
    split from (indentation, separators, final newline), else two-space pretty JSON."""
    existing = _read_existing(target)
    items = _parse_json_items(existing, target) if existing else []
    seen = {_key(o): o for o in items if isinstance(o, dict)}
    items.extend(o for o in objs if _is_new(seen, o, target))
    layout = json_layout(existing or _source_text(source))
    text = render.json_text({"apiVersion": "v1", "kind": "List", "items": items}, layout, 0, layout.pretty)
    return (text + ("\n" if layout.final_newline else "")).encode()


def json_stream(objs: list[dict[str, Any]], source_text: str) -> str:
    """The objects as a stream of JSON values laid out as `source_text` (what follows a JSON manifest on stdout:
    kubectl reads successive JSON values from one stream)."""
    layout = json_layout(source_text)
    return "".join(render.json_text(o, layout, 0, layout.pretty) + "\n" for o in objs)


def _source_text(source: Path | None) -> str:
    if source is None:
        return ""
    try:
        return source.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return ""


def _yaml_docs(target: Path, objs: list[dict[str, Any]]) -> bytes:
    existing = _read_existing(target)
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    if existing:
        for d in _parse_yaml(existing, target):
            if isinstance(d, dict):
                seen[_key(d)] = d
    style = Style()
    parts = [existing] if existing else []
    for o in objs:
        if not _is_new(seen, o, target):
            continue
        if parts and not parts[-1].endswith("\n"):
            parts.append("\n")
        parts.append(("---\n" if parts else "") + render.document(o, style))
    return "".join(parts).encode()
