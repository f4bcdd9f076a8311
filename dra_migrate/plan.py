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


Op = DeleteKey | SetKey | ReplaceValue | Append


@dataclass(slots=True)
class DocumentPlan:
    doc_index: int
    ops: list[Op] = field(default_factory=list)
    new_documents: list[dict[str, Any]] = field(default_factory=list)  # inserted right after this document

    @property
    def empty(self) -> bool:
        return not self.ops and not self.new_documents


def _walk(data: Any, path: DocPath) -> Any:
    for seg in path:
        data = data[seg]
    return data


def apply_ops(data: Any, ops: list[Op]) -> Any:
    """The plain-data result of applying `ops` (the self-check's expectation)."""
    out = copy.deepcopy(data)
    # Deletions last, so paths of other operations (computed on the original) stay valid.
    for op in sorted(ops, key=lambda o: isinstance(o, DeleteKey)):
        parent = _walk(out, op.path[:-1]) if not isinstance(op, Append) else None
        if isinstance(op, DeleteKey):
            assert isinstance(parent, dict)
            del parent[op.path[-1]]
        elif isinstance(op, SetKey):
            assert isinstance(parent, dict) and op.path[-1] not in parent
            parent[op.path[-1]] = copy.deepcopy(op.value)
        elif isinstance(op, ReplaceValue):
            parent[op.path[-1]] = copy.deepcopy(op.value)  # type: ignore[index]
        else:
            seq = _walk(out, op.path)
            assert isinstance(seq, list)
            seq.extend(copy.deepcopy(list(op.items)))
    return out


def touched_paths(ops: list[Op]) -> list[DocPath]:
    return [op.path for op in ops]
