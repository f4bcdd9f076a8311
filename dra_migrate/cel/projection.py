"""Which parts of `device` a compiled selector can observe, so that devices that agree on those parts are
evaluated once.

A selector sees a device only through its occurrences of the identifier `device`. Each occurrence is followed
up the parse tree as far as a plain access chain goes: `.driver`, `.allowMultipleAllocations`,
`.attributes` / `.capacity`, then a domain (`["gpu.nvidia.com"]` with a string literal, or `.name`), then an
attribute or capacity name. Whatever the rest of the expression does, it does with the value at the end of
that chain (for `'name' in device.capacity[domain]`, with that name's presence). CEL is deterministic and
has no mutation, so two devices with equal values at the end of every chain of a selector give it the same
result or the same error. A chain the analysis does not recognise ends early, at a larger part of the device
(at worst the whole device): coarser, never unsound. An occurrence that is really a comprehension or
`cel.bind` variable named `device` only adds a path, which only splits devices further.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import lark

from dra_migrate.cel.checker import _string_literal_value, _unwrap, ident_name

if TYPE_CHECKING:
    from dra_migrate.cel.device import DeviceView

Path = tuple[str, ...]


class _Missing:
    """The part is absent (no such domain or name): all absences read alike (an empty domain, then no such key)."""


_MISSING = _Missing()
_TOP_FIELDS = {"driver", "allowMultipleAllocations", "attributes", "capacity"}


def device_paths(ast: lark.Tree) -> frozenset[Path]:
    """Every device part the expression reads: () is the whole device, ('attributes', 'gpu.nvidia.com',
    'productName') one attribute, ('capacity', 'gpu.nvidia.com') one capacity domain, and so on."""
    parents: dict[int, lark.Tree] = {}
    roots: list[lark.Tree] = []
    for tree in ast.iter_subtrees():
        for child in tree.children:
            if isinstance(child, lark.Tree):
                parents[id(child)] = tree
        first = tree.children[0] if tree.children else None
        if tree.data == "member" and isinstance(first, lark.Tree) and first.data == "primary" \
                and ident_name(tree) == "device":
            roots.append(tree)
    return frozenset(_chain(root, parents) for root in roots)


def _chain(member: lark.Tree, parents: dict[int, lark.Tree]) -> Path:
    path: list[str] = []
    node = member
    while len(path) < 3:
        parent = parents.get(id(node))
        if parent is None or parent.children[0] is not node:
            break
        step = _step(parent)
        if step is None or (not path and step not in _TOP_FIELDS):
            break
        if path and path[0] not in ("attributes", "capacity"):
            break
        path.append(step)
        wrapper = parents.get(id(parent))  # member_dot / member_index sit inside a `member`
        if wrapper is None or wrapper.data != "member":
            break
        node = wrapper
    if len(path) == 2 and path[0] in ("attributes", "capacity"):
        name = _membership_test(node, parents)
        if name is not None:  # `'memory' in device.capacity['gpu.nvidia.com']` reads only that name's presence
            path.append(name)
    return tuple(path)


def _membership_test(member: lark.Tree, parents: dict[int, lark.Tree]) -> str | None:
    """The string literal `s` when `member` is the right operand of `s in member`."""
    node = member
    parent = parents.get(id(node))
    while parent is not None and parent.data in ("unary", "multiplication", "addition") and len(parent.children) == 1:
        node, parent = parent, parents.get(id(parent))
    if parent is None or parent.data != "relation" or len(parent.children) != 2 or parent.children[1] is not node:
        return None
    operator = parent.children[0]
    if not isinstance(operator, lark.Tree) or operator.data != "relation_in" or len(operator.children) != 1:
        return None
    return _string_literal_value(operator.children[0])


def _step(tree: lark.Tree) -> str | None:
    if tree.data == "member_dot" and len(tree.children) == 2:
        return str(tree.children[1])
    if tree.data == "member_index" and len(tree.children) == 2:
        return _string_literal_value(_unwrap(tree.children[1]))
    return None


def device_key(device: DeviceView, paths: frozenset[Path]) -> tuple[Any, ...]:
    """Equal for two devices exactly when they agree on every part in `paths` (values compared by type and
    every field, not by CEL equality: 1 and 1.0, or 1Gi and 1024Mi, stay apart)."""
    return tuple(sorted((path, _fingerprint(_part(device, path))) for path in paths))


def _part(device: DeviceView, path: Path) -> Any:
    if not path:
        return (device.driver, device.attributes, device.capacity, device.allow_multiple_allocations)
    head, rest = path[0], path[1:]
    if head == "driver":
        return device.driver
    if head == "allowMultipleAllocations":
        return device.allow_multiple_allocations
    value: Any = device.attributes if head == "attributes" else device.capacity
    for key in rest:
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _fingerprint(value: Any) -> Any:
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), _fingerprint(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_fingerprint(v) for v in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = tuple(_fingerprint(getattr(value, f.name)) for f in dataclasses.fields(value))
        return (type(value).__qualname__, fields)
    if isinstance(value, _Missing):
        return ("<missing>",)
    return (type(value).__qualname__, value)
