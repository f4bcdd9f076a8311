"""Side effect `appwrapper-autopilot`: the GPU-health anti-affinity AppWrapper adds only for nvidia.com/gpu.

project-codeflare/appwrapper internal/controller/appwrapper/resource_management.go (createComponent):
with Autopilot.InjectAntiAffinities (on by default, pkg/config/config.go NewAppWrapperConfig) every pod
template of a component that requests `nvidia.com/gpu` (hasResourceRequest: limits or requests > 0) gets
node anti-affinity on the Autopilot health label: NotIn the NoSchedule/NoExecute values (TESTING, EVICT),
required, and NotIn the PreferNoSchedule value (WARN), preferred with weight 50. A migrated template requests
a claim, so the controller stops adding it: reported with the affinity to add (DRA414), not added here,
since what the controller injects is its own configuration.
"""

from __future__ import annotations

from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.pass_spec import Pass

NAME = "appwrapper-autopilot"
RESOURCE = "nvidia.com/gpu"  # the ResourceTaints key of the default config
LABEL = "autopilot.ibm.com/gpuhealth"


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    if NAME not in tl.workload.side_effects or tl.skip or not tl.requests:
        return
    if not any(d.resource == RESOURCE for c in tl.template.gpu_containers for d in c.demands):
        return
    tl.diag(
        "DRA414",
        f"the AppWrapper controller adds node anti-affinity on {LABEL} only to pod templates that request "
        f"{RESOURCE}; this one now requests a claim, so with Autopilot enabled (the default) add it by hand: "
        f"requiredDuringSchedulingIgnoredDuringExecution matchExpressions {{key: {LABEL}, operator: NotIn, "
        f"values: [TESTING, EVICT]}} (in every nodeSelectorTerm) and preferredDuringSchedulingIgnoredDuringExecution "
        f"{{weight: 50, preference: {{matchExpressions: [{{key: {LABEL}, operator: NotIn, values: [WARN]}}]}}}}",
    )


# After ray-num-gpus only to keep the diagnostics order (both report on the final requests).
PASS = Pass(name=NAME, run=run, after=("ray-num-gpus",), side_effects=(NAME,), codes=("DRA414",))
