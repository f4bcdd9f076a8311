"""Helm charts: templates are Go templates, not YAML, so GPU requests there are reported, never rewritten."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.source.realpaths import resolved
from dra_migrate.source.textscan import code_lines

# A GPU resource as a mapping key (quoted or not), or JSON-pointer-escaped inside a JSON 6902 path.
GPU_KEY_RE = re.compile(
    r"""(?P<q>["']?)(?P<key>nvidia\.com(?:/|~1)(?:gpu|mig-[A-Za-z0-9.\-]+|gpu\.shared))(?P=q)\s*:"""
)
GPU_TEXT_RE = re.compile(r"nvidia\.com(?:/|~1)(?:gpu\b|mig-[A-Za-z0-9.\-]+)")

TEMPLATE_ADVICE = (
    "replace it with `claims: [{name: gpu}]` under the container's resources, add `resourceClaims: "
    "[{name: gpu, resourceClaimTemplateName: ...}]` to the pod spec and a ResourceClaimTemplate template "
    "(deviceClassName gpu.nvidia.com, count from the same value)"
)


def gpu_key_lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(line, column, resource) of every GPU resource key in `text`, 1-based; comments and the content of
    block scalars (a ConfigMap's script, notes) are skipped: they are never a request."""
    for i, code in code_lines(text):
        for m in GPU_KEY_RE.finditer(code):
            yield i, m.start() + 1, m.group("key").replace("~1", "/")


def gpu_text_lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(line, column, resource) of every GPU resource name in the YAML code of `text` (a JSON 6902 `path`
    names it in a string), comments and block scalars skipped."""
    for i, code in code_lines(text):
        for m in GPU_TEXT_RE.finditer(code):
            yield i, m.start() + 1, m.group(0).replace("~1", "/")


def chart_root(path: Path) -> Path | None:
    """The chart directory (holding Chart.yaml) when `path` is a chart's values file or template."""
    p = path.resolve()
    if (p.parent / "Chart.yaml").is_file():
        return p.parent
    for anc in p.parents:
        if anc.name == "templates" and (anc.parent / "Chart.yaml").is_file():
            return anc.parent
    return None


def is_values_file(path: Path) -> bool:
    if not path.name.startswith("values") and not path.is_symlink():
        return False
    p = Path(resolved(path))
    return (
        p.name.startswith("values") and p.suffix in (".yaml", ".yml") and (p.parent / "Chart.yaml").is_file()
    )


def scan_template(display: str, raw: bytes) -> list[Diagnostic]:
    text = raw.decode("utf-8", "replace")
    return [
        make(
            "DRA704",
            f"{key} in a Helm chart template (never rewritten): {TEMPLATE_ADVICE}",
            Location(display, line, col),
            resource=key,
        )
        for line, col, key in gpu_key_lines(text)
    ]


def scan_values(display: str, raw: bytes) -> list[Diagnostic]:
    text = raw.decode("utf-8", "replace")
    return [
        make(
            "DRA705",
            f"{key} set in the chart's values file: a template copies it into a pod's resources; "
            "remove it and let the chart render a ResourceClaimTemplate (e.g. from a gpu.count value) "
            "instead",
            Location(display, line, col),
            resource=key,
        )
        for line, col, key in gpu_key_lines(text)
    ]
