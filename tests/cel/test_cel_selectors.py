import pytest

from dra_migrate.cel import (
    CelCompileError,
    CelEvalError,
    DeviceView,
    compile_selector,
    device_from_slice,
    parse_quantity,
    parse_semver,
)

NV = "device.attributes['gpu.nvidia.com']"


@pytest.fixture
def gpu() -> DeviceView:
    return device_from_slice(
        {
            "name": "gpu-0",
            "attributes": {
                "type": {"string": "gpu"},
                "productName": {"string": "NVIDIA A100-SXM4-80GB"},
                "cudaComputeCapability": {"version": "8.0.0"},
                "driverVersion": {"version": "550.107.2"},
                "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
                "cores": {"int": 108},
                "mig": {"bool": False},
            },
            "capacity": {"memory": {"value": "80Gi"}},
        },
        "gpu.nvidia.com",
    )


def ev(expr: str, dev: DeviceView) -> bool:
    return compile_selector(expr).evaluate(dev)


def test_device_from_slice_domains(gpu: DeviceView) -> None:
    assert gpu.attributes["gpu.nvidia.com"]["productName"] == "NVIDIA A100-SXM4-80GB"
    assert gpu.attributes["resource.kubernetes.io"]["pcieRoot"] == "pci0000:00"
    assert gpu.attributes["gpu.nvidia.com"]["driverVersion"] == parse_semver("550.107.2")
    assert gpu.capacity["gpu.nvidia.com"]["memory"] == parse_quantity("80Gi")
    beta1 = device_from_slice({"name": "d", "basic": {"capacity": {"memory": "1Gi"}}}, "x.example.com")
    assert beta1.capacity["x.example.com"]["memory"] == parse_quantity("1024Mi")


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", True),
        (f"{NV}.productName.lowerAscii().matches('^.*a100.*$')", True),
        (f"{NV}.productName.upperAscii() == 'NVIDIA A100-SXM4-80GB'", True),
        (f"{NV}.productName.replace('NVIDIA ', '') == 'A100-SXM4-80GB'", True),
        (f"{NV}.productName.split('-')[1] == 'SXM4'", True),
        (f"{NV}.productName.substring(7, 11) == 'A100'", True),
        (f"{NV}.productName.indexOf('A100') == 7 && {NV}.productName.lastIndexOf('0') == 18", True),
        (f"{NV}.productName.charAt(0) == 'N'", True),
        ("'  x '.trim() == 'x' && ['a', 'b'].join('-') == 'a-b'", True),
        ("device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('40Gi'))", True),
        ("device.capacity['gpu.nvidia.com'].memory == quantity('81920Mi')", True),
        ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0", True),
        (f"{NV}.driverVersion.compareTo(semver('550.0.0')) >= 0", True),
        (f"{NV}.driverVersion.isLessThan(semver('v560', true)) && isSemver('v1.0.0', true)", True),
        (f"{NV}.cudaComputeCapability == semver('8.0.0')", True),
        (f"{NV}.cudaComputeCapability.major() == 8 && {NV}.cudaComputeCapability.minor() == 0", True),
        (f"{NV}.cores > 100 && {NV}.cores < 108.5 && !{NV}.mig", True),
        ("device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:00'", True),
        (f"cel.bind(g, {NV}, g.type == 'gpu' && g.cores == 108)", True),
        ("sets.contains(['a', 'b'], ['a']) && !sets.intersects(['a'], ['c'])", True),
        ("quantity('1Gi') == quantity('1024Mi')", True),
        ("sign(quantity('-1')) == -1 && quantity('50k').asInteger() == 50000", True),
        (f"{NV}.type == 'mig'", False),
        # String on the left of a version: cel-go String.Equal says false.
        (f"'550.107.2' == {NV}.driverVersion", False),
    ],
)
def test_selectors(gpu: DeviceView, expr: str, expected: bool) -> None:
    assert ev(expr, gpu) is expected


