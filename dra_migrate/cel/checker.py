"""Static checks that cel-go's type checker performs in Kubernetes and celpy (dynamically typed) does not.

A small type inference over celpy's parse tree: undeclared identifiers and functions, undefined
`device` fields, overload resolution for the Kubernetes libraries (receiver style vs global style as
declared upstream), operator operand types, invalid escapes in string literals, constant regexes, and
the bool-or-unknown result rule of compile.go. Unknown (attribute) values are typed `dyn`/`any` and
match anything, exactly as the AnyType of DRA attributes does in cel-go.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import lark
import re2
from celpy.evaluation import celstr

from dra_migrate.cel.errors import CelCompileError
from dra_migrate.cel.library import compile_re2, re2_error_text

DYN = "dyn"
MAP_FAMILY = {"map", "AttrDomains", "AttrMap", "CapDomains", "CapMap"}
SIZEABLE = {"string", "bytes", "list"} | MAP_FAMILY
NUMERIC = {"int", "uint", "double"}
ORDERED = NUMERIC | {"string", "bool", "bytes", "timestamp", "duration"}

DISPLAY = {
    "Quantity": "kubernetes.Quantity",
    "Semver": "kubernetes.Semver",
    "Device": "kubernetes.DRADevice",
    "AttrDomains": "map(string, map(string, any))",
    "AttrMap": "map(string, any)",
    "CapDomains": "map(string, map(string, kubernetes.Quantity))",
    "CapMap": "map(string, kubernetes.Quantity)",
    "null": "null_type",
    "list": "list(dyn)",
    "map": "map(dyn, dyn)",
    "timestamp": "google.protobuf.Timestamp",
    "duration": "google.protobuf.Duration",
}

Overload = tuple[str | None, tuple[str, ...], str]


_CMP: list[Overload] = [("Quantity", ("Quantity",), "bool"), ("Semver", ("Semver",), "bool")]
_STR0: list[Overload] = [("string", (), "string")]
_STRPRED: list[Overload] = [("string", ("string",), "bool")]

# Declarations as in kubernetes/apiserver pkg/cel/library (quantity.go, semverlib.go, regex.go, lists.go),
# cel-go ext strings v2 and ext sets, and the CEL standard library.
SIGNATURES: dict[str, list[Overload]] = {
    "quantity": [(None, ("string",), "Quantity")],
    "isQuantity": [(None, ("string",), "bool")],
    # quantity.go declares sign as a global overload only: sign(q), not q.sign().
    "sign": [(None, ("Quantity",), "int")],
    "isGreaterThan": _CMP,
    "isLessThan": _CMP,
    "compareTo": [("Quantity", ("Quantity",), "int"), ("Semver", ("Semver",), "int")],
    "asApproximateFloat": [("Quantity", (), "double")],
    "asInteger": [("Quantity", (), "int")],
    "isInteger": [("Quantity", (), "bool")],
    "add": [("Quantity", ("Quantity",), "Quantity"), ("Quantity", ("int",), "Quantity")],
    "sub": [("Quantity", ("Quantity",), "Quantity"), ("Quantity", ("int",), "Quantity")],
    "semver": [(None, ("string",), "Semver"), (None, ("string", "bool"), "Semver")],
    "isSemver": [(None, ("string",), "bool"), (None, ("string", "bool"), "bool")],
    "major": [("Semver", (), "int")],
    "minor": [("Semver", (), "int")],
    "patch": [("Semver", (), "int")],
    "charAt": [("string", ("int",), "string")],
    "indexOf": [
        ("string", ("string",), "int"),
        ("string", ("string", "int"), "int"),
        ("list", (DYN,), "int"),
    ],
    "lastIndexOf": [
        ("string", ("string",), "int"),
        ("string", ("string", "int"), "int"),
        ("list", (DYN,), "int"),
    ],
    "lowerAscii": _STR0,
    "upperAscii": _STR0,
    "trim": _STR0,
    "replace": [
        ("string", ("string", "string"), "string"),
        ("string", ("string", "string", "int"), "string"),
    ],
    "split": [("string", ("string",), "list"), ("string", ("string", "int"), "list")],
    "substring": [("string", ("int",), "string"), ("string", ("int", "int"), "string")],
    "join": [("list", (), "string"), ("list", ("string",), "string")],
    "matches": [("string", ("string",), "bool"), (None, ("string", "string"), "bool")],
    "find": [("string", ("string",), "string")],
    "findAll": [("string", ("string",), "list"), ("string", ("string", "int"), "list")],
    "contains": _STRPRED,
    "startsWith": _STRPRED,
    "endsWith": _STRPRED,
    "size": [(None, ("sizeable",), "int"), ("sizeable", (), "int")],
    "isSorted": [("list", (), "bool")],
    "sum": [("list", (), DYN)],
    "min": [("list", (), DYN)],
    "max": [("list", (), DYN)],
    "sets.contains": [(None, ("list", "list"), "bool")],
    "sets.equivalent": [(None, ("list", "list"), "bool")],
    "sets.intersects": [(None, ("list", "list"), "bool")],
    "int": [(None, (DYN,), "int")],
    "uint": [(None, (DYN,), "uint")],
    "double": [(None, (DYN,), "double")],
    "string": [(None, (DYN,), "string")],
    "bool": [(None, (DYN,), "bool")],
    "bytes": [(None, (DYN,), "bytes")],
    "dyn": [(None, (DYN,), DYN)],
    "type": [(None, (DYN,), "type")],
    "timestamp": [(None, ("string",), "timestamp")],
    "duration": [(None, ("string",), "duration")],
}
MACROS = {"all", "exists", "exists_one", "map", "filter"}
NAMESPACES = {"sets"}
_REGEX_FUNCS = {"matches", "find", "findAll"}

# cel-go string escapes; anything else after a backslash is a syntax error.
_ESCAPE = re.compile(r"\\(?:[abfnrtv\"'\\`?]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2})")


def display(t: str) -> str:
    return DISPLAY.get(t, t)


def _accepts(expected: str, actual: str) -> bool:
    if expected == DYN or actual == DYN:
        return True
    if expected == "sizeable":
        return actual in SIZEABLE
    if expected == "map":
        return actual in MAP_FAMILY
    return expected == actual


def _pos(node: Any) -> tuple[int | None, int | None]:
    if isinstance(node, lark.Token):
        return node.line, node.column
    meta = getattr(node, "meta", None)
    if meta is not None and not getattr(meta, "empty", True):
        return meta.line, meta.column
    return None, None


def ident_name(member_tree: lark.Tree) -> str | None:
    """`x` when the tree is a bare identifier (member → primary → ident)."""
    node: Any = member_tree
    while isinstance(node, lark.Tree) and node.data in ("member", "primary") and len(node.children) == 1:
        node = node.children[0]
    if isinstance(node, lark.Tree) and node.data == "ident":
        return str(node.children[0])
    return None


def exprlist_items(tree: lark.Tree) -> list[Any]:
    if len(tree.children) < 3 or tree.children[2] is None:
        return []
    return list(tree.children[2].children)


class Checker:
    def __init__(self, expression: str, variables: dict[str, str]):
        self.expression = expression
        self.scopes: list[dict[str, str]] = [dict(variables)]
        self.device_fields_exclude: set[str] = set()

    def fail(self, node: Any, message: str) -> CelCompileError:
        line, column = _pos(node)
        return CelCompileError(self.expression, message, line, column)

    def lookup(self, name: str) -> str | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def check_result(self, tree: lark.Tree) -> str:
        t = self.infer(tree)
        if t not in ("bool", DYN):
            raise self.fail(tree, f"must evaluate to bool or the unknown type, not {display(t)}")
        return t

    def infer(self, node: Any) -> str:
        method = getattr(self, f"t_{node.data}", None)
        if method is None:
            raise self.fail(node, f"unsupported syntax: {node.data}")
        result: str = method(node)
        return result

    # --- operators ---------------------------------------------------------------------------------

    def _passthrough(self, node: lark.Tree) -> str:
        return self.infer(node.children[0])

    def t_expr(self, node: lark.Tree) -> str:
        if len(node.children) == 1:
            return self.infer(node.children[0])
        cond, a, b = (self.infer(c) for c in node.children)
        if not _accepts("bool", cond):
            raise self.fail(
                node, f"found no matching overload for '_?_:_' applied to '({display(cond)}, ...)'"
            )
        if a == b or b == DYN or b == "null":
            return a
        if a == DYN or a == "null":
            return b
        raise self.fail(
            node, f"found no matching overload for '_?_:_' applied to '(bool, {display(a)}, {display(b)})'"
        )

    def _logical(self, node: lark.Tree, op: str) -> str:
        if len(node.children) == 1:
            return self.infer(node.children[0])
        a, b = (self.infer(c) for c in node.children)
        if not (_accepts("bool", a) and _accepts("bool", b)):
            raise self.fail(
                node, f"found no matching overload for '{op}' applied to '({display(a)}, {display(b)})'"
            )
        return "bool"

    def t_conditionalor(self, node: lark.Tree) -> str:
        return self._logical(node, "_||_")

    def t_conditionaland(self, node: lark.Tree) -> str:
        return self._logical(node, "_&&_")

    def t_relation(self, node: lark.Tree) -> str:
        if len(node.children) == 1:
            return self.infer(node.children[0])
        op_tree, right = node.children
        a = self.infer(op_tree.children[0])
        b = self.infer(right)
        op = op_tree.data
        if op in ("relation_eq", "relation_ne"):
            name = "_==_" if op == "relation_eq" else "_!=_"
            if (
                a != DYN
                and b != DYN
                and a != b
                and "null" not in (a, b)
                and not (a in MAP_FAMILY and b in MAP_FAMILY)
            ):
                raise self.fail(
                    op_tree,
                    f"found no matching overload for '{name}' applied to '({display(a)}, {display(b)})'",
                )
            return "bool"
        if op == "relation_in":
            if b in ("AttrDomains", "AttrMap", "CapDomains", "CapMap"):
                if not _accepts("string", a):
                    raise self.fail(
                        op_tree,
                        f"found no matching overload for '@in' applied to '({display(a)}, {display(b)})'",
                    )
            elif b not in ("list", "map", DYN):
                raise self.fail(
                    op_tree, f"found no matching overload for '@in' applied to '({display(a)}, {display(b)})'"
                )
            return "bool"
        name = {"relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_"}[op]
        ok = (
            (a == DYN or a in ORDERED)
            and (b == DYN or b in ORDERED)
            and (DYN in (a, b) or a == b or (a in NUMERIC and b in NUMERIC))
        )
        if not ok:
            raise self.fail(
                op_tree, f"found no matching overload for '{name}' applied to '({display(a)}, {display(b)})'"
            )
        return "bool"

    def _arith(self, node: lark.Tree, names: dict[str, str]) -> str:
        if len(node.children) == 1:
            return self.infer(node.children[0])
        op_tree, right = node.children
        a = self.infer(op_tree.children[0])
        b = self.infer(right)
        name = names[op_tree.data]
        allowed = set(NUMERIC)
        if name == "_+_":
            allowed |= {"string", "list", "bytes"}
        if name == "_%_":
            allowed = {"int", "uint"}
        ok = (a == DYN or a in allowed) and (b == DYN or b in allowed) and (DYN in (a, b) or a == b)
        if not ok:
            raise self.fail(
                op_tree, f"found no matching overload for '{name}' applied to '({display(a)}, {display(b)})'"
            )
        return a if a != DYN else b

    def t_addition(self, node: lark.Tree) -> str:
        return self._arith(node, {"addition_add": "_+_", "addition_sub": "_-_"})

    def t_multiplication(self, node: lark.Tree) -> str:
        return self._arith(
            node, {"multiplication_mul": "_*_", "multiplication_div": "_/_", "multiplication_mod": "_%_"}
        )

    def t_unary(self, node: lark.Tree) -> str:
        if len(node.children) == 1:
            return self.infer(node.children[0])
        op, operand = node.children
        t = self.infer(operand)
        if op.data == "unary_not" and not _accepts("bool", t):
            raise self.fail(node, f"found no matching overload for '!_' applied to '({display(t)})'")
        if op.data == "unary_neg" and not (t == DYN or t in ("int", "double")):
            raise self.fail(node, f"found no matching overload for '-_' applied to '({display(t)})'")
        return t

    # --- members -----------------------------------------------------------------------------------

    t_member = _passthrough
    t_primary = _passthrough

    def t_paren_expr(self, node: lark.Tree) -> str:
        return self.infer(node.children[0])

    def _select(self, node: Any, receiver: str, field: str | None) -> str:
        if receiver == "Device":
            fields = {
                "driver": "string",
                "attributes": "AttrDomains",
                "capacity": "CapDomains",
                "allowMultipleAllocations": "bool",
            }
            if field is None or field not in fields or field in self.device_fields_exclude:
                raise self.fail(node, f"undefined field '{field}'")
            return fields[field]
        return {"AttrDomains": "AttrMap", "CapDomains": "CapMap", "CapMap": "Quantity"}.get(receiver, DYN)

    def t_member_dot(self, node: lark.Tree) -> str:
        member, field = node.children
        receiver = self.infer(member)
        if receiver not in MAP_FAMILY | {"Device", DYN}:
            raise self.fail(field, f"type '{display(receiver)}' does not support field selection")
        return self._select(field, receiver, str(field))

    def t_member_index(self, node: lark.Tree) -> str:
        member, index = node.children
        receiver = self.infer(member)
        key = self.infer(index)
        if receiver in ("AttrDomains", "AttrMap", "CapDomains", "CapMap"):
            if not _accepts("string", key):
                raise self.fail(
                    index,
                    f"found no matching overload for '_[_]' applied to "
                    f"'({display(receiver)}, {display(key)})'",
                )
            return self._select(index, receiver, None)
        if receiver == "list" and not (key == DYN or key in ("int", "uint")):
            raise self.fail(
                index, f"found no matching overload for '_[_]' applied to '(list(dyn), {display(key)})'"
            )
        if receiver not in ("list", "map", DYN):
            raise self.fail(
                index,
                f"found no matching overload for '_[_]' applied to '({display(receiver)}, {display(key)})'",
            )
        return DYN

    def t_member_object(self, node: lark.Tree) -> str:
        raise self.fail(node, "message construction is not available in the DRA environment")

    def t_member_dot_arg(self, node: lark.Tree) -> str:
        member, name_tok = node.children[0], node.children[1]
        name = str(name_tok)
        args = exprlist_items(node)
        ns = ident_name(member)
        if ns is not None and self.lookup(ns) is None:
            if ns == "cel" and name == "bind":
                return self._bind(node, args)
            qualified = f"{ns}.{name}"
            if ns in NAMESPACES and qualified in SIGNATURES:
                return self._call(name_tok, qualified, None, args)
            raise self.fail(name_tok, f"undeclared reference to '{qualified}'")
        if name in MACROS:
            return self._macro(node, name, member, args)
        receiver = self.infer(member)
        return self._call(name_tok, name, receiver, args)

    def _macro(self, node: lark.Tree, name: str, member: Any, args: list[Any]) -> str:
        receiver = self.infer(member)
        if len(args) != 2:
            raise self.fail(
                node,
                f"{name}() with {len(args)} arguments is not supported (two-variable "
                "comprehensions are not available in this tool)",
            )
        var = plain_ident(args[0]) if _is_plain_ident_expr(args[0]) else None
        if var is None:
            raise self.fail(args[0], f"argument to {name}() must be a simple name")
        if receiver not in MAP_FAMILY | {"list", DYN}:
            raise self.fail(
                node, f"expression of type '{display(receiver)}' cannot be range of a comprehension"
            )
        elem = "string" if receiver in ("AttrDomains", "AttrMap", "CapDomains", "CapMap") else DYN
        self.scopes.append({var: elem})
        try:
            body = self.infer(args[1])
        finally:
            self.scopes.pop()
        if name in ("all", "exists", "exists_one", "filter") and not _accepts("bool", body):
            raise self.fail(args[1], f"{name}() predicate must be bool, not {display(body)}")
        return "list" if name in ("map", "filter") else "bool"

    def _bind(self, node: lark.Tree, args: list[Any]) -> str:
        if len(args) != 3 or not _is_plain_ident_expr(args[0]):
            raise self.fail(node, "cel.bind() requires (name, init, expression)")
        var = plain_ident(args[0])
        init = self.infer(args[1])
        self.scopes.append({var: init})
        try:
            return self.infer(args[2])
        finally:
            self.scopes.pop()

    def _call(self, at: Any, name: str, receiver: str | None, args: list[Any]) -> str:
        overloads = SIGNATURES.get(name)
        if overloads is None:
            raise self.fail(at, f"undeclared reference to '{name}'")
        arg_types = [self.infer(a) for a in args]
        candidates = [
            o
            for o in overloads
            if (o[0] is None) == (receiver is None)
            and (receiver is None or o[0] is None or _accepts(o[0], receiver))
            and len(o[1]) == len(arg_types)
            and all(_accepts(e, a) for e, a in zip(o[1], arg_types, strict=True))
        ]
        if not candidates:
            shown = ", ".join(display(t) for t in arg_types)
            target = f"{display(receiver)}." if receiver is not None else ""
            raise self.fail(at, f"found no matching overload for '{name}' applied to '{target}({shown})'")
        if name in _REGEX_FUNCS:
            pattern_node = args[-1] if receiver is not None else args[1]
            if name == "findAll" and len(args) == 2:
                pattern_node = args[0]
            self._check_constant_regex(pattern_node)
        results = {c[2] for c in candidates}
        return results.pop() if len(results) == 1 else DYN

    def _check_constant_regex(self, node: Any) -> None:
        lit = _string_literal_value(node)
        if lit is None:
            return
        try:
            compile_re2(lit)
        except re2.error as e:
            raise self.fail(node, f"invalid regular expression {lit!r}: {re2_error_text(e)}") from e

    def t_ident_arg(self, node: lark.Tree) -> str:
        name_tok = node.children[0]
        args = (
            list(node.children[1].children) if len(node.children) > 1 and node.children[1] is not None else []
        )
        if str(name_tok) == "has":
            if len(args) != 1 or not _is_field_selection(args[0]):
                raise self.fail(node, "invalid argument to has() macro")
            self.infer(args[0])
            return "bool"
        return self._call(name_tok, str(name_tok), None, args)

    def t_ident(self, node: lark.Tree) -> str:
        name = str(node.children[0])
        t = self.lookup(name)
        if t is None:
            raise self.fail(node, f"undeclared reference to '{name}'")
        return t

    def t_dot_ident(self, node: lark.Tree) -> str:
        return self.t_ident(node)

    def t_dot_ident_arg(self, node: lark.Tree) -> str:
        raise self.fail(node, "leading-dot function calls are not supported")

    def t_list_lit(self, node: lark.Tree) -> str:
        for child in _children_exprs(node):
            self.infer(child)
        return "list"

    def t_map_lit(self, node: lark.Tree) -> str:
        for child in _children_exprs(node):
            self.infer(child)
        return "map"

    def t_literal(self, node: lark.Tree) -> str:
        tok: lark.Token = node.children[0]  # type: ignore[assignment]
        kind = tok.type
        if kind in ("STRING_LIT", "MLSTRING_LIT", "BYTES_LIT"):
            self._check_string_token(tok)
        return {
            "INT_LIT": "int",
            "UINT_LIT": "uint",
            "FLOAT_LIT": "double",
            "STRING_LIT": "string",
            "MLSTRING_LIT": "string",
            "BYTES_LIT": "bytes",
            "BOOL_LIT": "bool",
            "NULL_LIT": "null",
        }[kind]

    def _check_string_token(self, tok: lark.Token) -> None:
        text = str(tok)
        body = text.lstrip("bB")
        raw = body[:1] in ("r", "R")
        if raw:
            body = body[1:]
        quote = 3 if body[:3] in ('"""', "'''") else 1
        inner = body[quote:-quote]
        if quote == 3 and ("\n" in inner or "\r" in inner):
            # celpy drops line breaks inside triple-quoted strings; refuse rather than mis-evaluate.
            raise self.fail(tok, "multi-line string literals are not supported by this tool")
        if raw:
            return
        i = 0
        while i < len(inner):
            if inner[i] == "\\":
                m = _ESCAPE.match(inner, i)
                if m is None:
                    raise self.fail(tok, f"invalid escape sequence in string literal at offset {i}")
                esc = m.group(0)
                if (
                    esc[1] in "uU"
                    and 0xD800 <= int(esc[2:], 16) <= 0xDFFF
                    or esc[1] == "U"
                    and int(esc[2:], 16) > 0x10FFFF
                ):
                    raise self.fail(tok, f"invalid unicode code point in escape {esc}")
                i = m.end()
            else:
                i += 1


