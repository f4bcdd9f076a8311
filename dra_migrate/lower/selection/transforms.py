"""Named transforms: one label requirement (key, operator, values) → a CEL predicate on one device.

A transform either returns a `Pred` or raises `Untranslatable` with a sentence saying why. Every value from a
manifest reaches the CEL text only through `cel_string` / `regex_escape`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.lower.selection.literals import cel_string, regex_escape
from dra_migrate.ruleset.labels import LabelRule

DRIVER = "gpu.nvidia.com"
MIG_CLASS = "mig.nvidia.com"
ATTRS = f"device.attributes[{cel_string(DRIVER)}]"
CAPS = f"device.capacity[{cel_string(DRIVER)}]"
# The NVIDIA driver publishes these on every device; any other attribute may be missing, and reading a missing
# attribute is a CEL runtime error that aborts scheduling, so those are guarded with `in`.
ALWAYS_PUBLISHED = frozenset({"productName", "type", "uuid"})
MAX_COMBINATIONS = 16

_INT = re.compile(r"^-?[0-9]+$")
_NONNEG = re.compile(r"^[0-9]+$")
_MIG_SUFFIX = re.compile(r"^(?P<parent>.+)-MIG-(?P<profile>[^-].*)$")
_PROFILE = re.compile(r"^(?P<base>(?:[0-9]+c\.)?[0-9]+g\.[0-9]+gb)(?:[.+](?P<attr>[a-z]+))?$")


class Untranslatable(Exception):
    """The requirement has no faithful device equivalent; the message says why (one sentence)."""


class MigMismatch(Untranslatable):
    """The label describes a MIG slice but the request is for full GPUs."""


@dataclass(frozen=True, slots=True)
class Pred:
    """Conjunction of `guards` (existence checks, evaluated first) and `conds`; empty = always true."""

    guards: tuple[str, ...] = ()
    conds: tuple[str, ...] = ()

    @property
    def is_true(self) -> bool:
        return not self.guards and not self.conds

    def render(self) -> str:
        parts = [*self.guards, *self.conds]
        return " && ".join(parts) if parts else "true"


TRUE = Pred()


@dataclass(slots=True)
class Context:
    device_class: str
    tables: dict[str, dict[str, Any]]
    # (code, message): approximations (DRA307) and dropped device-plugin meaning (DRA314) worth a diagnostic
    notes: list[tuple[str, str]] = field(default_factory=list)

    @property
    def mig(self) -> bool:
        return self.device_class == MIG_CLASS


def attr(name: str) -> str:
    return f"{ATTRS}.{name}"


def cap(name: str) -> str:
    return f"{CAPS}.{name}"


def attr_guard(name: str) -> tuple[str, ...]:
    return () if name in ALWAYS_PUBLISHED else (f"{cel_string(name)} in {ATTRS}",)


def cap_guard(name: str) -> tuple[str, ...]:
    return (f"{cel_string(name)} in {CAPS}",)


def any_of(preds: Sequence[Pred]) -> Pred:
    """OR of predicates, hoisting guards shared by all of them."""
    if not preds or any(p.is_true for p in preds):
        return TRUE
    if len(preds) == 1:
        return preds[0]
    common = tuple(g for g in preds[0].guards if all(g in p.guards for p in preds[1:]))
    alts = []
    for p in preds:
        rest = Pred(tuple(g for g in p.guards if g not in common), p.conds)
        alts.append(rest.render())
    flat: list[str] = []
    for a in alts:
        ops = _top_level_ops(a)
        if "||" in ops and "&&" not in ops:
            flat.extend(_split_top(a, " || "))
        elif ops == set() and a.startswith("(") and a.endswith(")") and "||" in _top_level_ops(a[1:-1]) \
                and "&&" not in _top_level_ops(a[1:-1]):
            flat.extend(_split_top(a[1:-1], " || "))  # an OR group inside an OR: no extra parentheses
        else:
            flat.append(a)
    alts = list(dict.fromkeys(flat))
    if len(alts) == 1:
        return Pred(common, (alts[0],))
    wrapped = [f"({a})" if "&&" in _top_level_ops(a) else a for a in alts]
    return Pred(common, ("(" + " || ".join(wrapped) + ")",))


def _scan(expr: str) -> list[tuple[int, int]]:
    """(index, parenthesis depth) of every character outside string literals."""
    out: list[tuple[int, int]] = []
    depth, quote, i = 0, "", 0
    while i < len(expr):
        ch = expr[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        else:
            out.append((i, depth))
        i += 1
    return out


def _top_level_ops(expr: str) -> set[str]:
    """Boolean operators of `expr` outside parentheses and string literals."""
    return {expr[i : i + 2] for i, d in _scan(expr) if d == 0 and expr[i : i + 2] in ("&&", "||")}


def _split_top(expr: str, sep: str) -> list[str]:
    cuts = [i for i, d in _scan(expr) if d == 0 and expr.startswith(sep, i)]
    parts, start = [], 0
    for c in cuts:
        parts.append(expr[start:c])
        start = c + len(sep)
    parts.append(expr[start:])
    return parts


def all_of(preds: Sequence[Pred]) -> Pred:
    guards = tuple(dict.fromkeys(g for p in preds for g in p.guards))
    conds = tuple(dict.fromkeys(c for p in preds for c in p.conds))
    return Pred(guards, conds)


def negate(pred: Pred) -> Pred:
    if pred.is_true:
        raise Untranslatable("NotIn would exclude every device")
    return Pred((), (f"!({pred.render()})",))


def _int(value: str, what: str) -> int:
    if not _INT.match(value.strip()):
        raise Untranslatable(f"{what} value {value!r} is not an integer")
    return int(value)


def _mib(n: int) -> str:
    return f"quantity({cel_string(f'{n}Mi')})"


# --- value transforms: one label value → predicate "the device would carry this value" ---

def product_regex(label: str) -> str:
    """Regex on productName for a GFD product label (each '-' was a space or a '-', both kept literally)."""
    return "^" + "[ -]".join(regex_escape(p) for p in label.split("-")) + "$"


def mig_profile(raw: str) -> str:
    """Label spelling of a MIG profile → the DRA `profile` attribute (`1g.10gb.me` → `1g.10gb+me`)."""
    m = _PROFILE.match(raw)
    if not m:
        raise Untranslatable(f"{raw!r} is not a MIG profile name")
    return m["base"] + (f"+{m['attr']}" if m["attr"] else "")


def _profile_pred(profile: str) -> Pred:
    return Pred(attr_guard("profile"), (f"{attr('profile')} == {cel_string(profile)}",))


def v_product(rule: LabelRule, value: str, ctx: Context) -> Pred:
    label = value
    if value.endswith("-SHARED"):
        label = value[: -len("-SHARED")]
        ctx.notes.append(("DRA314", f"{rule.key}={value}: the -SHARED suffix marks nodes whose GPUs the "
                          "device plugin time-sliced or MPS-shared, which no device attribute says; the claim "
                          "selects the model and the label stays on the node selection, so the pod keeps to "
                          "those nodes"))
    profile = ""
    m = _MIG_SUFFIX.match(label)
    if m:
        label, profile = m["parent"], m["profile"]
        if profile == "INVALID":
            raise Untranslatable("GFD marks this node's MIG layout as invalid; no device matches it")
        if not ctx.mig:
            raise MigMismatch(
                f"{value!r} names a MIG slice ({profile}) but the request uses {ctx.device_class}; "
                f"MIG slices are only published in {MIG_CLASS}"
            )
    if not label:
        raise Untranslatable("empty product name")
    pred = Pred((), (f"{attr('productName')}.matches({cel_string(product_regex(label))})",))
    return all_of([pred, _profile_pred(mig_profile(profile))]) if profile else pred


def v_mib(rule: LabelRule, value: str, ctx: Context) -> Pred:
    if not _NONNEG.match(value.strip()):
        raise Untranslatable(f"memory value {value!r} is not a whole number of MiB")
    n = int(value)
    # The label is the byte count floored to MiB, so "= N" is the byte range [N Mi, N+1 Mi).
    return Pred(cap_guard(rule.name), (
        f"{cap(rule.name)}.compareTo({_mib(n)}) >= 0",
        f"{cap(rule.name)}.compareTo({_mib(n + 1)}) < 0",
    ))


def _nominal_low(n: int) -> int:
    # Cards report up to 1/16 less than the catalogue size (T4: 15360 MiB for 16384), some a little more than
    # that (A10G: 23028 MiB for 24576, L40S: 46068 MiB for 49152), so allow 1/8.
    return n * 7 // 8


def v_nominal_mib(rule: LabelRule, value: str, ctx: Context) -> Pred:
    if not _NONNEG.match(value.strip()):
        raise Untranslatable(f"memory value {value!r} is not a whole number of MiB")
    n = int(value)
    ctx.notes.append(
        ("DRA307", f"{rule.key}: catalogue memory {n} MiB matched as the range {_nominal_low(n)}..{n} MiB"))
    return Pred(cap_guard(rule.name), (
        f"{cap(rule.name)}.compareTo({_mib(_nominal_low(n))}) >= 0",
        f"{cap(rule.name)}.compareTo({_mib(n)}) <= 0",
    ))


def v_integer(rule: LabelRule, value: str, ctx: Context) -> Pred:
    if not _NONNEG.match(value.strip()):
        raise Untranslatable(f"value {value!r} is not a whole number")
    q = f"quantity({cel_string(str(int(value)))})"
    return Pred(cap_guard(rule.name), (f"{cap(rule.name)}.compareTo({q}) == 0",))


def v_table_string(rule: LabelRule, value: str, ctx: Context) -> Pred:
    table: dict[str, str] = ctx.tables[rule.table]
    if value not in table:
        raise Untranslatable(f"{value!r} is not in the {rule.table} table")
    return Pred(attr_guard(rule.name), (f"{attr(rule.name)} == {cel_string(table[value])}",))


def v_accelerator(rule: LabelRule, value: str, ctx: Context) -> Pred:
    table: dict[str, dict[str, Any]] = ctx.tables[rule.table]
    if value not in table:
        raise Untranslatable(f"accelerator {value!r} is not in the {rule.table} table")
    entry = table[value]
    conds = [f"{attr('productName')}.matches({cel_string(entry['product'])})"]
    guards: tuple[str, ...] = ()
    # The memory in an accelerator name is the whole GPU's; a MIG slice has a fraction of it.
    if "memory_mib" in entry and not ctx.mig:
        low, high = entry["memory_mib"]
        guards = cap_guard("memory")
        conds += [
            f"{cap('memory')}.compareTo({_mib(low)}) >= 0",
            f"{cap('memory')}.compareTo({_mib(high)}) < 0",
        ]
    return Pred(guards, tuple(conds))


def v_manufacturer(rule: LabelRule, value: str, ctx: Context) -> Pred:
    table: dict[str, str] = ctx.tables[rule.table]
    if table.get(value) != DRIVER:
        raise Untranslatable(f"manufacturer {value!r} is not served by the {DRIVER} driver")
    return TRUE  # the device class already selects only gpu.nvidia.com devices


def v_mig_profile(rule: LabelRule, value: str, ctx: Context) -> Pred:
    return _profile_pred(mig_profile(value))


VALUE_TRANSFORMS: dict[str, Callable[[LabelRule, str, Context], Pred]] = {
    "product": v_product,
    "mib-quantity": v_mib,
    "nominal-mib": v_nominal_mib,
    "integer-quantity": v_integer,
    "family-to-architecture": v_table_string,
    "accelerator-table": v_accelerator,
    "manufacturer": v_manufacturer,
    "mig-profile": v_mig_profile,
}


def _compare(rule: LabelRule, op: str, n: int, ctx: Context) -> Pred:
    """Gt/Lt on an integer label."""
    if rule.transform == "mib-quantity":
        # floor(bytes/Mi) > n  ⟺  bytes >= (n+1) Mi ;  floor(bytes/Mi) < n  ⟺  bytes < n Mi
        bound, cmp = (n + 1, ">= 0") if op == "Gt" else (n, "< 0")
    elif rule.transform == "nominal-mib":
        ctx.notes.append(("DRA307", f"{rule.key}: catalogue memory compared with a 1/8 tolerance"))
        bound, cmp = (_nominal_low(n + 1), ">= 0") if op == "Gt" else (_nominal_low(n), "< 0")
    elif rule.transform == "integer-quantity":
        q = f"quantity({cel_string(str(n))})"
        sign = ">" if op == "Gt" else "<"
        return Pred(cap_guard(rule.name), (f"{cap(rule.name)}.compareTo({q}) {sign} 0",))
    else:
        raise Untranslatable(f"{op} has no meaning for this label")
    return Pred(cap_guard(rule.name), (f"{cap(rule.name)}.compareTo({_mib(bound)}) {cmp}",))


def _exists(rule: LabelRule) -> Pred:
    if rule.kind == "capacity":
        return Pred(cap_guard(rule.name))
    if rule.transform in ("accelerator-table", "manufacturer", "product") or rule.name in ALWAYS_PUBLISHED:
        return TRUE  # every GPU device has a product name: the claim itself guarantees a GPU
    return Pred(attr_guard(rule.name))


def requirement_pred(rule: LabelRule, op: str, values: Sequence[str], ctx: Context) -> Pred:
    """Predicate for one non-version requirement."""
    if rule.mig_only and not ctx.mig:
        raise MigMismatch(
            f"this label exists only for MIG slices, but the request uses {ctx.device_class}; "
            f"MIG slices are only published in {MIG_CLASS}"
        )
    if op == "Exists":
        return _exists(rule)
    if op == "DoesNotExist":
        raise Untranslatable(
            "DoesNotExist selects nodes that lack the label (for example nodes without GPUs); "
            "a device cannot express the absence of a node label"
        )
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise Untranslatable(f"{op} needs exactly one value")
        return _compare(rule, op, _int(values[0], op), ctx)
    if op not in ("In", "NotIn"):
        raise Untranslatable(f"unknown operator {op!r}")
    if not values:
        raise Untranslatable(f"{op} without values")
    fn = VALUE_TRANSFORMS[rule.transform]
    pred = any_of([fn(rule, v, ctx) for v in values])
    return negate(pred) if op == "NotIn" else pred


# --- versions: several labels (major/minor/patch/full) describe one version attribute ---

def _semver(parts: Sequence[int]) -> str:
    return f"semver({cel_string('.'.join(str(p) for p in parts))})"


def normalize_version(value: str) -> tuple[int, int, int]:
    """`550.107.02` → (550, 107, 2); `12.5` → (12, 5, 0) — as the driver's semver coercion does."""
    parts = value.strip().split(".")
    if not 1 <= len(parts) <= 3 or not all(_NONNEG.match(p) for p in parts):
        raise Untranslatable(f"{value!r} is not a version")
    nums = [int(p) for p in parts] + [0, 0]
    return nums[0], nums[1], nums[2]


