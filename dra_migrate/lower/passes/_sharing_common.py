"""Helpers the sharing and MIG passes share (not a pass)."""

from __future__ import annotations

from dra_migrate.frontend.mig import profiles_for
from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.sharing.model import SharingInventory

SHARING_ANNOTATION = "dra-migrate.io/sharing"
WITHIN_POD_ANNOTATION = "dra-migrate.io/share-within-pod"
EXCLUSIVE, SHARED_CLAIM, CONSUMABLE = "exclusive", "shared-claim", "consumable"
SHARING_FORMS = (SHARED_CLAIM, EXCLUSIVE, CONSUMABLE)


def inventory(ctx: RunContext) -> SharingInventory:
    return ctx.facts.sharing


def single_profile(tl: TemplateLowering) -> str | None:
    """The MIG profile nvidia.com/gpu stands for under the single strategy, when the selection pins one."""
    profiles = profiles_for(tl.template.node_selector, tl.template.affinity)
    if len(profiles) == 1:
        return next(iter(profiles))
    return None


def annotation(tl: TemplateLowering, key: str) -> str | None:
    """The pod template's annotation wins over the workload's."""
    return tl.template.annotations.get(key, tl.workload.annotations.get(key))
