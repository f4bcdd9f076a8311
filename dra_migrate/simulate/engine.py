"""The CEL engine seam: the allocator only needs `compile(expr).evaluate(device) -> bool`.

The default engine wraps `dra_migrate.cel` (imported lazily so the simulator can be used and tested with a
fake engine when that module is missing).
"""

from __future__ import annotations

from typing import Any, Protocol

from dra_migrate import cel  # type: ignore[attr-defined,unused-ignore]
from dra_migrate.simulate.inventory import Device


class CompiledSelectorLike(Protocol):
    def evaluate(self, device: Any) -> bool: ...


class SelectorEngine(Protocol):
    """compile() raises one of `compile_errors`; evaluate() raises one of `runtime_errors`.

    `to_device` converts the simulator's Device into what `evaluate` expects.
    """

    @property
    def compile_errors(self) -> tuple[type[BaseException], ...]: ...

    @property
    def runtime_errors(self) -> tuple[type[BaseException], ...]: ...

    def compile(self, expression: str) -> CompiledSelectorLike: ...

    def to_device(self, device: Device) -> Any: ...


class CelEngine:
    """Adapter over dra_migrate.cel (device_from_slice + compile_selector)."""

    def __init__(self) -> None:
        # lazy: start-up (cel.device: ~3 ms, only __init__() needs it)
        from dra_migrate.cel.device import DeviceFormatError

        self._cel = cel
        self.compile_errors: tuple[type[BaseException], ...] = (cel.CelCompileError,)
        # A device entry the API server would have rejected (e.g. `int: "4"`) cannot be shown to CEL; the
        # allocator reports it like an evaluation error instead of crashing on one bad inventory line.
        self.runtime_errors: tuple[type[BaseException], ...] = (cel.CelEvalError, DeviceFormatError)
        self._views: dict[int, Any] = {}

    def compile(self, expression: str) -> CompiledSelectorLike:
        return self._cel.compile_selector(expression)  # type: ignore[no-any-return,unused-ignore]

    def to_device(self, device: Device) -> Any:
        # Device objects are immutable and live as long as the inventory: cache the view by identity.
        key = id(device)
        view = self._views.get(key)
        if view is None:
            view = self._cel.device_from_slice(dict(device.raw), device.driver)
            self._views[key] = (device, view)
            return view
        return view[1]


def default_engine() -> SelectorEngine:
    """The real CEL engine; raises ImportError when dra_migrate.cel is not available."""
    return CelEngine()
