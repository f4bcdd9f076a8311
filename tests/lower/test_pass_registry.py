"""The lowering passes' declarations (`PASS = Pass(...)` in each module of dra_migrate.lower.passes): how they are
collected and ordered, what a broken declaration says, and that the declarations agree with the code."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import sys
import textwrap
from pathlib import Path

import pytest

import dra_migrate.lower.passes as passes_pkg
from dra_migrate.config import Options
from dra_migrate.diagnostics.codes import CODES
from dra_migrate.frontend.effects import EFFECTS
from dra_migrate.lower.context import RunContext
from dra_migrate.lower.pass_spec import Pass, PassRegistryError, collect, order
from dra_migrate.lower.passes import NON_GPU_CHECKS, PASSES, SIDE_EFFECTS, other_schemes
from dra_migrate.pipeline import process_source
from dra_migrate.ruleset import resources

# The order of the hand-kept list the declarations replaced: the output of every run depends on it.
ORDER_BEFORE = [
    "already-dra", "other-schemes", "provider-features", "sharing", "mig", "share-within-pod", "gpu-requests",
    "init-containers", "selection", "shared-claim", "toleration", "ray-num-gpus", "appwrapper-autopilot",
]


def test_the_declarations_give_the_order_of_the_list_they_replaced() -> None:
    assert [p.name for p in PASSES] == ORDER_BEFORE


def test_every_module_of_the_package_but_helpers_is_a_pass() -> None:
    modules = sorted(p.stem for p in Path(passes_pkg.__file__).parent.glob("*.py") if not p.stem.startswith("_"))
    declared = [sys.modules[f"{passes_pkg.__name__}.{m}"].PASS for m in modules]
    assert sorted(p.name for p in declared) == sorted(p.name for p in PASSES)


def test_non_gpu_checks_and_side_effects_come_from_the_declarations() -> None:
    assert (other_schemes.check_non_gpu,) == NON_GPU_CHECKS
    assert frozenset({"ray-num-gpus", "appwrapper-autopilot"}) | set(EFFECTS) == SIDE_EFFECTS


def test_declared_codes_are_registered_and_cover_what_the_modules_report() -> None:
    for p in PASSES:
        assert p.codes, p.name
        assert [c for c in p.codes if c not in CODES] == [], p.name
        assert len(set(p.codes)) == len(p.codes), p.name
    declared_by_module: dict[str, set[str]] = {}
    for p in PASSES:
        declared_by_module.setdefault(p.run.__module__, set()).update(p.codes)
    for module, declared in declared_by_module.items():
        source = inspect.getsource(sys.modules[module])
        reported = set(re.findall(r'diag\(\s*"(DRA\d{3})"', source))
        assert reported <= declared, (module, sorted(reported - declared))


def _reported_outside_declarations() -> set[str]:
    """Codes the package's source names as a string literal anywhere but in a `Pass(..., codes=...)` declaration:
    a declaration must not be what keeps a retired code looking alive (tests/diagnostics counts literals)."""
    package = Path(passes_pkg.__file__).resolve().parents[2]
    found: set[str] = set()
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        declared = {id(c) for node in ast.walk(tree) if isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name) and node.func.id == "Pass"
                    for kw in node.keywords if kw.arg == "codes" for c in ast.walk(kw.value)}
        found |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                  and re.fullmatch(r"DRA\d{3}", n.value) and id(n) not in declared}
    return found


def test_every_declared_code_is_reported_by_the_source_itself() -> None:
    declared = {c for p in PASSES for c in p.codes}
    assert sorted(declared - _reported_outside_declarations()) == []


def test_declared_options_are_groups_of_the_run_options() -> None:
    groups = {f.type for f in dataclasses.fields(Options)}
    for p in PASSES:
        if p.options is not None:
            assert p.options.__name__ in groups, p.name  # (the annotations are strings: postponed evaluation)
            assert dataclasses.is_dataclass(p.options) and p.options.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert {p.name for p in PASSES if p.options is not None} == {"sharing", "share-within-pod", "shared-claim"}


def test_options_have_no_untyped_bag_for_pass_settings() -> None:
    o = Options()
    assert not hasattr(o, "extra")
    assert o.sharing.strategy == "shared-claim" and not o.sharing.within_pod and o.dra_quota and not o.strict


def test_the_command_line_settings_fill_the_typed_options(tmp_path: Path) -> None:
    from dra_migrate.cli.settings import Settings, run_config
    from dra_migrate.config import SharingOptions

    s = Settings.defaults("migrate", [str(tmp_path)], sharing="exclusive", share_within_pod=True, no_dra_quota=True,
                          strict=True)
    o = run_config(s, "check").options
    assert (o.sharing, o.dra_quota, o.strict) == (SharingOptions("exclusive", within_pod=True), False, True)
    o = run_config(Settings.defaults("migrate", [str(tmp_path)]), "check").options
    assert (o.sharing, o.dra_quota, o.strict) == (SharingOptions(), True, False)


# --- collection and its errors, on a package made for the test -------------------------------------------------

def _noop(_tl: object, _ctx: object) -> None:
    return None


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, modules: dict[str, str]) -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    head = "from dra_migrate.lower.pass_spec import Pass\n\n\ndef run(tl, ctx):\n    return None\n\n\n"
    for module, body in modules.items():
        (root / f"{module}.py").write_text(head + textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    return root


def test_collect_imports_every_module_and_skips_helpers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _package(tmp_path, monkeypatch, "pkg_ok", {
        "b": 'PASS = Pass(name="b", run=run, after=("a",))\n',
        "a": 'PASS = Pass(name="a", run=run)\n',
        "c": 'PASS = Pass(name="c", run=run, after=("a",))\n',
        "_helpers": "X = 1  # no PASS: a helper\n",
    })
    assert [p.name for p in collect("pkg_ok", [str(root)])] == ["a", "b", "c"]


def test_a_module_without_a_declaration_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _package(tmp_path, monkeypatch, "pkg_missing", {"a": 'PASS = Pass(name="a", run=run)\n', "b": "X = 1\n"})
    with pytest.raises(PassRegistryError, match=r"pkg_missing\.b declares no `PASS = Pass\(...\)`"):
        collect("pkg_missing", [str(root)])


def test_a_declaration_that_is_not_a_pass_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _package(tmp_path, monkeypatch, "pkg_wrong", {"a": 'PASS = ("a", run)\n'})
    with pytest.raises(PassRegistryError, match=r"pkg_wrong\.a\.PASS is a tuple, not a Pass"):
        collect("pkg_wrong", [str(root)])


def test_a_name_declared_twice_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _package(tmp_path, monkeypatch, "pkg_twice", {"a": 'PASS = Pass(name="x", run=run)\n',
                                                          "b": 'PASS = Pass(name="x", run=run)\n'})
    with pytest.raises(PassRegistryError, match="pass 'x' is declared twice: in a and in b"):
        collect("pkg_twice", [str(root)])


def test_after_an_unknown_pass_is_an_error() -> None:
    with pytest.raises(PassRegistryError, match="pass 'a' \\(m\\) runs after 'nope', which no module declares"):
        order([("m", Pass("a", _noop, after=("nope",)))])


def test_a_cycle_is_an_error_naming_its_passes() -> None:
    declared = [("m1", Pass("a", _noop, after=("c",))), ("m2", Pass("b", _noop, after=("a",))),
                ("m3", Pass("c", _noop, after=("b",))), ("m4", Pass("d", _noop))]
    with pytest.raises(PassRegistryError, match="passes a, b, c form a cycle"):
        order(declared)
    with pytest.raises(PassRegistryError, match="passes a form a cycle"):
        order([("m", Pass("a", _noop, after=("a",)))])


def test_the_order_depends_on_the_declarations_only() -> None:
    """Ready passes go by name, whatever order the modules are listed in (pkgutil follows the file system)."""
    declared = [("m", Pass(p.name, p.run, after=p.after)) for p in PASSES]
    for listing in (declared, declared[::-1], sorted(declared, key=lambda d: d[1].name)):
        assert [p.name for p in order(listing)] == ORDER_BEFORE
    assert [p.name for p in order([("m", Pass("z", _noop)), ("m", Pass("b", _noop, after=("z", "z")))
                                   , ("m", Pass("a", _noop))])] == ["a", "z", "b"]


# --- the pre-pass's facts: one frozen object, the options untouched ---------------------------------------------

def test_a_run_hands_the_pre_pass_facts_over_and_leaves_its_options_as_given(tmp_path: Path) -> None:
    import copy
    import shutil

    from dra_migrate.lower.context import RepoFacts
    from dra_migrate.run.driver import RunConfig, run_migration

    golden = Path(__file__).resolve().parents[2] / "golden"
    for case in ("sharing-mps", "already-dra-backed"):
        for f in (golden / case).glob("input*.yaml"):
            shutil.copy(f, tmp_path / f"{case}-{f.name}")
    options = Options()
    given = copy.deepcopy(options)
    result = run_migration(RunConfig([str(tmp_path)], mode="check", options=options, jobs=1))
    assert options == given
    assert isinstance(result.facts, RepoFacts)
    assert not result.facts.sharing.empty  # the MPS config
    assert result.facts.scoped_classes  # the DeviceClass mapping an extended resource (with its scope)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.facts.names = None  # type: ignore[misc]


def test_a_resource_scheme_no_pass_translates_is_reported_and_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """DRA213 guards rules/resources.yaml: a scheme added there without a pass that translates it is reported
    and the template left as is, never dropped or counted as a full GPU. Every bundled scheme has a pass, so
    no golden shows it."""
    patterns = (*resources._patterns(), (re.compile(r"nvidia\.com/future"), "future"))
    monkeypatch.setattr(resources, "_patterns", lambda: patterns)
    resources.classify.cache_clear()
    try:
        raw = (b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: app\n"
               b"    image: cuda\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
               b"        nvidia.com/future: 1\n")
        fr = process_source("pod.yaml", raw, RunContext(Options()))
    finally:
        resources.classify.cache_clear()
    assert [(d.code, d.location.line) for d in fr.diagnostics if d.code == "DRA213"] == [("DRA213", 12)]
    assert fr.output is None
