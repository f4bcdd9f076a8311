"""The official Kubernetes schemas (kubernetes-validate) as a test oracle, independent of our own code."""

from __future__ import annotations

import json
import re
from typing import Any

import kubernetes_validate
import yaml


def documents(data: bytes, name: str) -> list[dict[str, Any]]:
    text = data.decode("utf-8-sig")
    docs = [json.loads(text)] if name.endswith(".json") else _yaml_documents(text)
    out: list[dict[str, Any]] = []
    for d in docs:
        if isinstance(d, dict) and d.get("kind") == "List":
            out.extend(i for i in d.get("items", []) if isinstance(i, dict))
        elif isinstance(d, dict):
            out.append(d)
    return out


def _yaml_documents(text: str) -> list[Any]:
    """Every document; in a file where some documents are templates (`{{ }}`, not YAML until rendered) and so
    left as they were, the others, each parsed on its own between `---` lines."""
    try:
        return [d for d in yaml.safe_load_all(text) if d]
    except yaml.YAMLError:
        if "{{" not in text:
            raise
    out: list[Any] = []
    for chunk in re.split(r"(?m)^---(?=\s|$)", text):
        try:
            out.extend(d for d in yaml.safe_load_all(chunk) if d)
        except yaml.YAMLError:
            if "{{" not in chunk:
                raise
    return out


def schema_errors(obj: dict[str, Any], version: str) -> str | None:
    """None if valid under the strict official schema of `version`; else the error text."""
    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        name = (obj.get("metadata") or {}).get("name")
        return f"{obj.get('kind')}/{name}: {'.'.join(map(str, exc.path))}: {exc.message}"
    except kubernetes_validate.SchemaNotFoundError:
        return None  # a CRD: no official schema
    return None
