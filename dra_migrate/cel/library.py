"""Runtime functions and operator semantics of the Kubernetes DRA CEL environment on top of celpy.

celpy dispatches both `f(x, y)` and `x.f(y)` to `functions["f"](x, y)` and operators to
`functions["_==_"]` etc., so this table overrides celpy where its Python-flavoured semantics differ from
cel-go (heterogeneous equality, cross-type numeric ordering, Quantity/Semver opacity, error messages).
Functions never raise: failures are returned as celpy CELEvalError values so that `&&`/`||` can absorb
them exactly like cel-go does.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from functools import wraps
from typing import Any

import re2
from celpy import celtypes
from celpy.evaluation import CELEvalError, base_functions

from dra_migrate.cel.quantity import Quantity, QuantityError, is_quantity, parse_quantity
from dra_migrate.cel.semver import Semver, SemverError, is_semver, parse_semver

_NUMERIC = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)


class _Fail(Exception):
    """Raised inside library functions; turned into a CEL error value."""


def err(message: str) -> CELEvalError:
    return CELEvalError(message)


def cel_type_name(v: Any) -> str:
    if isinstance(v, celtypes.BoolType):
        return "bool"
    if isinstance(v, celtypes.UintType):
        return "uint"
    if isinstance(v, celtypes.IntType):
        return "int"
    if isinstance(v, celtypes.DoubleType):
        return "double"
    if isinstance(v, celtypes.StringType):
        return "string"
    if isinstance(v, celtypes.BytesType):
        return "bytes"
    if isinstance(v, celtypes.ListType):
        return "list"
    if isinstance(v, celtypes.MapType):
        return "map"
    if isinstance(v, Quantity):
        return "kubernetes.Quantity"
    if isinstance(v, Semver):
        return "kubernetes.Semver"
    if v is None:
        return "null_type"
    if isinstance(v, celtypes.TimestampType):
        return "google.protobuf.Timestamp"
    if isinstance(v, celtypes.DurationType):
        return "google.protobuf.Duration"
    return type(v).__name__


def no_overload(name: str, *args: Any) -> CELEvalError:
    types = ", ".join(cel_type_name(a) for a in args)
    return err(f"no such overload: {name}({types})")


def cel_fn(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Propagate error arguments, and map library failures to CEL error values."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(fn)
        def wrapper(*args: Any) -> Any:
            for a in args:
                if isinstance(a, CELEvalError):
                    return a
            try:
                return fn(*args)
            except _Fail as e:
                return err(str(e))
            except (QuantityError, SemverError) as e:
                return err(str(e))
            except (TypeError, AttributeError, KeyError, IndexError):
                return no_overload(name, *args)

        return wrapper

    return deco


# --- equality and ordering ---------------------------------------------------------------------


def cel_equals(a: Any, b: Any) -> Any:
    """cel-go `a == b`: lhs.Equal(rhs). Quantity/Semver refuse other types (error), others say false."""
    if isinstance(a, CELEvalError):
        return a
    if isinstance(b, CELEvalError):
        return b
    if isinstance(a, Quantity | Semver):
        if type(a) is type(b):
            return celtypes.BoolType(a == b)
        return no_overload("_==_", a, b)
    if _is_number(a):
        # Heterogeneous numeric equality compares values exactly (native Python int/float ==).
        return (
            celtypes.BoolType(_native_number(a) == _native_number(b))
            if _is_number(b)
            else celtypes.BoolType(False)
        )
    ta, tb = cel_type_name(a), cel_type_name(b)
    if ta != tb:
        return celtypes.BoolType(False)
    if ta == "list":
        if len(a) != len(b):
            return celtypes.BoolType(False)
        for x, y in zip(a, b, strict=True):
            r = cel_equals(x, y)
            if not truthy(r):
                return r
        return celtypes.BoolType(True)
    if ta == "map":
        if len(a) != len(b):
            return celtypes.BoolType(False)
        for k, v in a.items():
            match = [k2 for k2 in b if truthy(cel_equals(k, k2))]
            if not match:
                return celtypes.BoolType(False)
            r = cel_equals(v, dict.__getitem__(b, match[0]))
            if not truthy(r):
                return r
        return celtypes.BoolType(True)
    return celtypes.BoolType(a == b)


def _is_number(v: Any) -> bool:
    return isinstance(v, _NUMERIC) and not isinstance(v, celtypes.BoolType)


def _native_number(v: Any) -> int | float:
    return float(v) if isinstance(v, celtypes.DoubleType) else int(v)


def truthy(r: Any) -> bool:
    """True only for a CEL `true` (not for errors or other values)."""
    return isinstance(r, celtypes.BoolType) and bool(r)


def cel_not_equals(a: Any, b: Any) -> Any:
    r = cel_equals(a, b)
    return r if isinstance(r, CELEvalError) else celtypes.BoolType(not r)


_ORDERED = {
    "int",
    "uint",
    "double",
    "string",
    "bool",
    "bytes",
    "google.protobuf.Timestamp",
    "google.protobuf.Duration",
}


def _ordering(op: str, test: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    def compare(a: Any, b: Any) -> Any:
        if isinstance(a, CELEvalError):
            return a
        if isinstance(b, CELEvalError):
            return b
        ta, tb = cel_type_name(a), cel_type_name(b)
        numeric = {"int", "uint", "double"}
        # Cross-type numeric comparisons are enabled in the Kubernetes base environment.
        if ta in numeric and tb in numeric:
            return celtypes.BoolType(test(_native_number(a), _native_number(b)))
        if ta == tb and ta in _ORDERED:
            return celtypes.BoolType(test(a, b))
        return no_overload(op, a, b)

    return compare


# --- maps and lists ------------------------------------------------------------------------------


class DomainMap(celtypes.MapType):
    """device.attributes / device.capacity: an unknown domain yields an empty map (upstream mapper.Find)."""

    def __getitem__(self, key: Any) -> Any:
        if key in self.keys():
            return super().__getitem__(key)
        return celtypes.MapType()


def cel_index(container: Any, key: Any) -> Any:
    if isinstance(container, CELEvalError):
        return container
    if isinstance(key, CELEvalError):
        return key
    if isinstance(container, celtypes.MapType):
        if isinstance(container, DomainMap) and isinstance(key, celtypes.StringType | str):
            return container[key]
        for k in container:
            if truthy(cel_equals(k, key)):
                return dict.__getitem__(container, k)
        return err(f"no such key: {key}")
    if isinstance(container, celtypes.ListType):
        if isinstance(key, celtypes.DoubleType) and float(key).is_integer():
            key = celtypes.IntType(int(key))
        if not isinstance(key, celtypes.IntType | celtypes.UintType) or isinstance(key, celtypes.BoolType):
            return no_overload("_[_]", container, key)
        if not 0 <= int(key) < len(container):
            return err(f"index out of range: {int(key)}")
        return container[int(key)]
    return no_overload("_[_]", container, key)


def cel_in(item: Any, container: Any) -> Any:
    if isinstance(item, CELEvalError):
        return item
    if isinstance(container, CELEvalError):
        return container
    if isinstance(container, celtypes.MapType | celtypes.ListType):
        for c in container:
            r = cel_equals(item, c) if isinstance(container, celtypes.ListType) else cel_equals(c, item)
            if truthy(r):
                return celtypes.BoolType(True)
        return celtypes.BoolType(False)
    return no_overload("@in", item, container)


def _logic(is_and: bool) -> Callable[[Any, Any], Any]:
    """`&&`/`||` with cel-go's commutative error absorption; the first error wins when both fail."""
    decisive = not is_and

    def op(a: Any, b: Any) -> Any:
        for v in (a, b):
            if isinstance(v, celtypes.BoolType) and bool(v) == decisive:
                return celtypes.BoolType(decisive)
        for v in (a, b):
            if isinstance(v, CELEvalError):
                return v
        for v in (a, b):
            if not isinstance(v, celtypes.BoolType):
                return no_overload("_&&_" if is_and else "_||_", a, b)
        return celtypes.BoolType(not decisive)

    return op


