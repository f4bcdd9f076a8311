"""The opt-out annotation: `dra-migrate.io/skip: "<reason>"` leaves a workload untouched."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dra_migrate.lower.context import TemplateLowering

if TYPE_CHECKING:
    from dra_migrate.ir import Workload
    from dra_migrate.lower.context import RunContext, TemplateLowering

SKIP_ANNOTATION = "dra-migrate.io/skip"


def skip_lowering(wl: Workload, ctx: RunContext) -> TemplateLowering | None:
    """A skipped lowering carrying the diagnostic when the workload opts out, else None.

    Only workloads that need GPUs are reported: the annotation on anything else changes nothing.
    """
    if SKIP_ANNOTATION not in wl.annotations:
        return None
    gpu_templates = [t for t in wl.pod_templates if t.gpu_containers]
    if not gpu_templates:
        return None
    reason = wl.annotations[SKIP_ANNOTATION].strip() or "(no reason given)"
    tl = TemplateLowering(wl, gpu_templates[0], "", "", skip=True)
    if ctx.options.strict:
        tl.diag("DRA707", f"{SKIP_ANNOTATION}: {reason!r}; --strict forbids skipping a GPU workload", wl.line)
    else:
        tl.diag("DRA706", f"left untouched ({SKIP_ANNOTATION}: {reason!r})", wl.line)
    return tl
