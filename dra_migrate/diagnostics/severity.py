"""How bad a diagnostic is: its own module so that the code registry (codes.py) and the diagnostic type
(model.py) both use it without importing each other."""

from __future__ import annotations

from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]
