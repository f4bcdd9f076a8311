"""The official Kubernetes schemas (kubernetes-validate) as a test oracle, independent of our own code."""

from __future__ import annotations

import json
import re
from typing import Any

import kubernetes_validate
import yaml


class KubernetesLoader(yaml.SafeLoader):
    """YAML as kubectl and the API server read a valid manifest (sigs.k8s.io/yaml, go-yaml v2): like PyYAML's safe
    loader, except that a timestamp-like value and a base-60 number (`10:30`) stay their text (go-yaml v2 gives
    timestamps to a generic reader as strings, and has no base-60)."""


KubernetesLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _no_base_60(construct: Any) -> Any:
    def number(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
        return node.value if ":" in node.value else construct(loader, node)
    return number


KubernetesLoader.add_constructor("tag:yaml.org,2002:int", _no_base_60(yaml.SafeLoader.construct_yaml_int))
KubernetesLoader.add_constructor("tag:yaml.org,2002:float", _no_base_60(yaml.SafeLoader.construct_yaml_float))


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
        return [d for d in yaml.load_all(text, Loader=KubernetesLoader) if d]
    except yaml.YAMLError:
        if "{{" not in text:
            raise
    out: list[Any] = []
    for chunk in re.split(r"(?m)^---(?=\s|$)", text):
        try:
            out.extend(d for d in yaml.load_all(chunk, Loader=KubernetesLoader) if d)
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
