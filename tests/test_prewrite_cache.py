"""The caches of the pre-write checks give exactly what the uncached checks gave."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dra_migrate import prewrite
from dra_migrate.cel import CelEvalError, compile_selector
from dra_migrate.cel.compiler import CelDevice, device_to_cel
from dra_migrate.cel.devices import load_nvidia_devices, nvidia_cel_devices
from dra_migrate.simulate.inventory import DeviceClass, default_device_classes

SELECTORS = [
    ("gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].productName.matches('^NVIDIA[ -]A100')"),
    ("mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"),
    ("mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == 'no-such-profile'"),
    ("gpu.nvidia.com", "'memory' in device.capacity['gpu.nvidia.com'] && "
                       "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"),
    ("gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"),  # no such key on a full GPU
    ("", "device.attributes['gpu.nvidia.com'].type == 'mig'"),
    ("", "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"),  # errors on full GPUs
    ("gpu.nvidia.com", "device.driver"),  # not a bool: the checker rejects it
    ("gpu.nvidia.com", "device.attributes[1] == 2 ||"),  # does not compile
    ("unknown.example.com", "device.driver == 'x'"),
    ("vfio.gpu.nvidia.com", "true"),
]


def _uncached_check(device_class: str, expression: str) -> tuple[str, str] | None:
    """The check as written before the per-class cache: class selectors re-evaluated per device, on fresh
    DeviceViews (each converted to CEL on every evaluation)."""
    from dra_migrate.cel import CelCompileError

    try:
        selector = compile_selector(expression)
    except CelCompileError as exc:
        return "DRA312", f"CEL selector does not compile: {exc.message}: {expression}"
    if device_class:
        known = default_device_classes().get(device_class)
        if known is None:
            return None
        class_selectors = [compile_selector(e) for e in known.selectors]
    else:
        class_selectors = []
    matched = 0
    for device in load_nvidia_devices():
        try:
            if not all(c.evaluate(device) for c in class_selectors):
                continue
            matched += selector.evaluate(device)
        except CelEvalError as exc:
            return "DRA313", f"CEL selector fails on device {device.name}: {exc.message}: {expression}"
    if matched == 0:
        return "DRA801", f"no known NVIDIA device shape of class {device_class} matches this selector: {expression}"
    return None


@pytest.fixture
def fresh_caches() -> Iterator[None]:
    prewrite.check_selector.cache_clear()
    prewrite._class_members.cache_clear()
    yield
    prewrite.check_selector.cache_clear()
    prewrite._class_members.cache_clear()


@pytest.mark.parametrize(("device_class", "expression"), SELECTORS)
def test_cached_check_equals_uncached(fresh_caches: None, device_class: str, expression: str) -> None:
    expected = _uncached_check(device_class, expression)
    assert prewrite.check_selector(device_class, expression) == expected
    assert prewrite.check_selector(device_class, expression) == expected  # and again from the cache


def test_the_checks_tell_the_outcomes_apart(fresh_caches: None) -> None:
    codes = [(prewrite.check_selector(c, e) or ("ok",))[0] for c, e in SELECTORS]
    assert codes == ["ok", "ok", "DRA801", "ok", "DRA313", "ok", "DRA313", "DRA312", "DRA312", "ok", "DRA801"]


def test_class_members_are_the_devices_the_class_selects(fresh_caches: None) -> None:
    for name, device_class in default_device_classes().items():
        members = prewrite._class_members(name)
        assert members is not None
        selectors = [compile_selector(e) for e in device_class.selectors]
        expected = [d.name for d in load_nvidia_devices() if all(s.evaluate(d) for s in selectors)]
        assert [d.name for d, error in members if error is None] == expected
    assert prewrite._class_members("unknown.example.com") is None
    assert [d.name for d, _ in prewrite._class_members("") or ()] == [d.name for d in load_nvidia_devices()]


def test_a_class_selector_error_is_reported_on_its_device(
    fresh_caches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = DeviceClass("broken.example.com", ("device.attributes['gpu.nvidia.com'].profile == '1g.5gb'",))
    monkeypatch.setattr("dra_migrate.simulate.inventory.default_device_classes",
                        lambda: {**default_device_classes(), broken.name: broken})
    first_full_gpu = next(d.name for d in load_nvidia_devices()
                          if d.attributes["gpu.nvidia.com"]["type"] == "gpu")
    problem = prewrite.check_selector(broken.name, "true")
    assert problem is not None and problem[0] == "DRA313"
    assert f"on device {first_full_gpu}: no such key: profile: true" in problem[1]
    assert problem == _uncached_check_with(broken, "true")


def _uncached_check_with(device_class: DeviceClass, expression: str) -> tuple[str, str] | None:
    selectors = [compile_selector(e) for e in device_class.selectors]
    selector = compile_selector(expression)
    for device in load_nvidia_devices():
        try:
            if all(s.evaluate(device) for s in selectors):
                selector.evaluate(device)
        except CelEvalError as exc:
            return "DRA313", f"CEL selector fails on device {device.name}: {exc.message}: {expression}"
    return None


def test_cel_devices_are_converted_once_and_never_changed_by_evaluation(fresh_caches: None) -> None:
    assert nvidia_cel_devices() is nvidia_cel_devices()
    for c, e in SELECTORS:
        prewrite.check_selector(c, e)
    for selector in ("device.attributes['gpu.nvidia.com'].all(k, k != '')",
                     "device.capacity['gpu.nvidia.com'].filter(k, k == 'memory').size() >= 0",
                     "cel.bind(a, device.attributes['gpu.nvidia.com'], a.size() > 0)",
                     "device.attributes['other.example.com'].size() == 0"):
        for device in nvidia_cel_devices():
            compile_selector(selector).evaluate(device)
    for device, view in zip(nvidia_cel_devices(), load_nvidia_devices(), strict=True):
        assert device.name == view.name
        assert device.value == device_to_cel(view)
        assert set(device.value["attributes"]) == set(device_to_cel(view)["attributes"])


def test_a_cel_device_evaluates_like_its_view() -> None:
    for view in load_nvidia_devices():
        prepared = CelDevice(view)
        for _c, e in SELECTORS[:4]:
            selector = compile_selector(e)
            try:
                expected: bool | str = selector.evaluate(view)
            except CelEvalError as exc:
                expected = exc.message
            try:
                got: bool | str = selector.evaluate(prepared)
            except CelEvalError as exc:
                got = exc.message
            assert got == expected
