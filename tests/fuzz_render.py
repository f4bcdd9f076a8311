"""A small manifest generator for the fuzz tests: random workloads rendered to YAML text by hand (never by the
tool under test), in the layouts found in real repositories."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

WORKLOAD_KINDS = ("Pod", "Deployment", "Job", "CronJob")
GPU = "nvidia.com/gpu"


@dataclass(frozen=True)
class Layout:
    indent: int  # 2 or 4
    seq_offset: int  # 0 or indent
    flow_resources: bool
    quote: bool
    crlf: bool
    bom: bool
    trailing_newline: bool
    comments: bool


def _scalar(v: Any, quote: bool) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f'"{v}"' if quote else str(v)
    s = str(v)
    return json.dumps(s) if quote or not s.replace("-", "").replace(".", "").replace("/", "").isalnum() else s


def _flow(v: Any, quote: bool) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_scalar(k, False)}: {_flow(x, quote)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_flow(x, quote) for x in v) + "]"
    return _scalar(v, quote)


def render_block(v: Any, col: int, lay: Layout, lines: list[str], flow_keys: frozenset[str] = frozenset()) -> None:
    """Lines for the mapping `v` at column `col`."""
    pad = " " * col
    for k, x in v.items():
        comment = f"  # {k}" if lay.comments and len(lines) % 3 == 0 else ""
        if isinstance(x, dict) and x and k not in flow_keys:
            lines.append(f"{pad}{_scalar(k, False)}:{comment}")
            render_block(x, col + lay.indent, lay, lines, flow_keys)
        elif isinstance(x, list) and x and all(isinstance(i, dict) and i for i in x):
            lines.append(f"{pad}{_scalar(k, False)}:{comment}")
            dash = col + lay.seq_offset
            for item in x:
                sub: list[str] = []
                render_block(item, dash + 2, lay, sub, flow_keys)
                sub[0] = " " * dash + "- " + sub[0][dash + 2 :]
                lines.extend(sub)
        else:
            lines.append(f"{pad}{_scalar(k, False)}: {_flow(x, lay.quote)}{comment}")
        if lay.comments and len(lines) % 7 == 0:
            lines.append(f"{pad}# a comment line")


def render_docs(docs: list[dict[str, Any]], lay: Layout) -> bytes:
    parts: list[str] = []
    flow = frozenset({"resources"}) if lay.flow_resources else frozenset()
    for d in docs:
        lines: list[str] = []
        render_block(d, 0, lay, lines, flow)
        parts.append("\n".join(lines))
    text = "\n---\n".join(parts)
    if lay.trailing_newline:
        text += "\n"
    if lay.crlf:
        text = text.replace("\n", "\r\n")
    return (("\ufeff" if lay.bom else "") + text).encode()


layouts = st.builds(
    Layout,
    indent=st.sampled_from([2, 4]),
    seq_offset=st.sampled_from([0, 2]),
    flow_resources=st.booleans(),
    quote=st.booleans(),
    crlf=st.booleans(),
    bom=st.booleans(),
    trailing_newline=st.booleans(),
    comments=st.booleans(),
)
names = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)
other_keys = st.dictionaries(st.sampled_from(["env-x", "workingDir", "tty", "stdin"]), st.sampled_from(["a", "b c", 1]),
                             max_size=2)


@st.composite
def containers(draw: st.DrawFn, prefix: str) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(0 if prefix == "init" else 1, 3))):
        c: dict[str, Any] = {"name": f"{prefix}{i}", "image": draw(st.sampled_from(["img:1", "registry/x:2"]))}
        c.update(draw(other_keys))
        res: dict[str, Any] = {}
        count = draw(st.integers(0, 8))
        where = draw(st.sampled_from(["none", "limits", "requests", "both"]))
        extra = draw(st.sampled_from([{}, {"memory": "1Gi"}, {"cpu": "500m"}]))
        if where in ("limits", "both"):
            res["limits"] = {GPU: count, **extra}
        if where in ("requests", "both"):
            res["requests"] = {GPU: count, **extra}
        if where == "none" and extra:
            res["limits"] = dict(extra)
        if res:
            c["resources"] = res
        out.append(c)
    return out


@st.composite
def pod_spec(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    init = draw(containers("init"))
    if init:
        spec["initContainers"] = init
    spec["containers"] = draw(containers("app"))
    if draw(st.booleans()):
        spec["restartPolicy"] = "Never"
    return spec


@st.composite
def workload(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(WORKLOAD_KINDS))
    meta = {"name": draw(names)}
    spec = draw(pod_spec())
    tmpl = {"metadata": {"labels": {"app": meta["name"]}}, "spec": spec}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if kind == "Deployment":
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
                "spec": {"replicas": draw(st.integers(1, 3)), "template": tmpl}}
    if kind == "Job":
        return {"apiVersion": "batch/v1", "kind": kind, "metadata": meta, "spec": {"template": tmpl}}
    return {"apiVersion": "batch/v1", "kind": kind, "metadata": meta,
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": tmpl}}}}


unrelated = st.sampled_from([
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "v"}},
])


@st.composite
def manifest(draw: st.DrawFn) -> list[dict[str, Any]]:
    docs = draw(st.lists(st.one_of(workload(), unrelated), min_size=1, max_size=3))
    if draw(st.booleans()) and len(docs) > 1:
        return [{"apiVersion": "v1", "kind": "List", "items": docs}]
    # names must be unique per kind, as in a real repository
    for i, d in enumerate(docs):
        d["metadata"] = {**d["metadata"], "name": f"{d['metadata']['name']}-{i}"}
    return docs
