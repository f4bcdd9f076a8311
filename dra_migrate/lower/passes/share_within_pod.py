"""Containers of one pod that the user wants on the same GPUs reference one request.

Opt-in only (annotation dra-migrate.io/share-within-pod: "true" on the workload or pod template, or
--share-within-pod): the device plugin always gave containers distinct GPUs, so sharing changes what the
containers see. DRA lets several containers reference one request; they then see the same devices.
"""

from __future__ import annotations

from dra_migrate.config import SharingOptions
from dra_migrate.lower.backends import DeviceChoice, Request
from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.demand import effective_demand
from dra_migrate.lower.names import unique
from dra_migrate.lower.pass_spec import Pass
from dra_migrate.lower.passes._sharing_common import WITHIN_POD_ANNOTATION, annotation

GPU = "nvidia.com/gpu"
GPU_CLASS = "gpu.nvidia.com"


def wanted(tl: TemplateLowering, ctx: RunContext) -> bool:
    value = annotation(tl, WITHIN_POD_ANNOTATION)
    if value is not None:
        if value.lower() in ("true", "false"):
            return value.lower() == "true"
        tl.diag("DRA515", f"{WITHIN_POD_ANNOTATION}: {value!r} is not \"true\" or \"false\"; ignored")
    return ctx.options.sharing.within_pod


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    if GPU in tl.handled:
        return
    users = [(c, sum(d.count for d in c.demands if d.resource == GPU)) for c in tl.template.gpu_containers]
    users = [(c, n) for c, n in users if n > 0]
    if len(users) < 2 or not wanted(tl, ctx):
        return
    count = max(n for _, n in users)
    name = unique("shared-gpu", {r.name for r in tl.requests})
    tl.requests.append(Request(name, DeviceChoice(GPU_CLASS, count)))
    for c, _ in users:
        tl.container_refs.setdefault(c.path, []).append(name)
    tl.handled.add(GPU)
    counts = {c.path: n for c, n in users}
    before = effective_demand(tl.template.containers, lambda c: counts.get(c.path, 0))
    tl.diag("DRA513", f"containers {', '.join(repr(c.name) for c, _ in users)} share request {name!r} "
            f"({count} GPU(s) for the pod instead of {before})")


PASS = Pass(name="share-within-pod", run=run, after=("sharing", "mig"), options=SharingOptions,
            codes=("DRA513", "DRA515"))
