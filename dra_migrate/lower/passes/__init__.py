"""Lowering passes, run in this order on every pod template that requests GPUs.

Each pass is a small module with one `run(tl: TemplateLowering, ctx: RunContext) -> None`; register new
passes here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable

from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.passes import gpu_requests, ray_num_gpus, selection, toleration

Pass = Callable[[TemplateLowering, RunContext], None]

PASSES: list[tuple[str, Pass]] = [
    ("gpu-requests", gpu_requests.run),
    ("selection", selection.run),
    ("toleration", toleration.run),
    (ray_num_gpus.NAME, ray_num_gpus.run),
]

# Side effects a kind rule may name (`sideEffects`): the passes above that check for them, plus the
# object-level ones in dra_migrate.frontend.effects.
PASS_SIDE_EFFECTS = frozenset({ray_num_gpus.NAME})