def cel_not(a: Any) -> Any:
    if isinstance(a, CELEvalError):
        return a
    if isinstance(a, celtypes.BoolType):
        return celtypes.BoolType(not a)
    return no_overload("!_", a)


def cel_conditional(cond: Any, left: Any, right: Any) -> Any:
    if isinstance(cond, CELEvalError):
        return cond
    if not isinstance(cond, celtypes.BoolType):
        return no_overload("_?_:_", cond)
    return left if cond else right


# --- Kubernetes quantity library -------------------------------------------------------------------


def _str_arg(v: Any) -> str:
    if not isinstance(v, celtypes.StringType):
        raise TypeError
    return str(v)


def _int_arg(v: Any) -> int:
    if not isinstance(v, celtypes.IntType) or isinstance(v, celtypes.BoolType):
        raise TypeError
    return int(v)


def _q(v: Any) -> Quantity:
    if not isinstance(v, Quantity):
        raise TypeError
    return v


def _s(v: Any) -> Semver:
    if not isinstance(v, Semver):
        raise TypeError
    return v


def _bool_arg(v: Any) -> bool:
    if not isinstance(v, celtypes.BoolType):
        raise TypeError
    return bool(v)


def _to_int(v: int) -> celtypes.IntType:
    return celtypes.IntType(v)


