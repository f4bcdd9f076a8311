"""Full GPUs: one request per GPU-using app container and sidecar, so containers never share devices (as with
the device plugin); plain init containers are left to the init-containers pass (device reuse); nvidia.com/gpu
keys removed."""

from __future__ import annotations

from collections.abc import Callable

from dra_migrate.ir import Container, ContainerRole, DocPath
from dra_migrate.lower.backends import DeviceChoice, Request
from dra_migrate.lower.context import InitDemand, RunContext, TemplateLowering
from dra_migrate.lower.names import dns_label, unique
from dra_migrate.lower.pass_spec import Pass
from dra_migrate.plan import DeleteKey
from dra_migrate.ruleset.resources import classify

GPU = "nvidia.com/gpu"
GPU_CLASS = "gpu.nvidia.com"


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    containers = tl.template.gpu_containers
    # Zero replicas of a device plugin GPU resource (renamed shared ones too) ask for nothing: the scheduler skips
    # zero requests and the kubelet allocates no device, so the key goes like a zero nvidia.com/gpu (DRA212).
    asked = {d.resource for c in containers for d in c.demands if d.count}
    tl.handled |= {d.resource for c in containers for d in c.demands
                   if not d.count and d.resource not in asked and _device_plugin_gpu(d.resource)}
    for c in containers:
        for d in c.demands:
            rc = classify(d.resource)
            if (rc is None or rc.scheme != "gpu" or d.resource in tl.handled) and not _handled_elsewhere(
                tl, d.resource
            ):
                    tl.diag(
                        "DRA213",
                        f"container {c.name!r}: {d.resource} is not translated by this version; "
                        "the pod template is left as is",
                        d.line,
                    )
                    tl.skip = True
    if tl.skip:
        return

    def own(resource: str) -> bool:  # full GPUs that no earlier pass (sharing, MIG) translated
        return _is_gpu(resource) and resource not in tl.handled

    taken: set[str] = {r.name for r in tl.requests}
    for c in containers:
        count = sum(d.count for d in c.demands if own(d.resource))
        if count == 0:
            continue
        if c.role is ContainerRole.INIT:  # placed on the others' requests by the init-containers pass
            tl.init_demands.append(InitDemand(c, GPU, count, DeviceChoice(GPU_CLASS, count), c.name))
            continue
        name = unique(dns_label(c.name), taken)
        taken.add(name)
        tl.requests.append(Request(name, DeviceChoice(GPU_CLASS, count)))
        tl.request_resources[name] = GPU
        tl.container_refs.setdefault(c.path, []).append(name)
        if c.role is ContainerRole.SIDECAR:
            tl.diag("DRA206", f"sidecar {c.name!r} keeps its own {count} GPU(s) (request {name!r})", 0, c)
    for c in containers:
        for d in c.demands:
            if d.count == 0:
                tl.diag("DRA212", f"container {c.name!r} requests 0 of {d.resource}; the key is removed", d.line)
    tl.ops.extend(remove_resource_keys(tl, containers, lambda r: _is_gpu(r) or r in tl.handled))


def _device_plugin_gpu(resource: str) -> bool:
    rc = classify(resource)
    return rc is not None and rc.scheme in ("gpu", "shared", "mig")


def _is_gpu(resource: str) -> bool:
    rc = classify(resource)
    return rc is not None and rc.scheme == "gpu"


def _handled_elsewhere(tl: TemplateLowering, resource: str) -> bool:
    if resource in tl.handled:
        return True
    handled = tl.workload.annotations.get("\0handled", "")
    return resource in handled.split(",")


def remove_resource_keys(
    tl: TemplateLowering, containers: list[Container], wanted: Callable[[str], bool]
) -> list[DeleteKey]:
    """Delete the wanted resource keys; drop a limits/requests map that the deletion empties."""
    ops: list[DeleteKey] = []
    for c in containers:
        for section, keys in c.resource_sections.items():
            doomed = [d.resource for d in c.demands if wanted(d.resource) and d.resource in keys]
            if not doomed:
                continue
            section_path: DocPath = (*c.path, "resources", section)
            if set(doomed) >= set(keys):
                ops.append(DeleteKey(section_path))
            else:
                ops.extend(DeleteKey((*section_path, k)) for k in doomed)
    return ops


PASS = Pass(name="gpu-requests", run=run, after=("sharing", "mig", "share-within-pod"),  # what they left: tl.handled
            codes=("DRA206", "DRA212", "DRA213"))
