"""GPU node selection → device selection: GFD/cloud labels in nodeSelector and node affinity become CEL
selectors on the claim's requests (and `firstAvailable` for preferences); the node side keeps what still
describes the node. The translation itself is `dra_migrate.lower.selection`; this pass applies it to the pod."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from dra_migrate.ir import ContainerRole, DocPath, PodTemplate
from dra_migrate.lower.backends import DeviceChoice, Request
from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.pass_spec import Pass
from dra_migrate.lower.passes._sharing_common import EXCLUSIVE, SHARING_ANNOTATION, annotation
from dra_migrate.lower.selection import SelectionInput, translate_selection
from dra_migrate.lower.selection.translate import AFFINITY, NODE_SELECTOR
from dra_migrate.plan import DeleteItem, DeleteKey, Op, ReplaceValue
from dra_migrate.ruleset.features import Target

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
GPU_CLASS = "gpu.nvidia.com"


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    if tl.skip:
        return
    _check_implied_sharing(tl, ctx)
    if not tl.requests:
        return
    pt = tl.template
    node_affinity = (pt.affinity or {}).get("nodeAffinity") if isinstance(pt.affinity, dict) else None
    node_affinity = node_affinity if isinstance(node_affinity, dict) else {}
    required = node_affinity.get(REQUIRED, {})
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    preferred = node_affinity.get(PREFERRED)
    if not pt.node_selector and not terms and not preferred:
        return

    # a request that is already a firstAvailable list (MIG single strategy: a full GPU or a slice) cannot also
    # carry preferences: those stay on the node affinity as written
    premade = any(r.alternatives for r in tl.requests)
    allow_alternatives = first_available_allowed(ctx) and not premade
    classes = sorted({c.device_class for r in tl.requests for c in _choices(r)}, key=lambda c: c != GPU_CLASS)
    results = {}
    for device_class in classes:
        inp = SelectionInput(
            dict(pt.node_selector),
            terms if isinstance(terms, list) else None,
            preferred if isinstance(preferred, list) and allow_alternatives else None,
            device_class,
        )
        results[device_class] = translate_selection(inp, move_cloud_labels=ctx.options.move_cloud_labels)
    for req in tl.requests:
        _apply(req, results)
    primary = results[classes[0]]
    original_terms = terms if isinstance(terms, list) else None
    moved_node_side = primary.node_selector != dict(pt.node_selector) or primary.required_terms != original_terms
    spread = _honoring_spread(pt) if moved_node_side else []
    differs = any(
        r.node_selector != primary.node_selector or r.required_terms != primary.required_terms
        for r in results.values()
    )
    node_side = primary
    if spread or differs:
        # selection in both places: the claim selects the GPUs, and the node selection stays as written
        node_side = dataclasses.replace(primary, node_selector=dict(pt.node_selector), required_terms=original_terms)
    lines = {NODE_SELECTOR: pt.node_selector_line, AFFINITY: pt.affinity_line}
    either = premade and any(c.device_class != GPU_CLASS for r in tl.requests for c in _choices(r))
    for (code, message), origin in zip(primary.diagnostics, primary.origins, strict=True):
        if code == "DRA301" and (spread or differs):
            continue
        if code == "DRA308" and either:
            continue  # a MIG product value for the full-GPU subrequest: the request's MIG subrequest serves it
        tl.diag(code, message, lines.get(origin) or pt.line)
    if spread:
        kept = _moved_texts(pt.node_selector, original_terms, primary)
        tl.diag(
            "DRA316",
            f"{', '.join(kept)} expressed in the claim and kept on the node selection as well: "
            f"{'; '.join(spread)} {'counts' if len(spread) == 1 else 'count'} only the nodes that match the pod's "
            "node selection; with the labels moved every GPU-less node would count too (as a spread domain "
            "holding 0 pods, or in its domain's count)",
            pt.topology_spread_line or pt.line,
        )
    elif differs:
        tl.decisions.append("GPU labels kept on the node selection too: the device classes of the requests "
                            "translate them differently")
    # explain output: every label decision (the detail names the label), then what each request selects
    both = " Also kept on the node selection (" + ("topology spread" if spread else "device classes differ") + ")."
    tl.decisions.extend(
        f"{d.action}: {d.detail}" + (both if d.action == "moved" and (spread or differs) else "")
        for d in primary.decisions
    )
    for req in tl.requests:
        if req.choice is not None and not req.alternatives:
            tl.decisions.extend(f"request {req.name} selector: {e}" for e in req.choice.selectors)
        for name, alt in req.alternatives:
            tl.decisions.extend(f"request {req.name}/{name} selector: {e}" for e in alt.selectors)
            if not alt.selectors:
                tl.decisions.append(f"request {req.name}/{name}: any device of the class")
    if isinstance(preferred, list) and preferred and not first_available_allowed(ctx):
        target = ctx.options.target_version
        tl.diag("DRA311", f"preferred node affinity on GPU labels is kept: target {target} has no "
                "firstAvailable (DRAPrioritizedList) enabled", pt.affinity_line or pt.line)
    kept_preferred = preferred if allow_alternatives else None
    tl.ops.extend(_node_side_ops(tl, node_side, node_affinity, terms, kept_preferred))


def _choices(req: Request) -> list[DeviceChoice]:
    return [c for _, c in req.alternatives] if req.alternatives else ([req.choice] if req.choice else [])


def _honoring_spread(pt: PodTemplate) -> list[str]:
    """The topology spread constraints whose domains come from the pod's node selection (nodeAffinityPolicy
    Honor, the default): they count only nodes matching its nodeSelector and required node affinity."""
    out: list[str] = []
    for i, c in enumerate(pt.topology_spread):
        policy = c.get("nodeAffinityPolicy")
        if policy not in (None, "Honor"):
            continue  # Ignore: every node counts already, whatever the node selection says
        how = "nodeAffinityPolicy Honor" + ("" if policy else " (the default)")
        out.append(f"topologySpreadConstraints[{i}] (topologyKey {c.get('topologyKey')}, "
                   f"{c.get('whenUnsatisfiable', 'DoNotSchedule')}, {how})")
    return out


def _moved_texts(node_selector: dict[str, str], terms: list[Any] | None, result: Any) -> list[str]:
    """The nodeSelector entries and required match expressions the translation would have removed."""
    out = [f"{k}={v}" for k, v in node_selector.items() if k not in result.node_selector]
    kept = [e for t in result.required_terms or [] if isinstance(t, dict) for e in t.get("matchExpressions") or []]
    for t in terms or []:
        for e in (t.get("matchExpressions") or []) if isinstance(t, dict) else []:
            if e not in kept and isinstance(e, dict):
                values = f" [{', '.join(str(v) for v in e.get('values') or [])}]" if e.get("values") else ""
                out.append(f"{e.get('key')} {e.get('operator')}{values}")
    return list(dict.fromkeys(out))


# Diagnostics by which the sharing pass says it decided how this template shares (a shared claim, whole devices
# with the numbers, an unknown or ambiguous config, a refusal): then the node labels' sharing is its business.
SHARING_DECISIONS = frozenset({"DRA502", "DRA504", "DRA505", "DRA506", "DRA509", "DRA514", "DRA517", "DRA521",
                               "DRA522", "DRA524", "DRA525", "DRA526"})


def _check_implied_sharing(tl: TemplateLowering, ctx: RunContext) -> None:
    """The node labels say the pod got a shared replica there, and no sharing config covered it (DRA520)."""
    implied = tl.template.implied
    if not implied.sharing or tl.shared_claim is not None or tl.sharing is not None:  # the sharing pass decided
        return
    if any(d.code in SHARING_DECISIONS for d in tl.diagnostics):
        return
    if annotation(tl, SHARING_ANNOTATION) == EXCLUSIVE:
        tl.decisions.append(f"shared nodes selected, whole devices by annotation {SHARING_ANNOTATION}: {EXCLUSIVE}")
        return
    for s in implied.sharing:
        per_pod, biggest = _demand(tl, s.resource)
        if not per_pod:
            continue
        how = {"time-slicing": "time-sliced", "mps": "MPS-shared"}.get(s.strategy, "time-sliced or MPS-shared")
        pods = tl.workload.replicas
        if pods and s.replicas:
            numbers = (f"{pods} pod(s) × {per_pod} now need {pods * per_pod} device(s) where replicas="
                       f"{s.replicas} needed {math.ceil(pods * per_pod / s.replicas)}")
        elif s.replicas:
            numbers = f"{per_pod} whole device(s) per pod where up to {s.replicas} containers shared one"
        else:
            numbers = f"{per_pod} whole device(s) per pod where several containers shared one (replicas unknown)"
        refused = ""
        if s.strategy == "mps" and biggest > 1:
            refused = ("; MPS refuses more than one replica per container by default "
                       "(failRequestsGreaterThanOne), so this pod may never have started there")
        tl.diag(
            "DRA520",
            f"{', '.join(s.evidence)}: the device plugin {how} {s.resource} on these nodes, but no device plugin "
            f"config of the repository covers this workload; translated as whole devices: {numbers}{refused} "
            "(pass the config with --sharing-config FILE, or annotate dra-migrate.io/sharing: exclusive)",
            tl.template.selection_line,
        )


def _demand(tl: TemplateLowering, resource: str) -> tuple[int, int]:
    """(devices of `resource` one pod holds at most, largest per-container count)."""
    per_container = [
        (c.role, sum(d.count for d in c.demands if d.resource == resource)) for c in tl.template.containers
    ]
    running = sum(n for role, n in per_container if role is not ContainerRole.INIT)
    init = [n for role, n in per_container if role is ContainerRole.INIT]
    return max([running, *init]), max((n for _, n in per_container), default=0)


def _apply(req: Request, results: dict[str, Any]) -> None:
    if req.alternatives:
        # subrequests made by an earlier pass (a full GPU or a MIG slice): each gets its own class's selection
        req.alternatives = [
            (name, _selected(alt, results[alt.device_class].selectors)) for name, alt in req.alternatives
        ]
        req.choice = req.alternatives[0][1]
        return
    assert req.choice is not None
    result = results[req.choice.device_class]
    base = req.choice
    req.choice = _selected(base, result.selectors)
    own = req.choice.selectors[: len(req.choice.selectors) - len(result.selectors)]
    if result.alternatives:
        names = _subrequest_names(len(result.alternatives))
        req.alternatives = [
            (name, DeviceChoice(base.device_class, base.count, [*own, *alt]))
            for name, alt in zip(names, result.alternatives, strict=True)
        ]


def _selected(choice: DeviceChoice, selectors: list[str]) -> DeviceChoice:
    """`choice` with the translated selectors, less its own selectors that the translation repeats as a conjunct
    (the MIG pass's profile test when the product label named the same slice)."""
    own = [e for e in choice.selectors if not any(_is_conjunct(e, new) for new in selectors)]
    return DeviceChoice(choice.device_class, choice.count, [*own, *selectors])


def _is_conjunct(expr: str, of: str) -> bool:
    return expr == of or of.startswith(expr + " && ") or of.endswith(" && " + expr) or f" && {expr} && " in of


def _subrequest_names(n: int) -> list[str]:
    return [f"preferred-{i + 1}" for i in range(n - 1)] + ["fallback"]


def first_available_allowed(ctx: RunContext) -> bool:
    try:

        return Target(ctx.options.target_version).feature_usable("firstAvailable", ctx.options.feature_gates)
    except (ImportError, ValueError, KeyError):
        return int(ctx.options.target_version.split(".")[1]) >= 34


def _node_side_ops(
    tl: TemplateLowering, result: Any, node_affinity: dict[str, Any], terms: Any, preferred: Any
) -> list[Op]:
    pt = tl.template
    base: DocPath = pt.path
    ops: list[Op] = []
    # nodeSelector: delete the keys that moved, or the whole map when it empties
    removed = [k for k in pt.node_selector if k not in result.node_selector]
    if removed:
        if not result.node_selector:
            ops.append(DeleteKey((*base, "nodeSelector")))
        else:
            ops.extend(DeleteKey((*base, "nodeSelector", k)) for k in removed)
    na_path: DocPath = (*base, "affinity", "nodeAffinity")
    drop_required = isinstance(terms, list) and result.required_terms is None
    drop_preferred = isinstance(preferred, list) and result.preferred is None
    dropped = {REQUIRED} if drop_required else set()
    dropped |= {PREFERRED} if drop_preferred else set()
    kept_blocks = [k for k in node_affinity if k not in dropped]
    if (drop_required or drop_preferred) and not kept_blocks:
        affinity = pt.affinity or {}
        if len(affinity) == 1:
            ops.append(DeleteKey((*base, "affinity")))
        else:
            ops.append(DeleteKey(na_path))
        return ops
    if drop_required:
        ops.append(DeleteKey((*na_path, REQUIRED)))
    elif isinstance(terms, list) and result.required_terms != terms:
        terms_path: DocPath = (*na_path, REQUIRED, "nodeSelectorTerms")
        ops.extend(_list_edit(terms_path, terms, result.required_terms, "matchExpressions"))
    if drop_preferred:
        ops.append(DeleteKey((*na_path, PREFERRED)))
    elif isinstance(preferred, list) and result.preferred is not None and result.preferred != preferred:
        ops.extend(_preferred_edit((*na_path, PREFERRED), preferred, result.preferred))
    return ops


def _list_edit(path: DocPath, before: list[Any], after: list[Any], inner: str) -> list[Op]:
    """Smallest edit from `before` to `after` terms. Each kept term must be a before-term with some `inner`
    expressions deleted (same other keys), in order; terms with no counterpart are deleted whole. Anything
    else replaces the list."""
    ops: list[Op] = []
    j = 0
    for i, b in enumerate(before):
        a = after[j] if j < len(after) else None
        edit = _term_edit((*path, i), b, a, inner) if isinstance(a, dict) and isinstance(b, dict) else None
        if edit is not None:
            ops.extend(edit)
            j += 1
        else:
            ops.append(DeleteItem((*path, i)))
    if j != len(after) or not after:
        return [ReplaceValue(path, after)]
    return ops


def _term_edit(path: DocPath, before: dict[str, Any], after: dict[str, Any], inner: str) -> list[Op] | None:
    """Deletions turning term `before` into `after`, or None when `after` is not derived from it."""
    if before == after:
        return []
    if {k: v for k, v in before.items() if k != inner} != {k: v for k, v in after.items() if k != inner}:
        return None
    sub = _subsequence_deletions(before.get(inner) or [], after.get(inner) or [])
    if sub is None:
        return None
    if not after.get(inner):
        # the term keeps other keys (matchFields); an empty term would match nothing
        return [DeleteKey((*path, inner))] if len(before) > 1 else None
    return [DeleteItem((*path, inner, j)) for j in sub]


def _preferred_edit(path: DocPath, before: list[Any], after: list[Any]) -> list[Op]:
    sub = _subsequence_deletions(before, after)
    if sub is not None and len(after) > 0:
        return [DeleteItem((*path, j)) for j in sub]
    return [ReplaceValue(path, after)]


def _subsequence_deletions(before: list[Any], after: list[Any]) -> list[int] | None:
    """Indexes to delete from `before` to get `after`, if `after` is a subsequence of it."""
    out: list[int] = []
    j = 0
    for i, item in enumerate(before):
        if j < len(after) and after[j] == item:
            j += 1
        else:
            out.append(i)
    return out if j == len(after) else None


PASS = Pass(
    name="selection", run=run, after=("init-containers",),  # every request exists: the selection goes on each
    codes=("DRA301", "DRA302", "DRA303", "DRA304", "DRA305", "DRA306", "DRA307", "DRA308", "DRA309", "DRA310",
           "DRA311", "DRA314", "DRA316", "DRA520"),
)
