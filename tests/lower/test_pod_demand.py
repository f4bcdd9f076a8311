"""Pod-level device demand of every golden pod: what the device plugin gave it, the migrated claim holds.

For each GPU pod spec of a golden input that the migration rewrote, per device plugin resource (nvidia.com/gpu,
each nvidia.com/mig-<profile>):
- the pod's claim holds exactly the kubelet's effective demand: max(Σ app + Σ sidecars, max over init entries
  of their use), a sidecar's use being the sidecars up to and including it, a plain init container's its own
  count plus the sidecars declared before it;
- every container sees (through the requests it references) at least its own count.

The BEFORE side is computed here from the input alone, not with the compiler's code. Requests are mapped back
to a resource by device class and MIG profile selector. Pods whose count the migration changes on purpose,
with a diagnostic, are left out: a named shared claim (DRA502), share-within-pod (DRA513), a renamed shared
resource clamped to one device (DRA514), and MIG single strategy (nvidia.com/gpu becomes MIG slices).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import GOLDEN

_MIG = re.compile(r"^nvidia\.com/mig-(?P<profile>[0-9]+g\.[0-9]+gb(?:\.[a-z+.]+)?)$")
_PROFILE_SELECTOR = re.compile(r"\.profile == '(?P<profile>[^']+)'")
_INTENDED = ("DRA502", "DRA513", "DRA514")


def _docs(path: Path) -> list[dict[str, Any]]:
    if path.is_dir():  # a kustomize tree: its pods exist once built (tests/run/test_kustomize_builds.py)
        return []
    try:
        docs = list(yaml.safe_load_all(path.read_bytes().decode("utf-8-sig")))
    except (UnicodeDecodeError, yaml.YAMLError):
        return []
    out: list[dict[str, Any]] = []
    for d in docs:
        if isinstance(d, dict) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            out.extend(i for i in d["items"] if isinstance(i, dict))
        elif isinstance(d, dict):
            out.append(d)
    return out


def _key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _pod_specs(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            yield path, node
            return
        for k, v in node.items():
            yield from _pod_specs(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _pod_specs(v, (*path, i))


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for seg in path:
        node = node[seg]
    return node


def _resource(name: str) -> str | None:
    """The resource, MIG profiles spelled as the DRA driver names them (`mig-1g.10gb.me` is `1g.10gb+me`); a
    renamed shared resource (renameByDefault: `nvidia.com/gpu.shared`) is a replica of the same device."""
    name = name.removesuffix(".shared")
    if name == "nvidia.com/gpu":
        return name
    m = _MIG.match(name)
    return "nvidia.com/mig-" + re.sub(r"gb\.", "gb+", m.group("profile"), count=1) if m else None


def counts(c: Mapping[str, Any]) -> dict[str, int]:
    """A container's device plugin counts per resource (limits win; requests alone count too)."""
    res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
    out: dict[str, int] = {}
    for section in ("requests", "limits"):
        for k, v in (res.get(section) or {}).items():
            r = _resource(str(k))
            if r is not None and str(v).strip().isdigit():
                out[r] = int(str(v).strip())
    return {r: n for r, n in out.items() if n}