def test_missing_attribute_is_an_error_unknown_domain_is_empty(gpu: DeviceView) -> None:
    with pytest.raises(CelEvalError, match="no such key: index"):
        ev(f"{NV}.index == 0", gpu)
    with pytest.raises(CelEvalError, match="no such key: index"):
        ev("device.attributes['other.example.com'].index == 0", gpu)
    assert ev("size(device.attributes['other.example.com']) == 0", gpu) is True
    assert ev("!('other.example.com' in device.attributes)", gpu) is True


def test_guards(gpu: DeviceView) -> None:
    assert ev(f"'index' in {NV} && {NV}.index == 0", gpu) is False
    assert ev(f"!('index' in {NV}) || {NV}.index == 0", gpu) is True
    assert ev(f"has({NV}.index) && {NV}.index == 0", gpu) is False
    assert ev(f"has({NV}.type)", gpu) is True
    # Errors are absorbed by the other operand, in either order (CEL commutative logic).
    assert ev(f"{NV}.index == 0 && false", gpu) is False
    assert ev(f"{NV}.index == 0 || true", gpu) is True


def test_semver_only_compares_with_semver(gpu: DeviceView) -> None:
    with pytest.raises(CelEvalError, match="no such overload"):
        ev(f"{NV}.driverVersion == '550.107.2'", gpu)
    with pytest.raises(CelCompileError, match="_<_"):
        compile_selector("semver('1.0.0') < semver('2.0.0')")
    with pytest.raises(CelCompileError, match="_<_"):
        compile_selector("quantity('1') < quantity('2')")


def test_non_bool_result(gpu: DeviceView) -> None:
    with pytest.raises(CelEvalError, match="could not be converted to bool"):
        ev(f"{NV}.cores", gpu)
    with pytest.raises(CelCompileError, match="must evaluate to bool"):
        compile_selector("device.driver")


def test_runtime_library_errors(gpu: DeviceView) -> None:
    with pytest.raises(CelEvalError, match="cannot convert value to integer"):
        ev("quantity('1.5').asInteger() == 1", gpu)
    with pytest.raises(CelEvalError):
        ev("quantity('1,5').isInteger()", gpu)
    with pytest.raises(CelEvalError, match="index out of range"):
        ev("'abc'.charAt(4) == ''", gpu)


@pytest.mark.parametrize(
    ("expr", "message", "column"),
    [
        ("device.driver ==", "syntax error", 15),
        ("foo(1)", "undeclared reference to 'foo'", 1),
        ("x == 1", "undeclared reference to 'x'", 1),
        ("device.foo == 'a'", "undefined field 'foo'", 8),
        ("device.driver == 1", "no matching overload for '_==_'", 1),
        ("quantity(1).isInteger()", "no matching overload for 'quantity'", 1),
        ("quantity('1').sign() == 1", "no matching overload for 'sign'", 15),
        ("device.driver.isGreaterThan(semver('1.0.0'))", "no matching overload for 'isGreaterThan'", 15),
        ("device.driver.matches('(')", "invalid regular expression", 23),
        ("device.driver == 'a\\q'", "invalid escape", 18),
        ("has(device)", "invalid argument to has()", 1),
    ],
)
def test_compile_errors(expr: str, message: str, column: int) -> None:
    with pytest.raises(CelCompileError, match=message) as info:
        compile_selector(expr)
    assert info.value.expression == expr
    assert info.value.line == 1
    assert info.value.column == column


def test_compile_is_cached() -> None:
    compile_selector.cache_clear()
    a = compile_selector("device.driver == 'gpu.nvidia.com'")
    b = compile_selector("device.driver == 'gpu.nvidia.com'")
    assert a is b
    assert compile_selector.cache_info().hits == 1


def test_allow_multiple_allocations_needs_gate() -> None:
    dev = DeviceView(driver="d.example.com", allow_multiple_allocations=True)
    assert compile_selector("device.allowMultipleAllocations == true").evaluate(dev) is True
    with pytest.raises(CelCompileError, match="undefined field"):
        compile_selector("device.allowMultipleAllocations", consumable_capacity=False)


def test_expression_length_limit() -> None:
    with pytest.raises(CelCompileError, match="longer than"):
        compile_selector("true || " * 1400 + "true")
