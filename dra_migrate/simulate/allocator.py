"""A model of the structured-parameters DRA allocator for one node.

Follows kubernetes/dynamic-resource-allocation structured/internal/stable/allocator_stable.go @v0.36.2
(the variant the scheduler uses when no alpha/beta allocator features beyond prioritized lists, admin
access and device taints are enabled):

* all claims of a pod are allocated together; requests in order, devices in pool/slice/device order;
* a device is allocated at most once (across the pod's claims and `allocated`, the devices already in use);
* `firstAvailable` subrequests are tried in order, the first one that leads to a full solution wins;
* class selectors, then request selectors, all must be true; a CEL runtime error aborts the whole
  allocation with an error (upstream: the pod's scheduling attempt fails and is retried), it does not just
  skip the device;
* `matchAttribute` constraints: all devices of the listed requests share the attribute's type and value,
  devices without it are not eligible;
* `allocationMode: All` takes every matching device of the node, fails if one of them is in use or none
  exists, and errors out if a pool is incomplete or a constraint excludes one of them;
* at most 32 devices per claim (`AllocationResultsMaxSize`), checked up front on the minimum and during the
  search (a subrequest that would exceed it makes the search try the next subrequest);
* backtracking search returning the first solution.

Deviation (documented, result-preserving): within one request only device *combinations* are tried, not
all permutations, like the experimental allocator (`allocateOne` startLocation, allocator_experimental.go
@v0.36.2). Constraints and later requests depend only on the set of devices chosen, and the sorted order of
a set is the first of its permutations in upstream's search order, so the first solution found is the same.
Pool order is by driver and pool name (upstream iterates a Go map), slices by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.simulate.claims import ALL, EXACT_COUNT, ClaimSpec, ExactRequest, Request
from dra_migrate.simulate.engine import CompiledSelectorLike, SelectorEngine, default_engine
from dra_migrate.simulate.inventory import Device, DeviceClass, DeviceId, Inventory, Pool

MAX_DEVICES_PER_CLAIM = 32  # resourceapi.AllocationResultsMaxSize
DEFAULT_SEARCH_LIMIT = 200_000  # allocateOne calls; stands in for the scheduler's per-node filter timeout


@dataclass(frozen=True, slots=True)
class AllocationError:
    """Why allocation stopped with an error rather than "does not fit".

    kind: cel-runtime, cel-compile, invalid-request, unknown-class, too-many-devices, pool-updating,
    pool-invalid, constraint-all, unsupported, invalid-pools, search-limit.
    fatal: upstream returns an error that aborts the pod's scheduling attempt (no node is tried further);
    otherwise the node is just unsuitable.
    """

    kind: str
    message: str
    fatal: bool = True


@dataclass(frozen=True, slots=True)
class RequestAllocation:
    claim: str
    request: str
    subrequest: str | None
    devices: tuple[DeviceId, ...]


@dataclass(frozen=True, slots=True)
class ClaimAllocation:
    claim: str
    requests: tuple[RequestAllocation, ...]

    @property
    def devices(self) -> tuple[DeviceId, ...]:
        return tuple(d for r in self.requests for d in r.devices)

    def request(self, name: str) -> RequestAllocation | None:
        return next((r for r in self.requests if r.request == name), None)


@dataclass(frozen=True, slots=True)
class RequestDiagnosis:
    """Near-miss data for one request or subrequest on one node."""

    claim: str
    request: str
    subrequest: str | None
    device_class: str
    needed: int | str  # a count, or "All"
    devices_on_node: int
    class_matches: int | None  # None: class unknown
    selector_matches: tuple[int, ...]  # per request selector, among class matches
    matching: int  # class and all request selectors
    available: int  # matching and not already allocated
    cel_errors: int


@dataclass(slots=True)
class AllocationResult:
    node: str
    success: bool
    claims: list[ClaimAllocation] = field(default_factory=list)
    error: AllocationError | None = None
    diagnoses: list[RequestDiagnosis] = field(default_factory=list)
    excluded_pools: list[str] = field(default_factory=list)  # incomplete or invalid pools for this node

    @property
    def devices(self) -> set[DeviceId]:
        return {d for c in self.claims for d in c.devices}

    def claim(self, name: str) -> ClaimAllocation | None:
        return next((c for c in self.claims if c.claim == name), None)

    def summary(self) -> str:
        if self.success:
            return f"{self.node}: fits"
        if self.error:
            return f"{self.node}: {self.error.message}"
        return f"{self.node}: cannot allocate all claims"


class _Fatal(Exception):
    def __init__(self, error: AllocationError) -> None:
        super().__init__(error.message)
        self.error = error


class NonBooleanResult(Exception):
    """A selector evaluated to something other than a bool: an evaluation error upstream."""


class _MaxSizeExceeded(Exception):
    """errAllocationResultMaxSizeExceeded: backtrack to a subrequest needing fewer devices."""


@dataclass(slots=True)
class _RequestData:
    request: ExactRequest
    parent: Request | None
    device_class: DeviceClass
    num_devices: int
    all_devices: list[Device] | None = None

    @property
    def base_name(self) -> str:
        return self.parent.name if self.parent else self.request.name

    @property
    def sub_name(self) -> str | None:
        return self.request.name if self.parent else None


_VALUE_TYPES = ("string", "int", "bool", "version")


def _typed(attr: Mapping[str, Any]) -> tuple[str, Any] | None:
    for t in _VALUE_TYPES:
        if t in attr:
            v = attr[t]
            if t == "int":
                return t, int(v)
            if t == "bool":
                return t, v if isinstance(v, bool) else str(v).lower() == "true"
            return t, str(v)
    return None


def lookup_attribute(device: Device, fq_name: str) -> Mapping[str, Any] | None:
    """Upstream lookupAttribute: fully-qualified key first, else the bare id if the domain is the driver."""
    if fq_name in device.attributes:
        return device.attributes[fq_name]
    domain, sep, ident = fq_name.partition("/")
    if not sep or domain != device.driver:
        return None
    return device.attributes.get(ident)


class _MatchAttribute:
    def __init__(self, request_names: Sequence[str], attribute: str) -> None:
        self.names = set(request_names)
        self.attribute = attribute
        self.value: tuple[str, Any] | None = None
        self.count = 0

    def _applies(self, base: str, sub: str | None) -> bool:
        if not self.names:
            return True
        return base in self.names or (sub is not None and f"{base}/{sub}" in self.names)

    def add(self, base: str, sub: str | None, device: Device) -> bool:
        if not self._applies(base, sub):
            return True
        attr = lookup_attribute(device, self.attribute)
        if attr is None:
            return False
        typed = _typed(attr)
        if self.count == 0:
            self.value, self.count = typed, 1
            return True
        if typed is None or typed != self.value:
            return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str | None) -> None:
        if self._applies(base, sub):
            self.count -= 1


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    return bool(key) and str(toleration.get("value", "")) == str(taint.get("value", ""))


def _taint_prevents(device: Device, request: ExactRequest) -> bool:
    for taint in device.taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(
            _tolerates(t, taint) for t in request.tolerations
        ):
            return True
    return False


class Allocator:
    """Allocates claims on one node at a time. Selector results are cached across calls."""

    def __init__(
        self,
        inventory: Inventory,
        engine: SelectorEngine | None = None,
        *,
        prioritized_list: bool = True,
        admin_access: bool = True,
        device_taints: bool = True,
        search_limit: int = DEFAULT_SEARCH_LIMIT,
    ) -> None:
        self.inventory = inventory
        self._engine = engine
        self.prioritized_list = prioritized_list
        self.admin_access = admin_access
        self.device_taints = device_taints
        self.search_limit = search_limit
        self._compiled: dict[str, CompiledSelectorLike | BaseException] = {}
        self._results: dict[tuple[DeviceId, str], bool | BaseException] = {}
        self._pools: dict[str, list[Pool]] = {}

    @property
    def engine(self) -> SelectorEngine:
        if self._engine is None:
            self._engine = default_engine()
        return self._engine

    def pools(self, node: str) -> list[Pool]:
        if node not in self._pools:
            self._pools[node] = self.inventory.pools_for_node(node)
        return self._pools[node]

    def evaluate(self, expression: str, device: Device) -> bool:
        """Raises the engine's compile or runtime error (cached like upstream's CEL cache)."""
        key = (device.id, expression)
        cached = self._results.get(key)
        if cached is None:
            compiled = self._compiled.get(expression)
            if compiled is None:
                try:
                    compiled = self.engine.compile(expression)
                except self.engine.compile_errors as exc:
                    compiled = exc
                self._compiled[expression] = compiled
            if isinstance(compiled, BaseException):
                raise compiled
            runtime_errors: tuple[type[BaseException], ...] = (*self.engine.runtime_errors, NonBooleanResult)
            try:
                value = compiled.evaluate(self.engine.to_device(device))
                if not isinstance(value, bool):
                    raise NonBooleanResult(f"expression returned {type(value).__name__}, not bool")
                cached = value
            except runtime_errors as exc:
                cached = exc
            self._results[key] = cached
        if isinstance(cached, BaseException):
            raise cached
        return cached

    def allocate(
        self,
        claims: Sequence[ClaimSpec],
        node: str,
        allocated: AbstractSet[DeviceId] = frozenset(),
        *,
        diagnose: bool = True,
    ) -> AllocationResult:
        run = _Run(self, list(claims), node, allocated)
        result = run.execute()
        if diagnose and not result.success:
            result.diagnoses = diagnose_requests(self, claims, node, allocated)
        return result


class _Run:
    """State of one Allocate call (upstream's `allocator` struct)."""

    def __init__(
        self, owner: Allocator, claims: list[ClaimSpec], node: str, allocated: AbstractSet[DeviceId]
    ) -> None:
        self.o = owner
        self.claims = claims
        self.node = node
        self.allocated = allocated
        self.pools = owner.pools(node)
        self.devices = [d for p in self.pools if not (p.incomplete or p.invalid_reason) for d in p.devices]
        self.data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: dict[DeviceId, set[int]] = {}
        self.results: list[list[tuple[_RequestData, DeviceId]]] = [[] for _ in claims]
        self.steps = 0

    def execute(self) -> AllocationResult:
        excluded = [p.key for p in self.pools if p.incomplete or p.invalid_reason]
        try:
            self._prepare()
            done = self._one(0, 0, 0, 0, False, 0)
        except _Fatal as f:
            return AllocationResult(self.node, False, error=f.error, excluded_pools=excluded)
        if not done:
            error = None
            if any(p.invalid_reason for p in self.pools):
                # Not fatal upstream: other nodes may still work (ErrFailedAllocationOnNode).
                error = AllocationError(
                    "invalid-pools", "invalid resource pools were encountered", fatal=False
                )
            return AllocationResult(self.node, False, error=error, excluded_pools=excluded)
        return AllocationResult(self.node, True, claims=self._build(), excluded_pools=excluded)

    # --- preparation (upstream Allocate before the search) ---------------------------------------

    def _fatal(self, kind: str, message: str) -> _Fatal:
        return _Fatal(AllocationError(kind, message))

    def _prepare(self) -> None:
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.requests):
                if request.first_available:
                    if not self.o.prioritized_list:
                        raise self._fatal(
                            "unsupported",
                            f"claim {claim.name}, request {request.name}: has subrequests, but the "
                            "DRAPrioritizedList feature is disabled",
                        )
                    smallest = None
                    for si, sub in enumerate(request.first_available):
                        rd = self._validate(ci, sub, request)
                        self.data[(ci, ri, si)] = rd
                        smallest = rd.num_devices if smallest is None else min(smallest, rd.num_devices)
                    min_devices += smallest or 0
                else:
                    assert request.exactly is not None
                    rd = self._validate(ci, request.exactly, None)
                    self.data[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
            if min_devices > MAX_DEVICES_PER_CLAIM:
                raise self._fatal(
                    "too-many-devices",
                    f"claim {claim.name}: number of requested devices {min_devices} exceeds the claim limit "
                    f"of {MAX_DEVICES_PER_CLAIM}",
                )
            constraints: list[_MatchAttribute] = []
            for i, c in enumerate(claim.constraints):
                if not c.match_attribute:
                    raise self._fatal(
                        "unsupported",
                        f"claim {claim.name}, constraint #{i}: "
                        "empty constraint (unsupported constraint type?)",
                    )
                constraints.append(_MatchAttribute(c.requests, c.match_attribute))
            self.constraints.append(constraints)

    def _validate(self, ci: int, request: ExactRequest, parent: Request | None) -> _RequestData:
        claim = self.claims[ci].name
        for i, expr in enumerate(request.selectors):
            if not expr:
                raise self._fatal(
                    "invalid-request",
                    f"claim {claim}, request {request.name}, selector #{i}: CEL expression empty "
                    "(unsupported selector type?)",
                )
        if request.admin_access and not self.o.admin_access:
            raise self._fatal(
                "unsupported",
                f"claim {claim}, request {request.name}: "
                "admin access is requested, but the feature is disabled",
            )
        if not request.device_class_name:
            raise self._fatal(
                "invalid-request",
                f"claim {claim}, request {request.name}: "
                "missing device class name (unsupported request type?)",
            )
        device_class = self.o.inventory.classes.get(request.device_class_name)
        if device_class is None:
            raise self._fatal(
                "unknown-class",
                f"claim {claim}, request {request.name}: could not retrieve device class "
                f"{request.device_class_name}",
            )
        rd = _RequestData(request, parent, device_class, 0)
        if request.allocation_mode == EXACT_COUNT:
            rd.num_devices = request.count
        elif request.allocation_mode == ALL:
            rd.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise self._fatal(
                        "pool-updating",
                        f"claim {claim}, request {request.name}: asks for all devices, but resource pool "
                        f"{pool.key} is currently being updated",
                    )
                if pool.invalid_reason:
                    raise self._fatal(
                        "pool-invalid",
                        f"claim {claim}, request {request.name}: asks for all devices, but resource pool "
                        f"{pool.key} is currently invalid",
                    )
                rd.all_devices.extend(d for d in pool.devices if self._selectable(ci, rd, d))
            rd.num_devices = len(rd.all_devices)
        else:
            raise self._fatal(
                "unsupported",
                f"claim {claim}, request {request.name}: unsupported count mode {request.allocation_mode}",
            )
        return rd

    # --- selection -------------------------------------------------------------------------------

    def _selectable(self, ci: int, rd: _RequestData, device: Device) -> bool:
        cls = rd.device_class
        return self._selectors_match(ci, device, cls, cls.selectors) and self._selectors_match(
            ci, device, None, rd.request.selectors
        )

    def _selectors_match(
        self, ci: int, device: Device, cls: DeviceClass | None, exprs: Sequence[str]
    ) -> bool:
        where = f"class {cls.name}" if cls else f"claim {self.claims[ci].name}"
        engine = self.o.engine
        runtime_errors: tuple[type[BaseException], ...] = (*engine.runtime_errors, NonBooleanResult)
        for i, expr in enumerate(exprs):
            try:
                if not self.o.evaluate(expr, device):
                    return False
            except engine.compile_errors as exc:
                raise self._fatal("cel-compile", f"{where}: selector #{i}: CEL compile error: {exc}") from exc
            except runtime_errors as exc:
                raise self._fatal("cel-runtime", f"{where}: selector #{i}: CEL runtime error: {exc}") from exc
        return True

    # --- search (upstream allocateOne / allocateDevice) -------------------------------------------

    def _in_use(self, device_id: DeviceId, ci: int, admin: bool) -> bool:
        if admin:
            return ci in self.allocating.get(device_id, ())
        return device_id in self.allocated or bool(self.allocating.get(device_id))

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> bool:
        self.steps += 1
        if self.steps > self.o.search_limit:
            raise _Fatal(
                AllocationError(
                    "search-limit",
                    f"gave up after {self.o.search_limit} search steps (the scheduler would time out)",
                    fatal=False,
                )
            )
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            try:
                return self._one(ci + 1, 0, 0, 0, False, 0)
            except _MaxSizeExceeded:
                return False

        rd = self.data[(ci, ri, si)]
        if not in_sub and rd.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.data:
                try:
                    ok = self._one(ci, ri, sub, di, True, start)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False

        request = rd.request
        if request.allocation_mode == ALL and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + rd.num_devices - di > MAX_DEVICES_PER_CLAIM:
            raise _MaxSizeExceeded

        if request.allocation_mode == ALL:
            assert rd.all_devices is not None
            undo = self._allocate_device(ci, rd, rd.all_devices[di], must=True)
            if undo is None:
                return False  # some device is in use: no solution, order does not matter
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, 0)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done

        for index in range(start, len(self.devices)):
            device = self.devices[index]
            if self._in_use(device.id, ci, request.admin_access):
                continue
            if not self._selectable(ci, rd, device):
                continue
            undo = self._allocate_device(ci, rd, device, must=False)
            if undo is None:
                continue
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, index + 1)
            except BaseException:
                undo()
                raise
            if done:
                return True
            undo()
        return False

    def _allocate_device(
        self, ci: int, rd: _RequestData, device: Device, must: bool
    ) -> Callable[[], None] | None:
        request = rd.request
        if self._in_use(device.id, ci, request.admin_access):
            return None
        if self.o.device_taints and _taint_prevents(device, request):
            return None
        base, sub = rd.base_name, rd.sub_name
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, device):
                if must:
                    raise self._fatal(
                        "constraint-all",
                        f"claim {self.claims[ci].name}, request {request.name}: "
                        f"cannot add device {device.id} because a claim constraint would not be satisfied",
                    )
                for prev in constraints[:i]:
                    prev.remove(base, sub)
                return None
        self.allocating.setdefault(device.id, set()).add(ci)
        self.results[ci].append((rd, device.id))

        def undo() -> None:
            for c in constraints:
                c.remove(base, sub)
            self.allocating[device.id].discard(ci)
            self.results[ci].pop()

        return undo

    def _build(self) -> list[ClaimAllocation]:
        out: list[ClaimAllocation] = []
        for ci, claim in enumerate(self.claims):
            per_request: list[RequestAllocation] = []
            for request in claim.requests:
                chosen = [(rd, d) for rd, d in self.results[ci] if rd.base_name == request.name]
                sub = chosen[0][0].sub_name if chosen else None
                per_request.append(
                    RequestAllocation(claim.name, request.name, sub, tuple(d for _, d in chosen))
                )
            out.append(ClaimAllocation(claim.name, tuple(per_request)))
        return out


