"""Read a manifest file: bytes → text with its encoding facts → positioned documents."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dra_migrate.source.compose import ComposeError, compose_documents
from dra_migrate.source.nodes import Document, Mapping, Node, Scalar, Sequence

BOM = "\ufeff"
_TEMPLATE_RE = re.compile(r"\{\{-?\s*[-.$a-zA-Z(/\"]|\{%")


@dataclass(slots=True)
class SourceFile:
    path: str  # as shown to the user
    raw: bytes
    text: str  # decoded, BOM removed
    bom: bool
    newline: str  # "\n" or "\r\n" (dominant style)
    is_json: bool
    documents: list[Document] = field(default_factory=list)
    line_starts: list[int] = field(default_factory=list)

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        import bisect

        i = bisect.bisect_right(self.line_starts, offset) - 1
        return i + 1, offset - self.line_starts[i] + 1


class SourceError(Exception):
    def __init__(self, code: str, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.code, self.message, self.line, self.col = code, message, line, col


def decode(raw: bytes) -> tuple[str, bool]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SourceError(
            "DRA103", f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})", line
        ) from None
    bom = text.startswith(BOM)
    return (text[1:] if bom else text), bom


def parse_source(
    path: str, raw: bytes, *, helm_template: bool = False, documents: list[Document] | None = None
) -> SourceFile:
    """Decode and compose a file. Raises SourceError with a stable code on bad input.

    documents: the file's text already composed (the self-check's parse of an output), not parsed again."""
    text, bom = decode(raw)
    newline = "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"
    stripped = text.lstrip()
    is_json = stripped.startswith(("{", "[")) and path.endswith(".json")
    src = SourceFile(path, raw, text, bom, newline, is_json)
    src.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    template_match = _TEMPLATE_RE.search(text)
    if helm_template and template_match:
        line, col = src.line_col(template_match.start())
        raise SourceError("DRA102", "Helm chart template: templates are not YAML until rendered", line, col)
    if "\t" in text:
        _check_tabs(src)
    try:
        src.documents = compose_documents(text) if documents is None else documents
    except ComposeError as exc:
        if exc.code == "DRA101" and template_match:
            line, col = src.line_col(template_match.start())
            raise SourceError("DRA102", "template syntax ({{ }}): not plain YAML until rendered", line, col) from None
        raise SourceError(exc.code, exc.message, exc.line, exc.col) from None
    if template_match:
        for doc in src.documents:
            bad = _complex_key(doc.root)
            if bad is not None:
                line, col = src.line_col(bad.start)
                raise SourceError("DRA102", "template syntax ({{ }}): not plain YAML until rendered", line, col)
    if is_json:
        try:
            json.loads(text)
        except ValueError:
            src.is_json = False  # YAML flow syntax in a .json file: edit it as YAML flow
    return src


def _check_tabs(src: SourceFile) -> None:
    # YAML forbids tabs in indentation; the parser reports it, but with a less helpful message.
    for i, line in enumerate(src.text.split("\n")):
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if "\t" not in indent or not line.strip() or line.lstrip().startswith("#"):
            continue
        # a tab after content is fine; a tab in block indentation is not, but flow/JSON tolerates it
        if line.lstrip(" \t")[:1] not in ("}", "]", '"', "{", "[") and not src.path.endswith(".json"):
            raise SourceError("DRA112", "tab character used for indentation", i + 1, len(indent))


def _complex_key(node: Node | None) -> Node | None:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Mapping):
            for k, v in n.items:
                if isinstance(k, (Mapping, Sequence)):
                    return k
                stack.append(v)
        elif isinstance(n, Sequence):
            stack.extend(n.items)
    return None


def is_helm_template_path(path: Path | str) -> bool:
    """A file under a chart's templates/ directory (a Chart.yaml beside templates/)."""
    from dra_migrate.discover import real_dir

    directory, name = os.path.split(os.fspath(path))
    real = real_dir(directory or ".")  # cached per directory: asked for every file that may hold GPU keys
    if "templates" not in real and name != "templates":
        return False
    parts = Path(real, name).parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == "templates":
            return (Path(*parts[:i]) / "Chart.yaml").exists()
    return False


def scalar_text(src: SourceFile, node: Scalar) -> str:
    return src.text[node.start : node.end]
