"""Keep pods schedulable on tainted GPU nodes once the extended resource is gone.

The ExtendedResourceToleration admission plugin added `<resource>:NoSchedule` (operator Exists) to every pod
for each extended resource it requested (`nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`, ...); nothing adds them
for a DRA claim.
"""

from __future__ import annotations

from typing import Any

from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.pass_spec import Pass
from dra_migrate.plan import Append, ReplaceValue, SetKey


def toleration(resource: str) -> dict[str, Any]:
    return {"key": resource, "operator": "Exists", "effect": "NoSchedule"}


def tolerates(t: dict[str, Any], resource: str) -> bool:
    """Whether an existing toleration is at least as broad as the one the admission plugin added for
    `resource`."""
    key = t.get("key") or ""
    operator = t.get("operator") or "Equal"
    effect = t.get("effect") or ""
    if effect not in ("", "NoSchedule"):
        return False
    if operator == "Exists":
        return key in ("", resource)
    return False


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    if tl.skip or not ctx.options.add_toleration or not tl.requests:
        return
    # the plugin adds one per extended resource of the pod's containers and init containers, keyed by its name
    resources = sorted({d.resource for c in tl.template.gpu_containers for d in c.demands})
    missing = [r for r in resources if not any(tolerates(t, r) for t in tl.template.tolerations)]
    if not missing:
        return
    added = [toleration(r) for r in missing]
    path = (*tl.template.path, "tolerations")
    if tl.template.tolerations:
        tl.ops.append(Append(path, tuple(added)))
    elif _has_key(tl, "tolerations"):  # `tolerations: []` or `tolerations: null`
        tl.ops.append(ReplaceValue(path, added))
    else:
        tl.ops.append(SetKey(path, added))
    for r in missing:
        tl.diag("DRA208", f"added toleration {r}:NoSchedule (operator Exists), which the "
                "ExtendedResourceToleration admission plugin used to add implicitly")


def _has_key(tl: TemplateLowering, key: str) -> bool:
    return key in tl.template.present_keys


PASS = Pass(name="toleration", run=run, after=("shared-claim",), codes=("DRA208",))  # templates that got a claim