def _variants(request: Request) -> list[ExactRequest]:
    return (
        list(request.first_available)
        if request.first_available
        else [request.exactly]
        if request.exactly
        else []
    )


def diagnose_requests(
    allocator: Allocator, claims: Sequence[ClaimSpec], node: str, allocated: AbstractSet[DeviceId]
) -> list[RequestDiagnosis]:
    """Per request/subrequest counts on `node`, for near-miss reporting. Evaluates every device, counting
    CEL errors instead of aborting (so it may touch devices the real allocator never looks at)."""
    pools = allocator.pools(node)
    devices = [d for p in pools if not (p.incomplete or p.invalid_reason) for d in p.devices]

    def check(expr: str, device: Device) -> bool | None:
        try:
            return allocator.evaluate(expr, device)
        except Exception:  # noqa: BLE001 - any engine error counts as "error" for reporting
            return None

    out: list[RequestDiagnosis] = []
    for claim in claims:
        for request in claim.requests:
            for variant in _variants(request):
                sub = variant.name if request.first_available else None
                needed: int | str = ALL if variant.allocation_mode == ALL else variant.count
                cls = allocator.inventory.classes.get(variant.device_class_name)
                errors = 0
                class_ok: list[Device] = []
                if cls is not None:
                    for d in devices:
                        results = [check(e, d) for e in cls.selectors]
                        errors += results.count(None)
                        if all(r is True for r in results):
                            class_ok.append(d)
                per_selector = []
                matching = set(d.id for d in class_ok)
                for expr in variant.selectors:
                    hits = set()
                    for d in class_ok:
                        r = check(expr, d) if expr else None
                        errors += r is None
                        if r is True:
                            hits.add(d.id)
                    per_selector.append(len(hits))
                    matching &= hits
                out.append(
                    RequestDiagnosis(
                        claim=claim.name,
                        request=request.name,
                        subrequest=sub,
                        device_class=variant.device_class_name,
                        needed=needed,
                        devices_on_node=len(devices),
                        class_matches=len(class_ok) if cls is not None else None,
                        selector_matches=tuple(per_selector),
                        matching=len(matching),
                        available=len(matching - set(allocated)),
                        cel_errors=errors,
                    )
                )
    return out