@cel_fn("quantity")
def f_quantity(s: Any) -> Any:
    return parse_quantity(_str_arg(s))


@cel_fn("isQuantity")
def f_is_quantity(s: Any) -> Any:
    return celtypes.BoolType(is_quantity(_str_arg(s)))


@cel_fn("semver")
def f_semver(s: Any, normalize: Any = None) -> Any:
    return parse_semver(_str_arg(s), False if normalize is None else _bool_arg(normalize))


@cel_fn("isSemver")
def f_is_semver(s: Any, normalize: Any = None) -> Any:
    return celtypes.BoolType(is_semver(_str_arg(s), False if normalize is None else _bool_arg(normalize)))


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, Quantity):
        return a.compare(_q(b))
    return _s(a).compare(_s(b))


@cel_fn("isGreaterThan")
def f_is_greater_than(a: Any, b: Any) -> Any:
    return celtypes.BoolType(_compare(a, b) == 1)


@cel_fn("isLessThan")
def f_is_less_than(a: Any, b: Any) -> Any:
    return celtypes.BoolType(_compare(a, b) == -1)


@cel_fn("compareTo")
def f_compare_to(a: Any, b: Any) -> Any:
    return _to_int(_compare(a, b))


@cel_fn("sign")
def f_sign(q: Any) -> Any:
    return _to_int(_q(q).sign())


@cel_fn("isInteger")
def f_is_integer(q: Any) -> Any:
    return celtypes.BoolType(_q(q).is_integer())


@cel_fn("asInteger")
def f_as_integer(q: Any) -> Any:
    return _to_int(_q(q).as_integer())


@cel_fn("asApproximateFloat")
def f_as_approximate_float(q: Any) -> Any:
    return celtypes.DoubleType(_q(q).as_approximate_float())


def _q_or_int(v: Any) -> Quantity | int:
    return v if isinstance(v, Quantity) else _int_arg(v)


@cel_fn("add")
def f_add(a: Any, b: Any) -> Any:
    return _q(a).add(_q_or_int(b))


@cel_fn("sub")
def f_sub(a: Any, b: Any) -> Any:
    return _q(a).sub(_q_or_int(b))


@cel_fn("major")
def f_major(v: Any) -> Any:
    return _to_int(_s(v).major)


@cel_fn("minor")
def f_minor(v: Any) -> Any:
    return _to_int(_s(v).minor)


