"""Lowering passes, run in this order on every pod template that requests GPUs.

Each pass is a small module with one `run(tl: TemplateLowering, ctx: RunContext) -> None`; register new
passes here and nowhere else. Passes that translate a resource themselves add it to `tl.handled`, so
gpu-requests leaves it alone (and removes its keys with the others).
"""

from __future__ import annotations

from collections.abc import Callable

from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.passes import (
    already_dra,
    gpu_requests,
    mig,
    other_schemes,
    ray_num_gpus,
    selection,
    share_within_pod,
    sharing,
    toleration,
)

Pass = Callable[[TemplateLowering, RunContext], None]

PASSES: list[tuple[str, Pass]] = [
    ("already-dra", already_dra.run),  # a DeviceClass in the repo already maps the resource to DRA
    ("other-schemes", other_schemes.run),  # HAMi / Volcano / KAI: detect and leave untouched
    ("sharing", sharing.run),  # time-slicing / MPS: shared claim or exclusive
    ("mig", mig.run),  # MIG slices (mixed and single strategy)
    ("share-within-pod", share_within_pod.run),
    ("gpu-requests", gpu_requests.run),
    ("selection", selection.run),
    ("toleration", toleration.run),
    (ray_num_gpus.NAME, ray_num_gpus.run),
]

# run on pod templates without any device plugin resource (schemes that ask for GPUs by annotation)
NON_GPU_CHECKS: list[Pass] = [other_schemes.check_non_gpu]
# Side effects a kind rule may name (`sideEffects`): the passes above that check for them, plus the
# object-level ones in dra_migrate.frontend.effects.
PASS_SIDE_EFFECTS = frozenset({ray_num_gpus.NAME})
