"""Full GPUs: one request per GPU-using container, so containers never share devices (as with the device
plugin); init containers reuse an app container's devices where they fit; nvidia.com/gpu keys removed."""

from __future__ import annotations

from collections.abc import Callable

from dra_migrate.ir import Container, ContainerRole, DocPath
from dra_migrate.lower.backends import DeviceChoice, Request
from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.names import dns_label, unique
from dra_migrate.plan import DeleteKey
from dra_migrate.resources import classify

GPU_CLASS = "gpu.nvidia.com"


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    containers = tl.template.gpu_containers
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
    by_container: dict[DocPath, Request] = {}
    for c in [c for c in containers if c.role is not ContainerRole.INIT]:
        count = sum(d.count for d in c.demands if own(d.resource))
        if count == 0:
            continue
        name = unique(dns_label(c.name), taken)
        taken.add(name)
        req = Request(name, DeviceChoice(GPU_CLASS, count))
        tl.requests.append(req)
        by_container[c.path] = req
        tl.container_refs.setdefault(c.path, []).append(name)
        if c.role is ContainerRole.SIDECAR:
            tl.diag("DRA206", f"sidecar {c.name!r} keeps its own {count} GPU(s) (request {name!r})", 0, c)
    app_requests = [by_container[c.path] for c in containers if c.role is ContainerRole.APP and c.path in by_container]
    init_req: Request | None = None
    own_request: list[Container] = []
    for c in [c for c in containers if c.role is ContainerRole.INIT]:
        count = sum(d.count for d in c.demands if own(d.resource))
        if count == 0:
            continue
        fits = sorted((r for r in app_requests if r.choice and r.choice.count >= count), key=lambda r: r.choice.count)  # type: ignore[union-attr]
        if fits:
            req = fits[0]
            tl.container_refs.setdefault(c.path, []).append(req.name)
            assert req.choice is not None
            if req.choice.count > count:
                tl.diag(
                    "DRA209",
                    f"init container {c.name!r} asked for {count} GPU(s) and now sees the "
                    f"{req.choice.count} of request {req.name!r}",
                    0,
                    c,
                )
            else:
                tl.diag("DRA204", f"init container {c.name!r} reuses the GPU(s) of request {req.name!r}", 0, c)
            continue
        # Init containers run one after another, so those no app request fits share one request, sized for
        # the largest of them.
        if init_req is None or init_req.choice is None:
            name = unique(dns_label(c.name), taken)
            taken.add(name)
            init_req = Request(name, DeviceChoice(GPU_CLASS, count))
            tl.requests.append(init_req)
        else:
            init_req.choice.count = max(init_req.choice.count, count)
        tl.container_refs.setdefault(c.path, []).append(init_req.name)
        own_request.append(c)
    if init_req is not None and init_req.choice is not None:
        before = _device_plugin_demand(containers)
        after = sum(r.choice.count for r in tl.requests if r.choice)
        if after > before:
            names = ", ".join(repr(c.name) for c in own_request)
            tl.diag(
                "DRA205",
                f"init container(s) {names} need up to {init_req.choice.count} GPU(s) and no app "
                f"container request has as many: they share their own request {init_req.name!r}; the pod now "
                f"holds {after} GPU(s) for its lifetime instead of {before}",
                0,
                own_request[0],
            )
    for c in containers:
        for d in c.demands:
            if d.count == 0:
                tl.diag("DRA212", f"container {c.name!r} requests 0 of {d.resource}; the key is removed", d.line)
    tl.ops.extend(remove_resource_keys(tl, containers, lambda r: _is_gpu(r) or r in tl.handled))


def _is_gpu(resource: str) -> bool:
    rc = classify(resource)
    return rc is not None and rc.scheme == "gpu"


def _handled_elsewhere(tl: TemplateLowering, resource: str) -> bool:
    if resource in tl.handled:
        return True
    handled = tl.workload.annotations.get("\0handled", "")
    return resource in handled.split(",")


def _device_plugin_demand(containers: list[Container]) -> int:
    """The pod's effective GPU demand under the device plugin (Kubernetes effective-request rule)."""
    apps = sum(c.gpu_count for c in containers if c.role is not ContainerRole.INIT)
    sidecars_so_far = 0
    init_peak = 0
    for c in sorted((c for c in containers if c.role is not ContainerRole.APP), key=lambda c: c.index):
        if c.role is ContainerRole.SIDECAR:
            sidecars_so_far += c.gpu_count
        else:
            init_peak = max(init_peak, c.gpu_count + sidecars_so_far)
    return max(apps, init_peak)


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
