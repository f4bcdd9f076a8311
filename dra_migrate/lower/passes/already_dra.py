"""Pod templates whose GPU resources a DeviceClass in the repo already maps to DRA (KEP-5004
extendedResourceName): the scheduler allocates them through DRA, and a rewrite would only duplicate that.
Runs first, so no later pass translates part of such a template."""

from __future__ import annotations

from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.pass_spec import Pass


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    backed = ctx.facts.classes_for(tl.workload.file)
    served = sorted({d.resource for c in tl.template.gpu_containers for d in c.demands if d.resource in backed})
    if served:
        tl.diag("DRA614", "already served by DRA: " + ", ".join(f"{r} by DeviceClass {backed[r]!r}" for r in served)
                + "; the pod template is left as is")
        tl.skip = True


PASS = Pass(name="already-dra", run=run, codes=("DRA614",))  # first: nothing translates part of such a template
