"""Errors raised by the DRA CEL environment."""

from __future__ import annotations


class CelCompileError(Exception):
    """The expression would be rejected by the API server (syntax, unknown names, static type errors)."""

    def __init__(self, expression: str, message: str, line: int | None = None, column: int | None = None):
        self.expression = expression
        self.message = message
        self.line = line
        self.column = column
        where = f" at line {line}, column {column}" if line is not None and column is not None else ""
        super().__init__(f"{message}{where}")


class CelEvalError(Exception):
    """Evaluation failed; Kubernetes aborts the scheduling attempt of the pod in this case."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)
