"""kustomize: patch files and inline patches that set GPUs, and adding a claims file to `resources:`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dra_migrate.diagnostics import Diagnostic, Location, make
from dra_migrate.integrations.helm import GPU_TEXT_RE, gpu_key_lines

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


@dataclass(slots=True)
class PatchRef:
    kustomization: str  # display path of the kustomization that lists the patch
    line: int  # where it is listed


@dataclass(slots=True)
class Kustomization:
    path: Path
    display: str
    data: dict[str, Any]
    text: str
    patch_files: dict[Path, PatchRef] = field(default_factory=dict)


def find_kustomization(directory: Path) -> Path | None:
    for name in KUSTOMIZATION_NAMES:
        f = directory / name
        if f.is_file():
            return f
    return None


def load(path: Path, display: str) -> Kustomization | None:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 (safe loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(data, dict):
        return None
    k = Kustomization(path, display, data, text)
    for rel in _patch_paths(data):
        target = (path.parent / rel).resolve()
        k.patch_files[target] = PatchRef(display, _line_of(text, rel))
    return k


def _patch_paths(data: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("patches", "patchesJson6902"):
        for entry in data.get(key) or []:
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                out.append(entry["path"])
    for entry in data.get("patchesStrategicMerge") or []:
        # an entry is a file path or an inline patch (a string holding YAML)
        if isinstance(entry, str) and "\n" not in entry.strip():
            out.append(entry.strip())
    return out


def _line_of(text: str, needle: str) -> int:
    pat = re.compile(r"(^|[\s:\-'\"])" + re.escape(needle) + r"(['\"]|\s|$)", re.M)
    m = pat.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else 0


def inline_patch_diagnostics(k: Kustomization) -> list[Diagnostic]:
    """Every GPU mention inside inline patches (`patch: |`, inline patchesStrategicMerge entries)."""
    has_inline = any(
        isinstance(e, dict) and isinstance(e.get("patch"), str)
        for key in ("patches", "patchesJson6902")
        for e in k.data.get(key) or []
    )
    has_inline = has_inline or any(
        isinstance(e, str) and "\n" in e.strip() for e in k.data.get("patchesStrategicMerge") or []
    )
    if not has_inline:
        return []
    out = []
    for i, line in enumerate(k.text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        m = GPU_TEXT_RE.search(line)
        if m:
            out.append(
                make(
                    "DRA702",
                    f"inline kustomize patch sets {m.group(0).replace('~1', '/')}: it is text "
                    "inside kustomization.yaml and is not rewritten; change it to add a resource claim",
                    Location(k.display, i, m.start() + 1),
                )
            )
    return out


def patch_file_diagnostics(display: str, raw: bytes, ref: PatchRef) -> list[Diagnostic]:
    text = raw.decode("utf-8", "replace")
    where = f"{ref.kustomization}:{ref.line}" if ref.line else ref.kustomization
    found = list(gpu_key_lines(text))
    if not found:  # JSON 6902 patch files name the resource in a path string
        found = [
            (i, m.start() + 1, m.group(0).replace("~1", "/"))
            for i, line in enumerate(text.splitlines(), start=1)
            for m in [GPU_TEXT_RE.search(line)]
            if m
        ]
    return [
        make(
            "DRA701",
            f"{key} in a kustomize patch (listed at {where}); not migrated: a patch merges into its "
            "base, so its ResourceClaimTemplate must be a resource and removing the key here does not remove "
            "it from the base. Migrate the base, then make this patch add resources.claims and "
            "resourceClaims",
            Location(display, line, col),
            resource=key,
        )
        for line, col, key in found
    ]


def add_resource(kustomization: Path, entry: str) -> tuple[bytes, bytes] | str:
    """(old, new) bytes of the kustomization with `entry` in `resources:`, or a reason it cannot be done.

    A minimal text edit through the core's patcher, checked by re-parsing the result.
    """
    from dra_migrate.emit.edits import apply_edits
    from dra_migrate.emit.patch import Patcher, UnsupportedLayout
    from dra_migrate.emit.style import detect_style
    from dra_migrate.plan import Append, Op, SetKey, apply_ops
    from dra_migrate.source.compose import ComposeError, compose_documents
    from dra_migrate.source.plain import to_plain
    from dra_migrate.source.reader import SourceError, parse_source

    raw = kustomization.read_bytes()
    try:
        src = parse_source(str(kustomization), raw)
    except SourceError as exc:
        return exc.message
    if len(src.documents) != 1 or src.documents[0].root is None:
        return "not a single YAML document"
    root = src.documents[0].root
    data = to_plain(root)
    if not isinstance(data, dict):
        return "not a mapping"
    resources = data.get("resources")
    if isinstance(resources, list) and entry in resources:
        return raw, raw
    op: Op
    if isinstance(resources, list):
        op = Append(("resources",), (entry,))
    elif "resources" not in data:
        op = SetKey(("resources",), [entry])
    else:
        return "`resources` is not a list"
    style = detect_style(root, src.newline, False, None, src.text)
    try:
        text = apply_edits(src.text, Patcher(src.text, root, style).apply([op]))
    except UnsupportedLayout as exc:
        return exc.message
    try:
        after = [to_plain(d.root) for d in compose_documents(text)]
    except ComposeError as exc:
        return f"self-check failed: the edited file does not parse ({exc.message})"
    if after != [apply_ops(data, [op])]:
        return "self-check failed: the edit changed more than the resources list"
    return raw, (("\ufeff" if src.bom else "") + text).encode("utf-8")
