"""Kubernetes DRA CEL environment: compile and evaluate device selectors exactly as the scheduler does."""

from dra_migrate.cel.compiler import CompiledSelector, compile_selector
from dra_migrate.cel.device import DeviceView, device_from_slice
from dra_migrate.cel.errors import CelCompileError, CelEvalError
from dra_migrate.cel.literal import regex_literal_escape, single_quoted_literal, string_literal
from dra_migrate.cel.quantity import Quantity, QuantityError, parse_quantity
from dra_migrate.cel.semver import Semver, SemverError, parse_semver

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