def _part_value(part: str, value: str) -> int:
    if part == "patch" and value.strip() == "":
        return 0  # GFD writes an empty revision for "X.Y" driver versions, which the driver reads as X.Y.0
    if not _NONNEG.match(value.strip()):
        raise Untranslatable(f"version {part} {value!r} is not a whole number")
    return int(value)


def _prefix_range(name: str, prefix: Sequence[int]) -> Pred:
    a = attr(name)
    if len(prefix) == 3:
        return Pred((), (f"{a}.compareTo({_semver(prefix)}) == 0",))
    low = [*prefix, 0, 0][:3]
    high = [*prefix[:-1], prefix[-1] + 1, 0, 0][:3]
    return Pred((), (f"{a}.compareTo({_semver(low)}) >= 0", f"{a}.compareTo({_semver(high)}) < 0"))


VersionReq = tuple[LabelRule, str, list[str]]


def version_pred(name: str, reqs: Sequence[VersionReq], ctx: Context) -> Pred:
    """One predicate for all requirements on the version attribute `name` within one conjunction."""
    a = attr(name)
    preds: list[Pred] = []
    by_part: dict[str, list[tuple[str, list[str]]]] = {}
    for rule, op, values in reqs:
        if op == "DoesNotExist":
            raise Untranslatable("DoesNotExist selects nodes that lack the label; no device can express that")
        if op == "Exists":
            continue  # only the guard: the attribute is present
        if rule.transform == "version-full":
            if op not in ("In", "NotIn") or not values:
                raise Untranslatable(f"{op} cannot compare a full version string")
            full = any_of([
                Pred((), (f"{a}.compareTo({_semver(normalize_version(v))}) == 0",)) for v in values
            ])
            preds.append(negate(full) if op == "NotIn" else full)
        else:
            by_part.setdefault(rule.part, []).append((op, values))
    if by_part:
        preds.append(_parts_pred(name, by_part))
    return all_of([Pred(attr_guard(name)), *preds])