@cel_fn("patch")
def f_patch(v: Any) -> Any:
    return _to_int(_s(v).patch)


# --- cel-go ext strings (v2) -----------------------------------------------------------------------

# Go's unicode.IsSpace (used by strings.TrimSpace).
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def _check_index(i: int, n: int) -> None:
    if i < 0 or i > n:
        raise _Fail(f"index out of range: {i}")


@cel_fn("charAt")
def f_char_at(s: Any, i: Any) -> Any:
    text, idx = _str_arg(s), _int_arg(i)
    _check_index(idx, len(text))
    return celtypes.StringType(text[idx] if idx < len(text) else "")


@cel_fn("indexOf")
def f_index_of(s: Any, sub: Any, offset: Any = None) -> Any:
    if isinstance(s, celtypes.ListType):
        for n, x in enumerate(s):
            if truthy(cel_equals(x, sub)):
                return _to_int(n)
        return _to_int(-1)
    text, needle = _str_arg(s), _str_arg(sub)
    start = 0 if offset is None else _int_arg(offset)
    _check_index(start, len(text))
    return _to_int(text.find(needle, start))


@cel_fn("lastIndexOf")
def f_last_index_of(s: Any, sub: Any, offset: Any = None) -> Any:
    if isinstance(s, celtypes.ListType):
        found = -1
        for n, x in enumerate(s):
            if truthy(cel_equals(x, sub)):
                found = n
        return _to_int(found)
    text, needle = _str_arg(s), _str_arg(sub)
    end = len(text) if offset is None else _int_arg(offset)
    _check_index(end, len(text))
    if needle == "":
        return _to_int(end)
    return _to_int(text.rfind(needle, 0, end + len(needle)))


@cel_fn("lowerAscii")
def f_lower_ascii(s: Any) -> Any:
    return celtypes.StringType("".join(c.lower() if "A" <= c <= "Z" else c for c in _str_arg(s)))


@cel_fn("upperAscii")
def f_upper_ascii(s: Any) -> Any:
    return celtypes.StringType("".join(c.upper() if "a" <= c <= "z" else c for c in _str_arg(s)))


@cel_fn("replace")
def f_replace(s: Any, old: Any, new: Any, n: Any = None) -> Any:
    count = -1 if n is None else _int_arg(n)
    text, o, r = _str_arg(s), _str_arg(old), _str_arg(new)
    if count == 0:
        return celtypes.StringType(text)
    if o == "":
        # Go inserts `new` before every rune and at the end.
        pieces = [r + c for c in text] + [r]
        limit = len(pieces) if count < 0 else count
        return celtypes.StringType(
            "".join(pieces[:limit]) + text[limit:] if limit < len(pieces) else "".join(pieces)
        )
    return celtypes.StringType(text.replace(o, r, count))


@cel_fn("split")
def f_split(s: Any, sep: Any, n: Any = None) -> Any:
    text, separator = _str_arg(s), _str_arg(sep)
    limit = -1 if n is None else _int_arg(n)
    if limit == 0:
        return celtypes.ListType()
    if separator == "":
        parts = list(text)
        if 0 < limit < len(parts):
            parts = parts[: limit - 1] + ["".join(parts[limit - 1 :])]
    else:
        parts = text.split(separator) if limit < 0 else text.split(separator, limit - 1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


@cel_fn("substring")
def f_substring(s: Any, start: Any, end: Any = None) -> Any:
    text = _str_arg(s)
    b = _int_arg(start)
    e = len(text) if end is None else _int_arg(end)
    _check_index(b, len(text))
    _check_index(e, len(text))
    if b > e:
        raise _Fail(f"invalid substring range. start: {b}, end: {e}")
    return celtypes.StringType(text[b:e])


@cel_fn("trim")
def f_trim(s: Any) -> Any:
    return celtypes.StringType(_str_arg(s).strip(_GO_SPACE))


@cel_fn("join")
def f_join(items: Any, sep: Any = None) -> Any:
    if not isinstance(items, celtypes.ListType):
        raise TypeError
    separator = "" if sep is None else _str_arg(sep)
    return celtypes.StringType(separator.join(_str_arg(x) for x in items))


# --- regex (RE2, as cel-go) ---------------------------------------------------------------------------


def _re2_options() -> Any:
    options = re2.Options()
    options.log_errors = False  # errors are reported as CEL errors, not on stderr
    return options


_RE2_OPTIONS = _re2_options()


@functools.lru_cache(maxsize=512)
def compile_re2(pattern: str) -> Any:
    """Compile with RE2 (Go's regexp, which cel-go uses, implements the same syntax); raises re2.error."""
    return re2.compile(pattern, _RE2_OPTIONS)


def re2_error_text(e: Exception) -> str:
    msg = e.args[0] if e.args else e
    return msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg)


