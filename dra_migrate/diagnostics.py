"""Diagnostics: every decision the compiler made or refused to make, with a stable code."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from dra_migrate.frozen_pickle import pickle_by_fields


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class Location:
    file: str
    line: int = 0  # 1-based; 0 = whole file
    col: int = 0  # 1-based; 0 = unknown

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{max(self.col, 1)}"


@pickle_by_fields
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
    """Build a diagnostic; the severity comes from the code registry so it stays consistent."""
    from dra_migrate.codes import CODES

    return Diagnostic(code, CODES[code].severity, message, location, object, dict(data))
