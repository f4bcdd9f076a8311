"""Pods on a cloud provider's own MIG-partition or GPU-sharing node pool (GKE's): that provider's DRA supports
neither, so they stay on the device plugin (DRA518). Runs before any translation."""

from __future__ import annotations

from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.pass_spec import Pass


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    """Before any translation: a pod selecting a cloud provider's own MIG-partition or GPU-sharing node pool
    (GKE's) stays on the device plugin, because that provider's DRA supports neither (DRA518)."""
    implied = tl.template.implied
    if not implied.provider or not tl.template.gpu_containers:
        return
    provider = implied.provider_name.upper()
    tl.diag(
        "DRA518",
        f"{', '.join(implied.provider)}: a {provider} {implied.provider_feature} node pool, where {provider}'s own "
        f"GPU stack serves nvidia.com/gpu; {provider}'s DRA supports neither MIG partitions nor time-sharing nor "
        "MPS, so the pod template is left as is on the device plugin",
        tl.template.selection_line,
    )
    tl.skip = True


PASS = Pass(name="provider-features", run=run, after=("already-dra",), codes=("DRA518",))