def _compile_re(pattern: str) -> Any:
    try:
        return compile_re2(pattern)
    except re2.error as e:
        raise _Fail(f"invalid regular expression {pattern!r}: {re2_error_text(e)}") from e


@cel_fn("matches")
def f_matches(s: Any, pattern: Any) -> Any:
    return celtypes.BoolType(_compile_re(_str_arg(pattern)).search(_str_arg(s)) is not None)


@cel_fn("find")
def f_find(s: Any, pattern: Any) -> Any:
    m = _compile_re(_str_arg(pattern)).search(_str_arg(s))
    return celtypes.StringType(m.group(0) if m else "")


@cel_fn("findAll")
def f_find_all(s: Any, pattern: Any, n: Any = None) -> Any:
    limit = -1 if n is None else _int_arg(n)
    found = [m.group(0) for m in _compile_re(_str_arg(pattern)).finditer(_str_arg(s))]
    if limit >= 0:
        found = found[:limit]
    return celtypes.ListType([celtypes.StringType(x) for x in found])


# --- standard string functions (strict argument types, unlike celpy's) -------------------------------


@cel_fn("contains")
def f_contains(s: Any, sub: Any) -> Any:
    return celtypes.BoolType(_str_arg(sub) in _str_arg(s))


@cel_fn("startsWith")
def f_starts_with(s: Any, prefix: Any) -> Any:
    return celtypes.BoolType(_str_arg(s).startswith(_str_arg(prefix)))


@cel_fn("endsWith")
def f_ends_with(s: Any, suffix: Any) -> Any:
    return celtypes.BoolType(_str_arg(s).endswith(_str_arg(suffix)))


@cel_fn("size")
def f_size(v: Any) -> Any:
    if isinstance(v, celtypes.StringType | celtypes.BytesType | celtypes.ListType | celtypes.MapType):
        return _to_int(len(v))
    raise TypeError


# --- Kubernetes lists library and ext.Sets -------------------------------------------------------------


def _list(v: Any) -> list[Any]:
    if not isinstance(v, celtypes.ListType):
        raise TypeError
    return list(v)


def _lt(a: Any, b: Any) -> bool:
    r = _ordering("_<_", lambda x, y: x < y)(a, b)
    if isinstance(r, CELEvalError):
        raise _Fail(str(r.args[0]))
    return bool(r)


@cel_fn("isSorted")
def f_is_sorted(v: Any) -> Any:
    items = _list(v)
    return celtypes.BoolType(all(not _lt(b, a) for a, b in zip(items, items[1:], strict=False)))


@cel_fn("sum")
def f_sum(v: Any) -> Any:
    items = _list(v)
    if not items:
        return _to_int(0)
    total = items[0]
    for x in items[1:]:
        if type(x) is not type(total):
            raise TypeError
        total = type(total)(total + x)
    return total


