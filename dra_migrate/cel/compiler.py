"""Compile and evaluate DRA device selectors (the `device` CEL environment of Kubernetes)."""

from __future__ import annotations

import functools
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, Evaluator

from dra_migrate.cel import parser_loader
from dra_migrate.cel.checker import Checker, exprlist_items, ident_name, plain_ident
from dra_migrate.cel.device import DeviceView
from dra_migrate.cel.errors import CelCompileError, CelEvalError
from dra_migrate.cel.library import DomainMap, build_functions, cel_type_name
from dra_migrate.cel.projection import Path, device_paths
from dra_migrate.cel.quantity import Quantity
from dra_migrate.cel.semver import Semver

# resource/v1 CELSelectorExpressionMaxLength
MAX_EXPRESSION_LENGTH = 10 * 1024

_FUNCTIONS = build_functions()
_LITERALS: dict[tuple[str, str], Any] = {}
_MAX_LITERALS = 65536
_UNSET = object()


class _DraEvaluator(Evaluator):
    """celpy's interpreter with cel-go map-selection errors, `cel.bind` and namespaced functions."""

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        return _DraEvaluator(ast, activation=self.activation)

    def literal(self, tree: lark.Tree) -> Any:
        # celpy re-parses a literal's text at every visit (string escapes go through a regex and typing casts):
        # its value depends on the token alone and celtypes values are immutable, so it is built once.
        token = tree.children[0] if len(tree.children) == 1 else None
        if not isinstance(token, lark.Token):
            return super().literal(tree)
        key = (token.type, token.value)
        value = _LITERALS.get(key, _UNSET)
        if value is _UNSET:
            value = super().literal(tree)
            if isinstance(value, CELEvalError) or len(_LITERALS) >= _MAX_LITERALS:
                return value  # an error carries its tree: never shared
            _LITERALS[key] = value
        return value

    def member_dot(self, tree: lark.Tree) -> Any:
        member_tree, field = tree.children
        member = self.visit(member_tree)
        if isinstance(member, CELEvalError):
            return member
        if isinstance(member, celtypes.MapType):
            return self.activation.resolve_function("_[_]")(member, celtypes.StringType(str(field)))
        return CELEvalError(f"type '{cel_type_name(member)}' does not support field selection")

    def _is_variable(self, name: str) -> bool:
        try:
            self.activation.identifiers.resolve_name(self.activation.package, name)
        except KeyError:
            return False
        return True

    def member_dot_arg(self, tree: lark.Tree) -> Any:
        member_tree, name_tok = tree.children[0], tree.children[1]
        ns = ident_name(member_tree)
        if ns is not None and not self._is_variable(ns):
            args = exprlist_items(tree)
            if ns == "cel" and str(name_tok) == "bind":
                return self._bind(args)
            fn = self.activation.resolve_function(f"{ns}.{name_tok}")
            return fn(*(self.visit(a) for a in args))
        return super().member_dot_arg(tree)

    def _bind(self, args: list[Any]) -> Any:
        var = plain_ident(args[0])
        init = self.visit(args[1])
        nested = self.sub_evaluator(args[2])
        try:
            return nested.evaluate({var: init})
        except CELEvalError as e:
            return e


class _DraRunner(celpy.InterpretedRunner):
    def evaluate(self, context: Any) -> Any:
        return _DraEvaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)


parser_loader.load(_DraRunner.tree_node_class)  # before celpy builds the parser itself (~0.3 s), if perf/ caches it
_ENV = celpy.Environment(runner_class=_DraRunner)


def _attr_to_cel(v: Any) -> Any:
    if isinstance(v, bool):
        return celtypes.BoolType(v)
    if isinstance(v, int):
        return celtypes.IntType(v)
    if isinstance(v, str):
        return celtypes.StringType(v)
    if isinstance(v, Semver | Quantity):
        return v
    raise TypeError(f"unsupported attribute value {v!r}")


