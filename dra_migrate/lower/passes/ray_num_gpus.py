"""Side effect `ray-num-gpus`: keep Ray's GPU count once the nvidia.com/gpu limit is gone.

KubeRay builds `ray start` from the group's rayStartParams; when they have no num-gpus it derives the count
from the Ray container's limits (ray-project/kuberay ray-operator/controllers/ray/common/pod.go,
generateRayStartCommand, formerly concatenateContainerCommand: the first limit whose name ends in "gpu"
becomes `num-gpus`; the autoscaler's computeGPU reads the same two places). The Ray container is
containers[0] unless one sets env RAY=true (getRayContainerIndex in old releases; index 0 in current ones).
After migration the limit is gone, Ray would start with 0 GPUs, so the count is written explicitly.
KubeRay >= v1.5 rejects num-gpus in rayStartParams when the group sets `resources`
(validateRayGroupResources), so such groups are left alone: Ray takes the count from `resources`.
"""

from __future__ import annotations

from typing import Any

from dra_migrate.ir import ContainerRole
from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.pass_spec import Pass
from dra_migrate.plan import ReplaceValue, SetKey

NAME = "ray-num-gpus"
PARAMS = "rayStartParams"


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    wl = tl.workload
    if NAME not in wl.side_effects or tl.skip or not tl.requests:
        return
    path = tl.template.path
    if path[-2:] != ("template", "spec"):
        return  # not a head/worker group (e.g. a RayJob's submitter pod): no ray start there
    group_path = path[:-2]
    group = wl.data
    for seg in group_path[len(wl.item_path) :]:
        group = group[seg]
    apps = [c for c in tl.template.containers if c.role is ContainerRole.APP]
    ray = next((c for c in apps if c.index == 0), None)
    if ray is None or not ray.demands or not isinstance(group, dict):
        return
    count = str(ray.gpu_count)  # rayStartParams is map[string]string in KubeRay's API
    if group.get("resources"):
        return
    params: Any = group.get(PARAMS)
    if isinstance(params, dict) and "num-gpus" in params:
        return
    if params is None and PARAMS not in group:
        tl.ops.append(SetKey((*group_path, PARAMS), {"num-gpus": count}))
    elif isinstance(params, dict) and params:
        tl.ops.append(SetKey((*group_path, PARAMS, "num-gpus"), count))
    elif params is None or params == {}:
        tl.ops.append(ReplaceValue((*group_path, PARAMS), {"num-gpus": count}))
    else:
        tl.diag("DRA410", f"{PARAMS} of this Ray group is not a mapping; set num-gpus: \"{count}\" by hand")
        return
    tl.diag("DRA409", f"set {PARAMS}.num-gpus: \"{count}\" for this Ray group: KubeRay used to derive it "
            f"from container {ray.name!r}'s nvidia.com/gpu limit, which is now a claim")


# After the translation (it needs the final requests); after toleration only to keep the diagnostics order.
PASS = Pass(name=NAME, run=run, after=("toleration",), side_effects=(NAME,), codes=("DRA409", "DRA410"))