def _extreme(pick_min: bool) -> Callable[[Any], Any]:
    def fn(v: Any) -> Any:
        items = _list(v)
        if not items:
            raise _Fail(f"{'min' if pick_min else 'max'} called on an empty list")
        best = items[0]
        for x in items[1:]:
            if _lt(x, best) if pick_min else _lt(best, x):
                best = x
        return best

    return cel_fn("min" if pick_min else "max")(fn)


def _contains_all(a: list[Any], b: list[Any]) -> bool:
    return all(truthy(cel_in(x, celtypes.ListType(a))) for x in b)


@cel_fn("sets.contains")
def f_sets_contains(a: Any, b: Any) -> Any:
    return celtypes.BoolType(_contains_all(_list(a), _list(b)))


@cel_fn("sets.equivalent")
def f_sets_equivalent(a: Any, b: Any) -> Any:
    return celtypes.BoolType(_contains_all(_list(a), _list(b)) and _contains_all(_list(b), _list(a)))


@cel_fn("sets.intersects")
def f_sets_intersects(a: Any, b: Any) -> Any:
    return celtypes.BoolType(any(truthy(cel_in(x, celtypes.ListType(_list(a)))) for x in _list(b)))


def cel_add(a: Any, b: Any) -> Any:
    """`_+_`: celpy returns plain Python str/list for concatenation; keep CEL types."""
    if isinstance(a, CELEvalError):
        return a
    if isinstance(b, CELEvalError):
        return b
    ta, tb = cel_type_name(a), cel_type_name(b)
    if ta == tb and ta in ("string", "list", "bytes"):
        wrap = {"string": celtypes.StringType, "list": celtypes.ListType, "bytes": celtypes.BytesType}[ta]
        return wrap(a + b)
    if ta != tb and {ta, tb} <= {"int", "uint", "double"}:
        return no_overload("_+_", a, b)
    try:
        return operator.add(a, b)
    except ValueError:
        return err("return error for overflow")
    except TypeError:
        return no_overload("_+_", a, b)


def build_functions() -> dict[str, Any]:
    fns: dict[str, Any] = dict(base_functions)
    fns.update(
        {
            "_==_": cel_equals,
            "_!=_": cel_not_equals,
            "_<_": _ordering("_<_", lambda a, b: a < b),
            "_<=_": _ordering("_<=_", lambda a, b: a <= b),
            "_>_": _ordering("_>_", lambda a, b: a > b),
            "_>=_": _ordering("_>=_", lambda a, b: a >= b),
            "_in_": cel_in,
        "_+_": cel_add,
            "_[_]": cel_index,
            "_&&_": _logic(True),
            "_||_": _logic(False),
            "!_": cel_not,
            "_?_:_": cel_conditional,
            "quantity": f_quantity,
            "isQuantity": f_is_quantity,
            "semver": f_semver,
            "isSemver": f_is_semver,
            "isGreaterThan": f_is_greater_than,
            "isLessThan": f_is_less_than,
            "compareTo": f_compare_to,
            "sign": f_sign,
            "isInteger": f_is_integer,
            "asInteger": f_as_integer,
            "asApproximateFloat": f_as_approximate_float,
            "add": f_add,
            "sub": f_sub,
            "major": f_major,
            "minor": f_minor,
            "patch": f_patch,
            "charAt": f_char_at,
            "indexOf": f_index_of,
            "lastIndexOf": f_last_index_of,
            "lowerAscii": f_lower_ascii,
            "upperAscii": f_upper_ascii,
            "replace": f_replace,
            "split": f_split,
            "substring": f_substring,
            "trim": f_trim,
            "join": f_join,
            "matches": f_matches,
            "find": f_find,
            "findAll": f_find_all,
            "contains": f_contains,
            "startsWith": f_starts_with,
            "endsWith": f_ends_with,
            "size": f_size,
            "isSorted": f_is_sorted,
            "sum": f_sum,
            "min": _extreme(True),
            "max": _extreme(False),
            "sets.contains": f_sets_contains,
            "sets.equivalent": f_sets_equivalent,
            "sets.intersects": f_sets_intersects,
        }
    )
    return fns