def _children_exprs(node: lark.Tree) -> Iterator[Any]:
    for child in node.children:
        if isinstance(child, lark.Tree) and child.data in ("exprlist", "mapinits"):
            yield from child.children


def _unwrap(node: Any) -> Any:
    """Descend through single-child precedence levels to the interesting node."""
    while (
        isinstance(node, lark.Tree)
        and len(node.children) == 1
        and node.data
        in (
            "expr",
            "conditionalor",
            "conditionaland",
            "relation",
            "addition",
            "multiplication",
            "unary",
            "member",
            "primary",
        )
    ):
        node = node.children[0]
    return node


def _is_plain_ident_expr(expr: Any) -> bool:
    node = _unwrap(expr)
    return isinstance(node, lark.Tree) and node.data == "ident"


def plain_ident(expr: Any) -> str:
    return str(_unwrap(expr).children[0])


def _is_field_selection(expr: Any) -> bool:
    node = _unwrap(expr)
    return isinstance(node, lark.Tree) and node.data == "member_dot"


def _string_literal_value(expr: Any) -> str | None:
    node = _unwrap(expr)
    if isinstance(node, lark.Tree) and node.data == "literal":
        tok: lark.Token = node.children[0]  # type: ignore[assignment]
        if tok.type in ("STRING_LIT", "MLSTRING_LIT"):
            return str(celstr(tok))
    return None
