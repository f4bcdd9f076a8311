"""A parsed document as the frontend hands it on: its source text and plain data, and the workloads found in
it; and the GPU resource keys anywhere in plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dra_migrate.ir import DocPath, Workload
from dra_migrate.ruleset.resources import classify
from dra_migrate.source.nodes import Document


@dataclass(slots=True)
class ParsedDocument:
    doc: Document
    data: Any
    workloads: list[Workload] = field(default_factory=list)



def gpu_keys_in(data: Any, path: DocPath = ()) -> list[DocPath]:
    """Paths of every mapping key anywhere in `data` that names a GPU resource."""
    found: list[DocPath] = []
    stack: list[tuple[DocPath, Any]] = [(path, data)]
    while stack:
        p, v = stack.pop()
        if isinstance(v, dict):
            for k, cv in v.items():
                if isinstance(k, str) and classify(k) is not None:
                    found.append((*p, k))
                stack.append(((*p, k), cv))
        elif isinstance(v, list):
            stack.extend(((*p, i), cv) for i, cv in enumerate(v))
    return sorted(found, key=lambda q: [str(s) for s in q])
