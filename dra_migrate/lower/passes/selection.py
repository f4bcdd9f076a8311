"""GPU node selection → device selection: GFD/cloud labels in nodeSelector and node affinity become CEL
selectors on the claim's requests (and `firstAvailable` for preferences); the node side keeps what still
describes the node. The translation itself is `dra_migrate.selection`; this pass applies it to the pod."""

from __future__ import annotations

from typing import Any

from dra_migrate.ir import DocPath
from dra_migrate.lower.backends import DeviceChoice, Request
from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.plan import DeleteItem, DeleteKey, Op, ReplaceValue
from dra_migrate.selection.translate import AFFINITY, NODE_SELECTOR

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
GPU_CLASS = "gpu.nvidia.com"


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    if tl.skip or not tl.requests:
        return
    pt = tl.template
    node_affinity = (pt.affinity or {}).get("nodeAffinity") if isinstance(pt.affinity, dict) else None
    node_affinity = node_affinity if isinstance(node_affinity, dict) else {}
    required = node_affinity.get(REQUIRED, {})
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    preferred = node_affinity.get(PREFERRED)
    if not pt.node_selector and not terms and not preferred:
        return
    from dra_migrate.selection import SelectionInput, translate_selection

    allow_alternatives = _first_available_allowed(ctx)
    classes = sorted({r.choice.device_class for r in tl.requests if r.choice}, key=lambda c: c != GPU_CLASS)
    primary = None
    for device_class in classes:
        inp = SelectionInput(
            dict(pt.node_selector),
            terms if isinstance(terms, list) else None,
            preferred if isinstance(preferred, list) and allow_alternatives else None,
            device_class,
        )
        result = translate_selection(inp, move_cloud_labels=ctx.options.move_cloud_labels)
        if primary is None:
            primary = result
        for req in tl.requests:
            if req.choice is not None and req.choice.device_class == device_class:
                _apply(req, result.selectors, result.alternatives)
    assert primary is not None
    lines = {NODE_SELECTOR: pt.node_selector_line, AFFINITY: pt.affinity_line}
    for (code, message), origin in zip(primary.diagnostics, primary.origins, strict=True):
        tl.diag(code, message, lines.get(origin) or pt.line)
    # explain output: every label decision (the detail names the label), then what each request selects
    tl.decisions.extend(f"{d.action}: {d.detail}" for d in primary.decisions)
    for req in tl.requests:
        if req.choice is not None and not req.alternatives:
            tl.decisions.extend(f"request {req.name} selector: {e}" for e in req.choice.selectors)
        for name, alt in req.alternatives:
            tl.decisions.extend(f"request {req.name}/{name} selector: {e}" for e in alt.selectors)
            if not alt.selectors:
                tl.decisions.append(f"request {req.name}/{name}: any device of the class")
    if isinstance(preferred, list) and preferred and not allow_alternatives:
        target = ctx.options.target_version
        tl.diag("DRA311", f"preferred node affinity on GPU labels is kept: target {target} has no "
                "firstAvailable (DRAPrioritizedList) enabled", pt.affinity_line or pt.line)
    kept_preferred = preferred if allow_alternatives else None
    tl.ops.extend(_node_side_ops(tl, primary, node_affinity, terms, kept_preferred))


def _apply(req: Request, selectors: list[str], alternatives: list[list[str]] | None) -> None:
    assert req.choice is not None
    own = list(req.choice.selectors)  # selectors earlier passes put on the request
    req.choice.selectors = [*own, *selectors]
    if alternatives:
        base = req.choice
        names = _subrequest_names(len(alternatives))
        req.alternatives = [
            (name, DeviceChoice(base.device_class, base.count, [*own, *alt]))
            for name, alt in zip(names, alternatives, strict=True)
        ]


def _subrequest_names(n: int) -> list[str]:
    return [f"preferred-{i + 1}" for i in range(n - 1)] + ["fallback"]


def _first_available_allowed(ctx: RunContext) -> bool:
    try:
        from dra_migrate.features import Target

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
