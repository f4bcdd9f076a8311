"""GPU sharing schemes with no direct DRA translation (HAMi, Volcano vGPU, KAI scheduler fractions).

Their nvidia.com/gpu is not a whole GPU, so translating it as one would silently over-allocate: the pod
template is left as is, with a warning saying what the DRA equivalent would need.
"""

from __future__ import annotations

from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.pass_spec import Pass
from dra_migrate.ruleset.resources import classify

KAI_ANNOTATIONS = ("gpu-fraction", "gpu-memory")


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    for scheme, code in (("hami", "DRA510"), ("volcano-vgpu", "DRA512")):
        found = sorted(
            {
                (c.name, d.resource, d.count, d.line)
                for c in tl.template.containers
                for d in c.demands
                if (rc := classify(d.resource)) is not None and rc.scheme == scheme
            }
        )
        if found:
            names = ", ".join(f"{r}={n} (container {c!r})" for c, r, n, _ in found)
            gpu_note = ""
            if scheme == "hami" and any(
                d.resource == "nvidia.com/gpu" for c in tl.template.containers for d in c.demands
            ):
                gpu_note = "; nvidia.com/gpu here counts capped vGPU slices, not whole GPUs"
            tl.diag(code, f"{names}: not translated, the pod template is left as is{gpu_note}", found[0][3])
            tl.skip = True
            return
    kai = {k: tl.template.annotations[k] for k in KAI_ANNOTATIONS if k in tl.template.annotations}
    if kai:
        what = ", ".join(f"{k}={v!r}" for k, v in kai.items())
        tl.diag(
            "DRA511", f"KAI scheduler GPU sharing annotation {what}: not translated, the pod template is left as is"
        )
        tl.skip = True


def check_non_gpu(tl: TemplateLowering, ctx: RunContext) -> None:
    """The same check on pod templates without device plugin resources (KAI asks by annotation only)."""
    run(tl, ctx)


PASS = Pass(name="other-schemes", run=run, after=("already-dra",), codes=("DRA510", "DRA511", "DRA512"),
            non_gpu=check_non_gpu)
