"""GPU node selection (nodeSelector + node affinity) → DRA device selection.

Pure: plain data in, plain data out. Kubernetes semantics kept exactly: nodeSelector entries are ANDed with
the required affinity; required nodeSelectorTerms are ORed; the matchExpressions of one term are ANDed. A GPU
requirement leaves the node side only when its device predicate selects the same GPUs and the remaining node
constraint is unchanged.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.lower.selection.transforms import (
    TRUE,
    Context,
    MigMismatch,
    Pred,
    Untranslatable,
    VersionReq,
    all_of,
    any_of,
    requirement_pred,
    version_pred,
)
from dra_migrate.ruleset.labels import LabelRule, LabelRules, load_label_rules

MAX_SUBREQUESTS = 8  # firstAvailable limit (dra-api.md §2.2)
NODE_SELECTOR = "nodeSelector"
AFFINITY = "affinity"
VERSION_TRANSFORMS = ("version-part", "version-full")


@dataclass
class SelectionInput:
    node_selector: dict[str, str]
    required_terms: list[dict[str, Any]] | None = None  # nodeAffinity.required…nodeSelectorTerms
    preferred: list[dict[str, Any]] | None = None  # nodeAffinity.preferred… entries {weight, preference}
    device_class: str = "gpu.nvidia.com"


@dataclass
class Decision:
    label: str
    action: str  # moved | kept | dropped | untranslatable
    detail: str


@dataclass
class SelectionResult:
    selectors: list[str]  # CEL expressions, ANDed, one DeviceSelector each, for the main request
    # firstAvailable subrequests, best first; each list is complete (it repeats `selectors`) and the last
    # one is `selectors` itself, the fallback that keeps the pod schedulable as a preference would.
    # None: no preference on GPU labels.
    alternatives: list[list[str]] | None
    node_selector: dict[str, str]
    required_terms: list[dict[str, Any]] | None  # None: remove the required block
    preferred: list[dict[str, Any]] | None  # None: remove the preferred block
    decisions: list[Decision] = field(default_factory=list)
    diagnostics: list[tuple[str, str]] = field(default_factory=list)
    # per diagnostic: NODE_SELECTOR or AFFINITY, the part of the pod spec it is about (for file:line)
    origins: list[str] = field(default_factory=list)
    changed: bool = False


@dataclass
class _Req:
    key: str
    op: str
    values: list[str]
    where: str  # human location: "nodeSelector", "required term 2", "preferred term 1"

    def text(self) -> str:
        if self.where == "nodeSelector":
            return f"{self.key}={self.values[0]}"
        vals = f" [{', '.join(self.values)}]" if self.values else ""
        return f"{self.key} {self.op}{vals}"


@dataclass
class _Record:
    req: _Req
    action: str
    detail: str
    code: str = ""


@dataclass
class _Conj:
    """Outcome of one ANDed group of requirements."""

    preds: list[Pred] = field(default_factory=list)
    removed: set[int] = field(default_factory=set)  # indexes of requirements that leave the node side
    records: list[_Record] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)

    @property
    def pred(self) -> Pred:
        return all_of(self.preds)

    @property
    def touches_gpu(self) -> bool:
        return bool(self.removed)


class _Translator:
    def __init__(self, rules: LabelRules, device_class: str, move_cloud_labels: bool) -> None:
        self.rules = rules
        self.device_class = device_class
        self.move_cloud = move_cloud_labels

    def conj(self, reqs: list[_Req]) -> _Conj:
        out = _Conj()
        todo: list[tuple[int, _Req, LabelRule]] = []
        for i, r in enumerate(reqs):
            rule = self.rules.lookup(r.key)
            if rule is None:
                continue
            where = f" ({r.where})"
            if rule.kind == "node":
                out.records.append(_Record(r, "kept", f"{r.text()}{where} stays on the node: {rule.why}"))
            elif rule.kind == "drop":
                # Kept on the node: removing it would widen the set of nodes the pod may land on, and whether
                # the label outlives the device plugin depends on the cluster. The warning says it can go.
                out.records.append(_Record(
                    r, "kept", f"{r.text()}{where} kept on the node selector: {rule.why} Remove it once the "
                    "device plugin no longer runs on these nodes.", "DRA304"))
            elif rule.policy == "keep" and not self.move_cloud:
                out.records.append(_Record(
                    r, "kept",
                    f"{r.text()}{where} stays on the node: {rule.why} It still holds on DRA nodes; "
                    "--move-cloud-labels would express it in the claim instead.",
                    "DRA309",
                ))
            else:
                todo.append((i, r, rule))

        ctx = Context(self.device_class, self.rules.tables)
        versions: dict[str, list[tuple[int, _Req, LabelRule]]] = {}
        for i, r, rule in todo:
            if rule.transform in VERSION_TRANSFORMS:
                versions.setdefault(rule.name, []).append((i, r, rule))
                continue
            self._one(
                out, [(i, r, rule)], rule, lambda r=r, rule=rule: requirement_pred(rule, r.op, r.values, ctx)
            )
        for name, group in versions.items():
            vreqs: list[VersionReq] = [(rule, r.op, r.values) for _, r, rule in group]
            self._one(out, group, group[0][2], lambda n=name, v=vreqs: version_pred(n, v, ctx))
        out.notes = list(dict.fromkeys(ctx.notes))
        return out

    def _one(self, out: _Conj, group: list[tuple[int, _Req, LabelRule]], rule: LabelRule, build: Any) -> None:
        try:
            pred: Pred = build()
        except Untranslatable as e:
            code = "DRA308" if isinstance(e, MigMismatch) else "DRA303"
            for _, r, _rule in group:
                out.records.append(_Record(
                    r, "untranslatable", f"{r.text()} ({r.where}) stays on the node: {e}.", code))
            return
        marker = _node_marker(group)
        if marker and any(r.op in NEGATIVE_OPS for _, r, _rule in group):
            # Excluding the marked nodes is not excluding their devices: the same devices sit unmarked on other
            # nodes, which the pod could use before. Only the node side can say it.
            for _, r, _rule in group:
                out.records.append(_Record(r, "kept", f"{r.text()} ({r.where}) stays on the node: it excludes "
                                           f"{marker}, whose devices DRA publishes like any other"))
            return
        if not pred.is_true:
            out.preds.append(pred)
        for i, r, _rule in group:
            what = (f"as `{pred.render()}`" if not pred.is_true
                    else "with no selector: every device of the claim satisfies it")
            if marker:
                # The label marks how the device plugin set the node up (every GPU split into one MIG layout
                # under the single strategy, or time-sliced); DRA publishes the same devices on nodes set up
                # otherwise, so moving it would widen where the pod runs.
                detail = (f"{r.text()} ({r.where}) expressed in the claim {what} and kept on the node, which "
                          f"keeps the pod on {marker}")
                out.records.append(_Record(r, "kept", detail))
                continue
            out.removed.add(i)
            detail = f"{r.text()} ({r.where}) moved into the claim {what}. {_rule.why}"
            out.records.append(_Record(r, "moved", detail))


NEGATIVE_OPS = ("NotIn", "DoesNotExist")


def _node_marker(group: list[tuple[int, _Req, LabelRule]]) -> str:
    """What the label says about the node's device plugin setup that no device attribute says ("" if nothing):
    a -MIG- product or a label only single-strategy MIG nodes carry, a -SHARED product."""
    values = [str(v) for _, r, _rule in group for v in r.values]
    rule = group[0][2]
    if rule.transform == "product" and any(v.endswith("-SHARED") for v in values):
        return "the nodes whose GPUs the device plugin time-sliced or MPS-shared (the -SHARED product)"
    if rule.transform == "product" and any("-MIG-" in v for v in values):
        return "nodes laid out for the MIG single strategy"
    if rule.mig_only:
        return "nodes laid out for the MIG single strategy (only their slices carry this label)"
    return ""


def _origin(rec: _Record) -> str:
    return NODE_SELECTOR if rec.req.where == "nodeSelector" else AFFINITY


def _expr_req(expr: dict[str, Any], where: str) -> _Req:
    values = expr.get("values") or []
    return _Req(str(expr.get("key", "")), str(expr.get("operator", "")), [str(v) for v in values], where)


def _canon(exprs: list[dict[str, Any]], fields: list[dict[str, Any]]) -> str:
    def norm(e: dict[str, Any]) -> str:
        d = dict(e)
        if isinstance(d.get("values"), list):
            d["values"] = sorted(str(v) for v in d["values"])
        return json.dumps(d, sort_keys=True, default=str)

    return json.dumps([sorted(norm(e) for e in exprs), sorted(norm(f) for f in fields)])


def _rest_term(term: dict[str, Any], exprs: list[dict[str, Any]]) -> dict[str, Any]:
    out = {k: copy.deepcopy(v) for k, v in term.items() if k not in ("matchExpressions",)}
    if exprs:
        out = {"matchExpressions": copy.deepcopy(exprs), **out}
    return out


def _is_empty_term(term: dict[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def translate_selection(
    inp: SelectionInput, *, move_cloud_labels: bool = False, rules: LabelRules | None = None
) -> SelectionResult:
    rules = rules or load_label_rules()
    tr = _Translator(rules, inp.device_class, move_cloud_labels)
    records: list[_Record] = []
    diags: list[tuple[str, str]] = []  # all about node affinity
    notes: list[tuple[str, str]] = []
    selectors: list[str] = []

    # nodeSelector: one conjunction.
    ns_items = list(inp.node_selector.items())
    ns_reqs = [_Req(k, "In", [str(v)], "nodeSelector") for k, v in ns_items]
    ns = tr.conj(ns_reqs)
    records += ns.records
    ns_notes = list(ns.notes)
    selectors += [p.render() for p in ns.preds]
    node_selector = {k: v for i, (k, v) in enumerate(ns_items) if i not in ns.removed}

    required, req_sel = _required(tr, inp.required_terms, records, diags, notes)
    selectors += req_sel
    preferred, alt_candidates = _preferred(tr, inp.preferred, records, diags, notes)

    selectors = list(dict.fromkeys(selectors))
    alternatives: list[list[str]] | None = None
    if alt_candidates:
        alternatives = []
        for alt in alt_candidates:
            full = list(dict.fromkeys([*selectors, *alt]))
            if full not in alternatives and full != selectors:
                alternatives.append(full)
        if len(alternatives) + 1 > MAX_SUBREQUESTS:
            diags.append(("DRA310", f"{len(alternatives)} GPU preferences; only the "
                          f"{MAX_SUBREQUESTS - 1} with the highest weight are kept as firstAvailable "
                          "subrequests."))
            alternatives = alternatives[: MAX_SUBREQUESTS - 1]
        alternatives.append(list(selectors))
        diags.append(("DRA305", f"Preferred GPU labels became {len(alternatives)} firstAvailable subrequests "
                      "(highest weight first, any GPU last)."))

    # (code, message, origin): origin says which part of the pod spec a diagnostic is about
    tagged = [(c, m, AFFINITY) for c, m in diags]
    for rec in records:
        if rec.code:
            tagged.append((rec.code, rec.detail, _origin(rec)))
    tagged += [(c, m, NODE_SELECTOR) for c, m in ns_notes] + [(c, m, AFFINITY) for c, m in notes]
    moved = [rec for rec in records if rec.action == "moved"]
    if moved:
        texts = dict.fromkeys(r.req.text() for r in moved)  # ORed terms may repeat one requirement
        origin = NODE_SELECTOR if any(_origin(r) == NODE_SELECTOR for r in moved) else AFFINITY
        tagged.insert(0, ("DRA301", "Moved into the claim: " + ", ".join(texts) + ".", origin))
    tagged = list(dict.fromkeys(tagged))

    changed = (
        bool(selectors) or alternatives is not None or node_selector != dict(inp.node_selector)
        or required != inp.required_terms or preferred != inp.preferred
    )
    return SelectionResult(
        selectors=selectors,
        alternatives=alternatives,
        node_selector=node_selector,
        required_terms=required,
        preferred=preferred,
        decisions=[Decision(r.req.key, r.action, r.detail) for r in records],
        diagnostics=[(c, m) for c, m, _o in tagged],
        origins=[o for _c, _m, o in tagged],
        changed=changed,
    )


def _required(
    tr: _Translator, terms: list[dict[str, Any]] | None, records: list[_Record],
    diags: list[tuple[str, str]], notes: list[tuple[str, str]],
) -> tuple[list[dict[str, Any]] | None, list[str]]:
    if terms is None:
        return None, []
    original = copy.deepcopy(terms)
    if not terms or any(_is_empty_term(t) for t in terms):
        # An empty term matches no node; leave such affinity exactly as written.
        return original, []
    many = len(terms) > 1
    parts: list[tuple[_Conj, list[dict[str, Any]], list[dict[str, Any]]]] = []  # (conj, rest, gpu exprs)
    for n, term in enumerate(terms, 1):
        exprs = list(term.get("matchExpressions") or [])
        conj = tr.conj([_expr_req(e, f"required term {n}" if many else "required affinity") for e in exprs])
        rest = [e for i, e in enumerate(exprs) if i not in conj.removed]
        gpu = [e for i, e in enumerate(exprs) if i in conj.removed]
        parts.append((conj, rest, gpu))
    for conj, _, _ in parts:
        notes += conj.notes
    if not any(c.touches_gpu for c, _, _ in parts):
        for c, _, _ in parts:
            records += c.records
        return original, []

    fields = [list(t.get("matchFields") or []) for t in terms]
    rests = [_canon(rest, f) for (_, rest, _), f in zip(parts, fields, strict=True)]
    gpus = [_canon(gpu, []) for _, _, gpu in parts]
    new_terms = [_rest_term(t, rest) for t, (_, rest, _) in zip(terms, parts, strict=True)]
    for c, _, _ in parts:
        records += c.records
    if not many:
        conj = parts[0][0]
        return (None if _is_empty_term(new_terms[0]) else new_terms), [p.render() for p in conj.preds]
    if len(set(rests)) == 1:
        # (R ∧ G1) ∨ (R ∧ G2) = R ∧ (G1 ∨ G2): the node part stays once, the GPU parts become one OR.
        gpu_pred = any_of([c.pred for c, _, _ in parts])
        remaining = None if _is_empty_term(new_terms[0]) else [new_terms[0]]
        return remaining, ([] if gpu_pred.is_true else [gpu_pred.render()])
    if len(set(gpus)) == 1:
        # (R1 ∧ G) ∨ (R2 ∧ G) = G ∧ (R1 ∨ R2).
        remaining = None if any(_is_empty_term(t) for t in new_terms) else new_terms
        pred = parts[0][0].pred
        return remaining, ([] if pred.is_true else [pred.render()])
    for c, _, _ in parts:
        for rec in c.records:
            if rec.action in ("moved", "dropped"):
                rec.action, rec.code = "untranslatable", ""
                rec.detail = (f"{rec.req.text()} ({rec.req.where}) stays on the node: the ORed terms pair it "
                              "with node labels.")
    diags.append(("DRA302", "The required nodeSelectorTerms pair different GPU labels with different node "
                  "labels; the node affinity is left unchanged and the claim does not constrain the GPU."))
    return original, []


def _preferred(
    tr: _Translator, entries: list[dict[str, Any]] | None, records: list[_Record],
    diags: list[tuple[str, str]], notes: list[tuple[str, str]],
) -> tuple[list[dict[str, Any]] | None, list[list[str]]]:
    if entries is None:
        return None, []
    kept: list[dict[str, Any]] = []
    candidates: list[tuple[int, int, list[str]]] = []  # (-weight, order, selectors)
    for n, entry in enumerate(entries, 1):
        term = entry.get("preference") or {}
        exprs = list(term.get("matchExpressions") or [])
        conj = tr.conj([_expr_req(e, f"preferred term {n}") for e in exprs])
        rest = [e for i, e in enumerate(exprs) if i not in conj.removed]
        if not conj.touches_gpu:
            records += conj.records
            kept.append(copy.deepcopy(entry))
            continue
        if rest or term.get("matchFields"):
            for rec in conj.records:
                if rec.action in ("moved", "dropped"):
                    rec.action, rec.code = "untranslatable", ""
                    rec.detail = (f"{rec.req.text()} ({rec.req.where}) stays on the node: the preference "
                                  "pairs it with node labels.")
            records += conj.records
            diags.append(("DRA306", f"Preferred term {n} mixes GPU and node labels; it is left unchanged."))
            kept.append(copy.deepcopy(entry))
            continue
        records += conj.records
        notes += conj.notes
        if conj.preds:
            weight = entry.get("weight", 0)
            rank = -int(weight) if isinstance(weight, int) else 0
            candidates.append((rank, n, [p.render() for p in conj.preds]))
    candidates.sort(key=lambda c: (c[0], c[1]))
    remaining = kept if kept or not entries else None
    return remaining, [c[2] for c in candidates]


__all__ = ["TRUE", "Decision", "SelectionInput", "SelectionResult", "translate_selection"]