def _parts_pred(name: str, by_part: dict[str, list[tuple[str, list[str]]]]) -> Pred:
    if any(len(v) > 1 for v in by_part.values()):
        raise Untranslatable("the same version part is constrained twice")
    if "major" not in by_part:
        raise Untranslatable("a minor or patch version without the major version matches across majors")
    (op, values), = by_part["major"]
    lower = [p for p in ("minor", "patch") if p in by_part]
    if op in ("Gt", "Lt"):
        if lower or len(values) != 1:
            raise Untranslatable(f"{op} on the major version combined with other parts")
        n = _int(values[0], op)
        bound = [n + 1, 0, 0] if op == "Gt" else [n, 0, 0]
        return Pred((), (f"{attr(name)}.compareTo({_semver(bound)}) {'>= 0' if op == 'Gt' else '< 0'}",))
    chain = ["major", "minor", "patch"][: 1 + len(lower)]
    if lower != chain[1:]:
        raise Untranslatable("a patch version without the minor version matches across minors")
    if op == "NotIn" and lower:
        raise Untranslatable("NotIn on the major version combined with other parts")
    choices: list[list[int]] = []
    for part in chain:
        part_op, part_values = by_part[part][0]
        if part_op not in ("In", "NotIn") or (part != "major" and part_op != "In") or not part_values:
            raise Untranslatable(f"{part_op} on the {part} version combined with other parts")
        choices.append([_part_value(part, v) for v in part_values])
    combos = list(itertools.product(*choices))
    if len(combos) > MAX_COMBINATIONS:
        raise Untranslatable("too many version combinations")
    pred = any_of([_prefix_range(name, c) for c in combos])
    return negate(pred) if op == "NotIn" else pred
