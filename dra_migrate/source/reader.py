"""Read a manifest file: bytes → text with its encoding facts → positioned documents."""

from __future__ import annotations

import bisect
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dra_migrate.source.compose import ComposeError, compose_documents
from dra_migrate.source.nodes import Document, Scalar
from dra_migrate.source.realpaths import real_dir
from dra_migrate.source.templates import TEMPLATE_RE, TemplateDocument, boundaries_unambiguous, complex_key, mask

BOM = "\ufeff"


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
    # the documents left out as templates (composed as empty ones)
    template_documents: list[TemplateDocument] = field(default_factory=list)

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
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


STDIN = "<stdin>"  # the display name of text read from standard input


def parse_source(
    path: str, raw: bytes, *, helm_template: bool = False, documents: list[Document] | None = None
) -> SourceFile:
    """Decode and compose a file. Raises SourceError with a stable code on bad input.

    documents: the file's text already composed (the self-check's parse of an output), not parsed again."""
    text, bom = decode(raw)
    newline = "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"
    stripped = text.lstrip()
    # stdin has no name: JSON text there is JSON (kubectl reads a text that starts with `{` as JSON)
    is_json = stripped.startswith(("{", "[")) and (path.endswith(".json") or path == STDIN)
    src = SourceFile(path, raw, text, bom, newline, is_json)
    src.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    template_match = TEMPLATE_RE.search(text) if helm_template else None
    if template_match:
        line, col = src.line_col(template_match.start())
        raise SourceError("DRA102", "Helm chart template: templates are not YAML until rendered", line, col)
    if "\t" in text:
        _check_tabs(src)
    if documents is not None:
        src.documents = documents
    else:
        try:
            src.documents, found = compose_plain_documents(text)
        except ComposeError as exc:
            raise SourceError(exc.code, exc.message, exc.line, exc.col) from None
        src.template_documents = found
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


def compose_plain_documents(text: str) -> tuple[list[Document], list[TemplateDocument]]:
    """The documents of `text`, and the template documents among them (composed as empty ones).

    A file with template text that is YAML all the same (`"{{ x }}"` in a quoted string) composes as it is.
    Otherwise the documents holding template text are masked out (dra_migrate.source.templates) when the
    boundaries are unambiguous; when they are not, or nothing can be masked, the whole file is a template
    (ComposeError DRA102)."""
    template_match = TEMPLATE_RE.search(text)
    try:
        docs = compose_documents(text)
    except ComposeError as exc:
        if exc.code != "DRA101" or template_match is None:
            raise
        docs = None
    if template_match is None:
        assert docs is not None
        return docs, []
    if docs is not None and all(complex_key(d.root) is None for d in docs):
        return docs, []
    masked, found = mask(text) if boundaries_unambiguous(text) else (text, [])
    if found:
        try:
            return compose_documents(masked), found
        except ComposeError:
            pass  # something else in the file is not YAML either: the whole file, as a template
    line = text.count("\n", 0, template_match.start()) + 1
    col = template_match.start() - (text.rfind("\n", 0, template_match.start()) + 1) + 1
    raise ComposeError("DRA102", "template syntax ({{ }}): not plain YAML until rendered", line, col)


def is_helm_template_path(path: Path | str) -> bool:
    """A file under a chart's templates/ directory (a Chart.yaml beside templates/)."""
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