def _containers(spec: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(role, container) in declaration order: initContainers (init or sidecar), then containers (app)."""
    out: list[tuple[str, Mapping[str, Any]]] = []
    for c in spec.get("initContainers") or []:
        if isinstance(c, dict):
            out.append(("sidecar" if c.get("restartPolicy") == "Always" else "init", c))
    out.extend(("app", c) for c in spec.get("containers") or [] if isinstance(c, dict))
    return out


def effective_demand(spec: Mapping[str, Any], resource: str) -> int:
    running = sidecars = peak = 0
    for role, c in _containers(spec):
        n = counts(c).get(resource, 0)
        if role == "app":
            running += n
        elif role == "sidecar":
            sidecars += n
            running += n
            peak = max(peak, sidecars)
        else:
            peak = max(peak, n + sidecars)
    return max(running, peak)


def _request_resource(req: Mapping[str, Any]) -> tuple[str, int]:
    """(resource, count) of one claim request; every firstAvailable alternative must agree."""
    alternatives = req.get("firstAvailable") or [req.get("exactly") or req]
    seen: set[tuple[str, int]] = set()
    for alt in alternatives:
        cls = alt.get("deviceClassName")
        exprs = " ".join(str((s.get("cel") or {}).get("expression", "")) for s in alt.get("selectors") or [])
        if cls == "gpu.nvidia.com":
            resource = "nvidia.com/gpu"
        elif cls == "mig.nvidia.com" and (m := _PROFILE_SELECTOR.search(exprs)):
            resource = f"nvidia.com/mig-{m.group('profile')}"
        else:
            resource = f"?{cls}"
        seen.add((resource, int(alt.get("count", 1))))
    assert len(seen) == 1, f"request {req.get('name')!r}: alternatives disagree on what they give: {seen}"
    return seen.pop()


def _skipped_workloads(case: Path) -> set[str]:
    diags = (case / "diagnostics.txt").read_text() if (case / "diagnostics.txt").exists() else ""
    return {m.group(1) for line in diags.splitlines() if any(c in line for c in _INTENDED)
            for m in [re.search(r"\[([^\]]+)\]", line)] if m}


def _ref(key: tuple[str, str, str]) -> str:
    kind, ns, name = key
    return f"{kind}/{ns + '/' if ns else ''}{name}"


# Labels GFD sets only on MIG single-strategy nodes, for the slice (gpu-feature-discovery.md): a pod selecting
# them ran on slices, which this test's device plugin model (whole GPUs per nvidia.com/gpu) does not describe.
_SLICE_ONLY = re.compile(r"^nvidia\.com/gpu\.(multiprocessors|slices\..*|engines\..*)$")


def _single_strategy(spec: Mapping[str, Any]) -> bool:
    ns = spec.get("nodeSelector") or {}
    return ns.get("nvidia.com/mig.strategy") == "single" or "-MIG-" in yaml.safe_dump(spec.get("affinity") or {}) \
        or "-MIG-" in str(ns.get("nvidia.com/gpu.product", "")) or any(_SLICE_ONLY.match(str(k)) for k in ns)


Pod = tuple[str, dict[str, Any], dict[str, Any], dict[str, dict[str, Any]]]


def case_pods(case: Path) -> list[Pod]:
    before = {_key(o): o for f in sorted(case.glob("input*")) for o in _docs(f)}
    after_objs = [o for f in sorted((case / "expected").iterdir()) if f.is_file() for o in _docs(f)]
    after = {_key(o): o for o in after_objs}
    templates = {_key(o)[2]: o for o in after_objs if o.get("kind") == "ResourceClaimTemplate"}
    skipped = _skipped_workloads(case)
    pods: list[Pod] = []
    for key, obj in before.items():
        if key not in after or _ref(key) in skipped or key[0] == "ResourceClaimTemplate":
            continue
        for path, spec in _pod_specs(obj):
            if not any(counts(c) for _, c in _containers(spec)) or _single_strategy(spec):
                continue
            try:
                migrated = _at(after[key], path)
            except (KeyError, IndexError, TypeError):
                continue
            if any(counts(c) for _, c in _containers(migrated)):
                continue  # left as it was: nothing to compare
            new = [rc for rc in migrated.get("resourceClaims") or []
                   if isinstance(rc, dict) and rc.get("resourceClaimTemplateName") in templates
                   and rc not in (spec.get("resourceClaims") or [])]
            if not new:
                continue
            pods.append((f"{'/'.join(key)}@{'.'.join(map(str, path))}", spec, migrated,
                         {rc["name"]: templates[rc["resourceClaimTemplateName"]] for rc in new}))
    return pods


def check_pod(before: Mapping[str, Any], after: Mapping[str, Any], claims: Mapping[str, Mapping[str, Any]]) -> None:
    requests: dict[tuple[str, str], tuple[str, int]] = {}
    for claim, rct in claims.items():
        for req in rct["spec"]["spec"]["devices"]["requests"]:
            requests[(claim, req["name"])] = _request_resource(req)
    resources = {r for _, c in _containers(before) for r in counts(c)} | {r for r, _ in requests.values()}
    for resource in sorted(resources):
        held = sum(n for r, n in requests.values() if r == resource)
        assert held == effective_demand(before, resource), (
            f"{resource}: the claim holds {held}, the device plugin gave the pod {effective_demand(before, resource)}"
        )
    for (_, c_before), (_, c_after) in zip(_containers(before), _containers(after), strict=True):
        refs = (c_after.get("resources") or {}).get("claims") or []
        visible: dict[str, int] = {}
        for ref in refs:
            if ref.get("name") not in claims:
                continue
            if ref.get("request") is None:  # the whole claim
                for (claim, _), (r, n) in requests.items():
                    if claim == ref["name"]:
                        visible[r] = visible.get(r, 0) + n
                continue
            r, n = requests[(ref["name"], ref["request"])]
            visible[r] = visible.get(r, 0) + n
        for r, n in counts(c_before).items():
            assert visible.get(r, 0) >= n, f"container {c_before.get('name')!r} sees {visible.get(r, 0)} {r}, asked {n}"


CASES = sorted(p for p in GOLDEN.iterdir() if p.is_dir() and (p / "expected").is_dir() and case_pods(p))


def test_cases_are_discovered() -> None:
    names = {c.name for c in CASES}
    assert {"init-gt-app", "init-sidecar-order", "init-several", "init-mig", "sidecar", "multi-container"} <= names


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_pod_demand_is_kept(case: Path) -> None:
    for pod_id, before, after, claims in case_pods(case):
        try:
            check_pod(before, after, claims)
        except AssertionError as exc:
            raise AssertionError(f"{pod_id}: {exc}") from None


def test_check_detects_the_old_init_translation() -> None:
    """The check can fail: the old translation (the init container on its own full-size request) holds more."""
    pod_id, before, after, claims = case_pods(GOLDEN / "init-gt-app")[0]
    tampered = yaml.safe_load(yaml.safe_dump(dict(claims)))
    for rct in tampered.values():
        for req in rct["spec"]["spec"]["devices"]["requests"]:
            if req["name"] == "convert":
                req["exactly"]["count"] = 3
    with pytest.raises(AssertionError, match="holds 5"):
        check_pod(before, after, tampered)
    short = yaml.safe_load(yaml.safe_dump(dict(after)))
    short["initContainers"][0]["resources"]["claims"] = short["initContainers"][0]["resources"]["claims"][:1]
    with pytest.raises(AssertionError, match="sees 2"):
        check_pod(before, short, claims)
