"""Positioned nodes → plain Python data (dict/list/str/int/float/bool/None) with YAML 1.1's types, as PyYAML's safe
loader reads them, except where the Kubernetes API server and kubectl (sigs.k8s.io/yaml: go-yaml v2) read a
string of a valid manifest otherwise: a timestamp stays the text it is written as (go-yaml v2 gives
timestamp-like values to a generic reader as their text), and so does a base-60 number (`10:30`; go-yaml v2
has none). Tags are never used to construct objects."""

from __future__ import annotations

import functools
from typing import Any

import yaml

from dra_migrate.source.compose import MAX_ALIAS_EXPANSION, MAX_DEPTH, ComposeError
from dra_migrate.source.nodes import Alias, Mapping, Node, Scalar, Sequence

_resolver = yaml.resolver.Resolver()
_constructor = yaml.constructor.SafeConstructor()
_MERGE = "tag:yaml.org,2002:merge"
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"


def resolve_scalar(node: Scalar) -> Any:
    if node.tag is None:
        if node.style:  # quoted and block scalars are strings
            return node.value
        return _plain_scalar(node.value)  # keys and values repeat: resolve each spelling once
    return _resolve(node.tag, node.value, node.style)


@functools.lru_cache(maxsize=1 << 13)  # the common spellings; bounded, as every worker process holds one
def _plain_scalar(value: str) -> Any:
    """What an untagged plain scalar means (the results are immutable, so they can be shared). YAML 1.1's base-60
    numbers (`10:30` is 630 to PyYAML) are strings, as go-yaml v2 has none."""
    tag = _resolver.resolve(yaml.ScalarNode, value, (True, False))
    if ":" in value and tag in (_INT, _FLOAT):
        return value
    return _resolve(tag, value, "")


def _resolve(tag: str, value: str, style: str) -> Any:
    """The value of a scalar of the core schema; any other tag (timestamps included) leaves its text."""
    ynode = yaml.ScalarNode(tag, value, style=style or None)
    try:
        if tag == "tag:yaml.org,2002:int":
            return _constructor.construct_yaml_int(ynode)
        if tag == "tag:yaml.org,2002:float":
            return _constructor.construct_yaml_float(ynode)
        if tag == "tag:yaml.org,2002:bool":
            return _constructor.construct_yaml_bool(ynode)
        if tag == "tag:yaml.org,2002:null":
            return None
    except (ValueError, yaml.YAMLError):
        return value
    return value


class _Budget:
    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left


def to_plain(node: Node | None, budget: int = MAX_ALIAS_EXPANSION) -> Any:
    return _plain(node, _Budget(budget), 0, 0)


def _plain(node: Node | None, budget: _Budget, via_alias: int, depth: int) -> Any:
    if node is None:
        return None
    if depth > MAX_DEPTH:
        # composition bounds the text's nesting, but aliases nest anchored blocks inside each other: bound the
        # expanded data too, so nothing downstream (deepcopy, comparisons) can exhaust the recursion limit
        raise ComposeError("DRA109", f"nesting deeper than {MAX_DEPTH} levels once aliases are expanded",
                           node.line + 1, node.col + 1)
    if type(node) is Alias:
        budget.left -= 1
        if budget.left < 0:
            raise ComposeError("DRA107", "too many alias expansions (possible alias bomb)", node.line + 1, node.col + 1)
        return _plain(node.target, budget, via_alias + 1, depth)
    if via_alias:
        budget.left -= 1
        if budget.left < 0:
            raise ComposeError("DRA107", "too many alias expansions (possible alias bomb)", node.line + 1, node.col + 1)
    if type(node) is Scalar:
        return resolve_scalar(node)
    # Below, a scalar child outside aliases is resolved in place: what the call for it would do (the depth
    # bound included), without the call (most of a manifest's nodes are such scalars).
    inline = not via_alias and depth < MAX_DEPTH
    if type(node) is Sequence:
        items: list[Any] = []
        for item in node.items:
            items.append(resolve_scalar(item) if inline and type(item) is Scalar
                         else _plain(item, budget, via_alias, depth + 1))
        return items
    assert type(node) is Mapping
    out: dict[Any, Any] = {}
    merged: list[dict[Any, Any]] = []
    for knode, vnode in node.items:
        if type(knode) is Scalar:
            if knode.tag == _MERGE or (knode.value == "<<" and knode.style == ""):
                value = _plain(vnode, budget, via_alias, depth + 1)
                for m in value if isinstance(value, list) else [value]:
                    if isinstance(m, dict):
                        merged.append(m)
                continue
            key = resolve_scalar(knode) if inline else _plain(knode, budget, via_alias, depth + 1)
        else:
            key = _plain(knode, budget, via_alias, depth + 1)
            if isinstance(key, (list, dict)):
                key = repr(key)
        out[key] = (resolve_scalar(vnode) if inline and type(vnode) is Scalar
                    else _plain(vnode, budget, via_alias, depth + 1))
    for m in merged:  # explicit keys win over merged ones; earlier merges win over later ones
        for k, v in m.items():
            out.setdefault(k, v)
    return out


def as_map(value: Any) -> dict[str, Any]:
    """`value` when it is a mapping, else an empty one (a missing or mistyped field reads as empty)."""
    return value if isinstance(value, dict) else {}
