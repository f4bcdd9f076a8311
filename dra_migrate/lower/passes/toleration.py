"""Keep pods schedulable on tainted GPU nodes once the extended resource is gone.

The ExtendedResourceToleration admission plugin added `nvidia.com/gpu:NoSchedule` (operator Exists) to
every pod that requested nvidia.com/gpu; nothing adds it for a DRA claim.
"""

from __future__ import annotations

from typing import Any

from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.pass_spec import Pass
from dra_migrate.plan import Append, ReplaceValue, SetKey

TAINT_KEY = "nvidia.com/gpu"
TOLERATION: dict[str, Any] = {"key": TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}


def tolerates(t: dict[str, Any]) -> bool:
    """Whether an existing toleration is at least as broad as the one the admission plugin added."""
    key = t.get("key") or ""
    operator = t.get("operator") or "Equal"
    effect = t.get("effect") or ""
    if effect not in ("", "NoSchedule"):
        return False
    if operator == "Exists":
        return key in ("", TAINT_KEY)
    return False


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    if tl.skip or not ctx.options.add_toleration or not tl.requests:
        return
    if any(tolerates(t) for t in tl.template.tolerations):
        return
    path = (*tl.template.path, "tolerations")
    if tl.template.tolerations:
        tl.ops.append(Append(path, (dict(TOLERATION),)))
    elif _has_key(tl, "tolerations"):  # `tolerations: []` or `tolerations: null`
        tl.ops.append(ReplaceValue(path, [dict(TOLERATION)]))
    else:
        tl.ops.append(SetKey(path, [dict(TOLERATION)]))
    tl.diag("DRA208", "added toleration nvidia.com/gpu:NoSchedule (operator Exists), which the "
            "ExtendedResourceToleration admission plugin used to add implicitly")


def _has_key(tl: TemplateLowering, key: str) -> bool:
    return key in tl.template.present_keys


PASS = Pass(name="toleration", run=run, after=("shared-claim",), codes=("DRA208",))  # templates that got a claim
