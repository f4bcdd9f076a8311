"""The caches of the pre-write checks give exactly what the uncached checks gave."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dra_migrate.cel import CelEvalError, compile_selector
from dra_migrate.cel.compiler import CelDevice, device_to_cel
from dra_migrate.cel.devices import load_nvidia_devices, nvidia_cel_devices
from dra_migrate.check import prewrite
from dra_migrate.ruleset.nvidia_cluster import DeviceClass, default_device_classes

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
    ("mig.nvidia.com", "has(device.attributes['gpu.nvidia.com'].profile) && "
                       "device.attributes['gpu.nvidia.com'].profile.startsWith('1g')"),
    ("gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].exists(k, k == 'profile')"),  # matches none
    ("mig.nvidia.com", "cel.bind(a, device.attributes['gpu.nvidia.com'], a.uuid.startsWith('MIG-'))"),
    ("", "'memory' in device.capacity['gpu.nvidia.com'] && device.attributes['gpu.nvidia.com'].type == 'gpu'"),
    ("", "device.attributes.resource.kubernetes.io.pcieRoot != ''"),  # not a domain: errors on the first
    ("mig.nvidia.com", "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('10Gi')) > 0 && "
                       "device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.0.0'))"),
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
    assert codes == ["ok", "ok", "DRA801", "ok", "DRA313", "ok", "DRA313", "DRA312", "DRA312", "ok", "DRA801",
                     "ok", "DRA801", "ok", "ok", "DRA313", "ok"]


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
    monkeypatch.setattr("dra_migrate.check.prewrite.default_device_classes",
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


# --- schema validation --------------------------------------------------------------------------------------

def _deployment(**container: object) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "x", **container}]}}},
    }


def _claim_template(name: str, count: object = 1) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": count}}]}}},
    }


OBJECTS = [
    _deployment(),
    _deployment(resources={"limits": {"nvidia.com/gpu": 1}}, ports=[{"containerPort": "80"}]),  # wrong type
    _deployment(imagePullPolicy="Sometimes", unknownField=1),  # enum, unknown field (strict)
    {**_deployment(), "spec": {"template": {}}},  # required selector missing
    _claim_template("a"),
    _claim_template("b", count=0),  # semantic limit
    _claim_template("c", count="one"),
]


@pytest.fixture
def fresh_results() -> Iterator[None]:
    from dra_migrate.check.validate.schema import clear_result_cache

    clear_result_cache()
    yield
    clear_result_cache()


@pytest.mark.parametrize("obj", OBJECTS)
@pytest.mark.parametrize("strict", [True, False])
def test_cached_validation_equals_plain_jsonschema(fresh_results: None, obj: dict[str, object], strict: bool) -> None:
    """The memoized-$ref validator and the result cache report exactly what plain jsonschema reports."""
    import jsonschema

    from dra_migrate.check.validate import schema

    plain = jsonschema.Draft202012Validator(schema._validator(str(obj["kind"]), str(obj["apiVersion"]), "1.34",
                                                              strict).schema,  # type: ignore[union-attr]
                                            registry=schema._registry("1.34", strict))
    expected = sorted(schema._schema_issues(plain, obj), key=lambda i: (i.path, i.message))
    got = schema.validate_object(obj, "1.34", strict=strict, semantic=False)
    assert got == expected
    assert schema.validate_object(obj, "1.34", strict=strict, semantic=False) == expected  # from the cache


def test_the_validation_objects_are_told_apart(fresh_results: None) -> None:
    from dra_migrate.check.validate import validate_object

    counts = [len(validate_object(o, "1.34")) for o in OBJECTS]
    assert counts[0] == 0 and counts[4] == 0
    assert all(n > 0 for i, n in enumerate(counts) if i not in (0, 4))


def test_a_cache_hit_on_an_invalid_object_still_reports(fresh_results: None) -> None:
    from dra_migrate.check.prewrite import validate_new_object
    from dra_migrate.check.validate.schema import _RESULTS
    from dra_migrate.diagnostics.model import Location

    bad = _claim_template("b", count=0)
    first = validate_new_object(bad, "1.34", Location("f.yaml", 1, 1))
    assert first and len(_RESULTS) == 1
    second = validate_new_object(bad, "1.34", Location("f.yaml", 1, 1))
    assert second == first
    first.clear()  # a caller changing its list does not change the cache
    assert validate_new_object(bad, "1.34", Location("f.yaml", 1, 1)) == second


def test_results_are_keyed_by_everything_that_changes_them(fresh_results: None) -> None:
    from dra_migrate.check.validate import validate_object

    loose = _deployment(unknownField=1)
    assert validate_object(loose, "1.34", strict=False) == []
    assert validate_object(loose, "1.34", strict=True) != []
    zero = _claim_template("z", count=0)
    assert validate_object(zero, "1.34", semantic=False) == []
    assert validate_object(zero, "1.34", semantic=True) != []
    assert validate_object(_claim_template("t"), "1.31") != []  # resource.k8s.io/v1 is not served by 1.31
    assert validate_object(_claim_template("t"), "1.34") == []


def test_canonical_json_is_injective_on_what_it_accepts() -> None:
    from dra_migrate.check.validate.schema import canonical_json

    assert canonical_json({"a": 1}) != canonical_json({"a": True})
    assert canonical_json({"a": 1}) != canonical_json({"a": 1.0})
    assert canonical_json({"a": "1"}) != canonical_json({"a": 1})
    assert canonical_json({"b": 1, "a": [None]}) == canonical_json({"a": [None], "b": 1})
    assert canonical_json({1: "x"}) is None  # would be spelt like {"1": "x"}
    assert canonical_json({"a": (1,)}) is None


# --- projection: devices that agree on what a selector reads ------------------------------------------------

def test_device_paths_follow_the_access_chains() -> None:
    def paths(expr: str) -> list[tuple[str, ...]]:
        return sorted(compile_selector(expr).device_paths)

    assert paths("'memory' in device.capacity['gpu.nvidia.com'] && device.driver == 'a' && "
                 "device.attributes['gpu.nvidia.com'].productName.matches('x')") == [
        ("attributes", "gpu.nvidia.com", "productName"), ("capacity", "gpu.nvidia.com", "memory"), ("driver",)]
    assert paths("device.attributes['gpu.nvidia.com'].exists(k, k == 'x')") == [("attributes", "gpu.nvidia.com")]
    assert paths("device.attributes['a' + 'b'].c == 1") == [("attributes",)]
    assert paths("cel.bind(d, device, d.driver == 'x')") == [()]
    assert paths("[1].exists(device, device == 1)") == [()]
    assert paths("'memory' + 'x' in device.capacity['gpu.nvidia.com']") == [("capacity", "gpu.nvidia.com")]
    assert paths("has(device.attributes.x.y)") == [("attributes", "x", "y")]
    assert paths("true") == []


def test_device_key_tells_apart_what_cel_could_tell_apart() -> None:
    from dra_migrate.cel import DeviceView, parse_quantity
    from dra_migrate.cel.projection import device_key

    read = frozenset({("attributes", "d", "a"), ("capacity", "d", "m")})

    def key(a: object, m: str = "1Gi", **other: object) -> tuple[object, ...]:
        view = DeviceView("drv", attributes={"d": {"a": a, **other}},  # type: ignore[dict-item]
                          capacity={"d": {"m": parse_quantity(m)}})
        return device_key(view, read)

    assert key(1) == key(1, uuid="x") == key(1, uuid="y")  # an attribute it does not read
    assert key(1) != key(True)
    assert key(1) != key(2)
    assert key("1") != key(1)
    assert key(1, "1Gi") != key(1, "1024Mi")  # equal quantities, different spelling
    assert device_key(DeviceView("drv"), read) == device_key(DeviceView("drv", attributes={"d": {}}), read)


@pytest.mark.parametrize(("device_class", "expression"), [s for s in SELECTORS if s[0] != "unknown.example.com"])
def test_devices_with_equal_keys_evaluate_alike(device_class: str, expression: str) -> None:
    from dra_migrate.cel import CelCompileError
    from dra_migrate.cel.projection import device_key

    try:
        selector = compile_selector(expression)
    except CelCompileError:
        return
    outcomes: dict[tuple[object, ...], set[object]] = {}
    for device in nvidia_cel_devices():
        try:
            outcome: object = selector.evaluate(device)
        except CelEvalError as exc:
            outcome = exc.message
        outcomes.setdefault(device_key(device.view, selector.device_paths), set()).add(outcome)
    assert all(len(seen) == 1 for seen in outcomes.values())


@pytest.mark.parametrize("strict", [True, False])
def test_no_bundled_schema_reads_the_dynamic_scope(strict: bool) -> None:
    """The `$ref` memo of validate/schema.py shares resolvers between visits: sound only while no schema uses
    `$dynamicRef`/`$dynamicAnchor` (or the 2019-09 recursive pair), which read the dynamic scope."""
    import json

    from dra_migrate.check.validate.schema import _bundled_versions, _definitions

    for release in sorted(_bundled_versions()):
        text = json.dumps(_definitions(release, strict))
        for keyword in ("$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor"):
            assert f'"{keyword}"' not in text, (release, keyword)
