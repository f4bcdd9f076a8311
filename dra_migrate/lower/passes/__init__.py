"""Lowering passes, run in PASSES order on every pod template that requests GPUs.

Each pass is a module here that declares itself: `PASS = Pass(name, run, after=…, side_effects=…, codes=…,
options=…)` (dra_migrate.lower.pass_spec). They are collected from the package's modules and ordered by their
`after` declarations, so a new pass is one new module and nothing else; modules named `_…` are helpers. Passes
that translate a resource themselves add it to `tl.handled`, so gpu-requests leaves it alone (and removes its
keys with the others).
"""

from __future__ import annotations

from dra_migrate.frontend.effects import EFFECTS
from dra_migrate.lower.pass_spec import Pass, PassRun, collect

PASSES: tuple[Pass, ...] = collect(__name__, __path__)

# run on pod templates without any device plugin resource (schemes that ask for GPUs by annotation)
NON_GPU_CHECKS: tuple[PassRun, ...] = tuple(p.non_gpu for p in PASSES if p.non_gpu is not None)

# Every side effect a kind rule may name (`sideEffects`): the pod-template ones the passes implement, and the
# object-level ones of dra_migrate.frontend.effects (quotas). A rule naming another fails to load (DRA402).
SIDE_EFFECTS: frozenset[str] = frozenset({e for p in PASSES for e in p.side_effects} | set(EFFECTS))
