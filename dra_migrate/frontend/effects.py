"""Object-level side effects named in `nonWorkloads[].sideEffects` of the kind rules.

Each effect reports what a non-workload object (a quota) means once GPUs come from DRA claims and, where
the equivalent is exact, plans the edit. Pod-template side effects (ray-num-gpus) are lowering passes.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from dra_migrate.config import Options
from dra_migrate.frontend.counts import parse_gpu_count
from dra_migrate.frontend.crd_checks import ObjectCheck
from dra_migrate.plan import SetKey
from dra_migrate.ruleset.kinds import NonWorkloadRule, format_path, resolve
from dra_migrate.ruleset.resources import classify

# kubernetes pkg/quota/v1/evaluator/core/resource_claims.go (V1ResourceByDeviceClass: className +
# corev1.ResourceClaimsPerClass): claims are charged per device class, summing exact counts. There is no
# requests./limits. prefix for it. The migrated claims use the gpu.nvidia.com class.
GPU_CLASS = "gpu.nvidia.com"
DRA_QUOTA_KEY = GPU_CLASS + ".deviceclass.resource.k8s.io/devices"
QUOTA_KEYS = ("requests.nvidia.com/gpu", "limits.nvidia.com/gpu", "nvidia.com/gpu")

Effect = Callable[[ObjectCheck, NonWorkloadRule, Options], None]


def resource_quota(chk: ObjectCheck, rule: NonWorkloadRule, options: Options) -> None:
    spec = chk.obj.get("spec")
    hard = spec.get("hard") if isinstance(spec, dict) else None
    if not isinstance(hard, dict):
        return
    entries = [(k, hard[k]) for k in QUOTA_KEYS if k in hard]
    for k, v in hard.items():  # other nvidia.com resources (MIG, shared) have no single-class equivalent
        name = k.removeprefix("requests.").removeprefix("limits.") if isinstance(k, str) else ""
        if k not in QUOTA_KEYS and classify(name):
            chk.report("DRA406", f"{rule.note} spec.hard.[{k}]: {json.dumps(v)} does not count DRA claims; "
                       "limit their device class with `<class>.deviceclass.resource.k8s.io/devices`",
                       ("spec", "hard", k))
    if not entries or DRA_QUOTA_KEY in hard:
        return  # already migrated (or nothing to do): stay quiet so a second run is clean
    counts = [parse_gpu_count(v) for _k, v in entries]
    for k, v in entries:
        chk.report("DRA411", f"spec.hard.[{k}]: {json.dumps(v)} does not count GPUs allocated through DRA "
                   f"claims; the DRA equivalent is {DRA_QUOTA_KEY}", ("spec", "hard", k))
    if not options.dra_quota or any(c is None for c in counts):
        return
    # The tightest entry wins, as the quota admission checks every entry.
    idx = min(range(len(entries)), key=lambda i: counts[i] or 0)
    key, value = entries[idx]
    chk.wl.extra_ops.append(SetKey((*chk.item_path, "spec", "hard", DRA_QUOTA_KEY), value))
    chk.report("DRA412", f"added {DRA_QUOTA_KEY}: {json.dumps(value)} beside {key} (kept: nodes still "
               "served by the device plugin are counted by it); --no-dra-quota leaves the quota as it is",
               ("spec", "hard", key))


def kueue_quota(chk: ObjectCheck, rule: NonWorkloadRule, options: Options) -> None:
    for gf in rule.gpu_fields:
        for concrete, entry in resolve(chk.obj, gf.path):
            name = entry.get("name") if isinstance(entry, dict) else entry if isinstance(entry, str) else None
            if not isinstance(name, str) or classify(name) is None:
                continue
            nominal = entry.get("nominalQuota") if isinstance(entry, dict) else None
            quota = f" nominalQuota {json.dumps(nominal)}" if nominal is not None else ""
            chk.report("DRA413", f"{format_path(concrete)} {name}{quota}: {gf.note}", concrete)


EFFECTS: dict[str, Effect] = {
    "resourcequota-dra-devices": resource_quota,
    "kueue-dra-quota": kueue_quota,
}
