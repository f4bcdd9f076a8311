"""Diagnostics: every decision the compiler made or refused to make, with a stable code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dra_migrate.diagnostics.codes import CODES
from dra_migrate.diagnostics.severity import Severity as Severity  # re-exported: most callers import it from here


@dataclass(frozen=True, slots=True)
class Location:
    file: str
    line: int = 0  # 1-based; 0 = whole file
    col: int = 0  # 1-based; 0 = unknown

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{max(self.col, 1)}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    location: Location
    object: str = ""  # kind/namespace/name of the object concerned, if any
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "file": self.location.file,
            "line": self.location.line,
            "column": self.location.col,
            "object": self.object,
        }
        if self.data:
            out["data"] = self.data
        return out

    def render(self) -> str:
        obj = f" [{self.object}]" if self.object else ""
        return f"{self.location}: {self.severity.value} {self.code}{obj}: {self.message}"


def make(code: str, message: str, location: Location, object: str = "", **data: object) -> Diagnostic:
    """Build a diagnostic; the severity comes from the code registry so it stays consistent (a retired code is
    not in CODES: emitting one fails here)."""
    return Diagnostic(code, CODES[code].severity, message, location, object, dict(data))
