"""Semantic edit operations on a document, independent of its text.

The lowering stage produces these; the emitter turns them into text splices; the self-check applies them
to the parsed original and requires the re-parsed output to equal the result.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.ir import DocPath


@dataclass(frozen=True, slots=True)
class DeleteKey:
    path: DocPath  # the key to delete (last element) in the mapping at path[:-1]


@dataclass(frozen=True, slots=True)
class SetKey:
    path: DocPath  # add key path[-1] (absent today) to the mapping at path[:-1]
    value: Any


@dataclass(frozen=True, slots=True)
class ReplaceValue:
    path: DocPath  # replace the value at path (key or index must exist)
    value: Any


@dataclass(frozen=True, slots=True)
class Append:
    path: DocPath  # the sequence to append to (must exist)
    items: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class DeleteItem:
    path: DocPath  # the sequence item to delete (path[-1] is its index in the original sequence)


Op = DeleteKey | SetKey | ReplaceValue | Append | DeleteItem


@dataclass(slots=True)
class DocumentPlan:
    doc_index: int
    ops: list[Op] = field(default_factory=list)
    new_documents: list[dict[str, Any]] = field(default_factory=list)  # inserted right after this document

    @property
    def empty(self) -> bool:
        return not self.ops and not self.new_documents


def walk(data: Any, path: DocPath) -> Any:
    for seg in path:
        data = data[seg]
    return data


def apply_ops(data: Any, ops: list[Op]) -> Any:
    """The plain-data result of applying `ops` (the self-check's expectation). `data` is not changed: the
    containers on the ops' paths are copied, the rest is shared with it (nothing mutates either after)."""
    copied: set[int] = set()
    out = _owned_copy(data, copied)
    # Deletions last (items from the highest index down), so paths computed on the original stay valid.
    def order(o: Op) -> tuple[int, int]:
        if isinstance(o, DeleteItem):
            return (2, -int(o.path[-1]))
        return (1 if isinstance(o, DeleteKey) else 0, 0)

    for op in sorted(ops, key=order):
        _own_path(out, op.path if isinstance(op, Append) else op.path[:-1], copied)
        parent = walk(out, op.path[:-1]) if not isinstance(op, Append) else None
        if isinstance(op, DeleteItem):
            assert isinstance(parent, list)
            del parent[int(op.path[-1])]
        elif isinstance(op, DeleteKey):
            assert isinstance(parent, dict)
            del parent[op.path[-1]]
        elif isinstance(op, SetKey):
            assert isinstance(parent, dict) and op.path[-1] not in parent
            parent[op.path[-1]] = copy.deepcopy(op.value)
        elif isinstance(op, ReplaceValue):
            parent[op.path[-1]] = copy.deepcopy(op.value)  # type: ignore[index]
        else:
            seq = walk(out, op.path)
            assert isinstance(seq, list)
            seq.extend(copy.deepcopy(list(op.items)))
    return out


def _owned_copy(value: Any, copied: set[int]) -> Any:
    if isinstance(value, dict):
        value = dict(value)
    elif isinstance(value, list):
        value = list(value)
    else:
        return value
    copied.add(id(value))
    return value


def _own_path(root: Any, path: DocPath, copied: set[int]) -> None:
    """Replace every container on `path` below `root` (itself already a copy) by a copy of its own."""
    node = root
    for seg in path:
        child = node[seg]
        if isinstance(child, dict | list) and id(child) not in copied:
            child = node[seg] = _owned_copy(child, copied)
        node = child


def touched_paths(ops: list[Op]) -> list[DocPath]:
    return [op.path for op in ops]