def device_to_cel(device: DeviceView) -> celtypes.MapType:
    attributes = DomainMap(
        {
            celtypes.StringType(domain): celtypes.MapType(
                {celtypes.StringType(k): _attr_to_cel(v) for k, v in vals.items()}
            )
            for domain, vals in device.attributes.items()
        }
    )
    capacity = DomainMap(
        {
            celtypes.StringType(domain): celtypes.MapType(
                {celtypes.StringType(k): q for k, q in vals.items()}
            )
            for domain, vals in device.capacity.items()
        }
    )
    return celtypes.MapType(
        {
            celtypes.StringType("driver"): celtypes.StringType(device.driver),
            celtypes.StringType("attributes"): attributes,
            celtypes.StringType("capacity"): capacity,
            celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(
                device.allow_multiple_allocations
            ),
        }
    )


class CelDevice:
    """A device with its CEL value built once, for evaluating many selectors on it.

    Sharing one value between evaluations is safe: CEL has no mutation, and neither celpy's operators nor
    our library functions change their operands (tests/test_cel_speed.py checks the value after use).
    """

    __slots__ = ("name", "value", "view")

    def __init__(self, view: DeviceView):
        self.view = view
        self.name = view.name
        self.value = device_to_cel(view)


class CompiledSelector:
    """A selector that passed the same checks as the API server; evaluate it per device."""

    def __init__(self, expression: str, program: Any, device_paths: frozenset[Path] = frozenset({()})):
        self.expression = expression
        self._program = program
        # The parts of `device` the expression can read (dra_migrate.cel.projection); () = the whole device.
        self.device_paths = device_paths

    def evaluate(self, device: DeviceView | CelDevice) -> bool:
        """True/False as the scheduler decides; CelEvalError where Kubernetes aborts allocation."""
        value = device.value if isinstance(device, CelDevice) else device_to_cel(device)
        try:
            result = self._program.evaluate({"device": value})
        except CELEvalError as e:
            raise CelEvalError(str(e.args[0]) if e.args else "evaluation error") from e
        if not isinstance(result, celtypes.BoolType):
            raise CelEvalError(f"CEL result of type {cel_type_name(result)} could not be converted to bool")
        return bool(result)

    def __repr__(self) -> str:
        return f"CompiledSelector({self.expression!r})"


def _syntax_error(expression: str, line: int | None, column: int | None) -> str:
    """Where the parser stopped. celpy's CELParseError text is only a window of the source cut at a fixed width,
    which starts mid-word on a long expression (`ttributes[...]`) and says nothing else: name the token instead."""
    lines = expression.splitlines() or [""]
    if line is None or column is None or not 1 <= line <= len(lines):
        return "syntax error"
    near = lines[line - 1][column - 1:]
    if not near.strip():
        return f"syntax error: the expression ends unexpectedly (column {column})"
    shown = near if len(near) <= 24 else near[:24] + "..."
    where = f"line {line}, column {column}" if len(lines) > 1 else f"column {column}"
    return f"syntax error at {shown!r} ({where})"


@functools.lru_cache(maxsize=2048)
def compile_selector(expression: str, *, consumable_capacity: bool = True) -> CompiledSelector:
    """Compile like the API server does; raises CelCompileError with a position where possible.

    `consumable_capacity` mirrors the DRAConsumableCapacity gate, which alone makes
    `device.allowMultipleAllocations` a declared field.
    """
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise CelCompileError(expression, f"expression is longer than {MAX_EXPRESSION_LENGTH} characters")
    try:
        ast = _ENV.compile(expression)
    except CELParseError as e:
        raise CelCompileError(expression, _syntax_error(expression, e.line, e.column), e.line, e.column) from e
    checker = Checker(expression, {"device": "Device"})
    if not consumable_capacity:
        checker.device_fields_exclude = {"allowMultipleAllocations"}
    checker.check_result(ast)
    program = _ENV.program(ast, functions=_FUNCTIONS)
    return CompiledSelector(expression, program, device_paths(ast))
