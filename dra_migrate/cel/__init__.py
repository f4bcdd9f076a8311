"""Kubernetes DRA CEL environment: compile and evaluate device selectors exactly as the scheduler does.

The names below are imported on first use: building the CEL parser costs about a third of a second, which a
run that writes no selector (or a pre-commit run) should not pay.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dra_migrate.cel.compiler import CompiledSelector, compile_selector
    from dra_migrate.cel.device import DeviceView, device_from_slice
    from dra_migrate.cel.errors import CelCompileError, CelEvalError
    from dra_migrate.cel.literal import regex_literal_escape, single_quoted_literal, string_literal
    from dra_migrate.cel.quantity import Quantity, QuantityError, parse_quantity
    from dra_migrate.cel.semver import Semver, SemverError, parse_semver

_WHERE = {
    "CompiledSelector": "compiler",
    "compile_selector": "compiler",
    "DeviceView": "device",
    "device_from_slice": "device",
    "CelCompileError": "errors",
    "CelEvalError": "errors",
    "regex_literal_escape": "literal",
    "single_quoted_literal": "literal",
    "string_literal": "literal",
    "Quantity": "quantity",
    "QuantityError": "quantity",
    "parse_quantity": "quantity",
    "Semver": "semver",
    "SemverError": "semver",
    "parse_semver": "semver",
}

__all__ = [
    "CelCompileError",
    "CelEvalError",
    "CompiledSelector",
    "DeviceView",
    "Quantity",
    "QuantityError",
    "Semver",
    "SemverError",
    "compile_selector",
    "device_from_slice",
    "parse_quantity",
    "parse_semver",
    "regex_literal_escape",
    "single_quoted_literal",
    "string_literal",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
