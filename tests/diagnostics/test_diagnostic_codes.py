"""The code registry (rules/codes.yaml, read by dra_migrate.diagnostics.codes) and the source agree.

- every live code is emitted somewhere in dra_migrate/ (a string literal that is exactly the code, or a code in
  the data of a rules file the source emits from), and every code the source emits is registered and live;
- every code is documented (name, summary, explanation), and what README.md says about codes stays true;
- every live code is exercised by at least one golden case (golden/*/diagnostics.txt), or is listed in
  NO_GOLDEN with the reason no golden case can show it;
- retired codes stay registered (codes are never reused), are not emitted and are not listed by `rules`.

The file's schema is checked with the other bundled files by tests/ruleset/test_bundled_rules.py.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dra_migrate.cli.rules_cmd import explain_code
from dra_migrate.diagnostics import codes
from dra_migrate.diagnostics.codes import CODES, REGISTERED, registered_names
from dra_migrate.diagnostics.model import Location, make
from tests.conftest import GOLDEN, REPO

PKG = REPO / "dra_migrate"
RULES = REPO / "rules"
CODE = re.compile(r"DRA\d{3}")

# Live codes no golden case can show, each with the reason. A code that a golden case comes to show must leave
# this list (test_no_golden_exemption_is_stale).
NO_GOLDEN: dict[str, str] = {
    # hostile inputs that the suite's own walkers over golden inputs (tests/lower/test_pod_demand.py, …) cannot load
    # or walk: tests/hostile/ holds them (tests/e2e/test_hostile.py checks file, code and line)
    "DRA107": "an alias bomb: walking its loaded data visits 9^9 nodes (tests/hostile/alias-bomb.yaml)",
    "DRA114": "a recursive alias: its loaded data is a cycle (tests/hostile/recursive-alias.yaml)",
    "DRA106": "an unreadable path (no read permission, a named pipe, a device): git cannot hold one, and root "
              "reads any file (tests/emit/test_safety.py)",
    "DRA111": "a read-only file: git keeps no write bits, and root writes any file (tests/emit/test_safety.py)",
    "DRA116": "the run interrupted by SIGINT/SIGTERM (tests/emit/test_safety.py)",
    "DRA213": "internal guard: every resource scheme in rules/resources.yaml has a pass that translates it; a scheme "
              "added without one is reported (tests/lower/test_pass_registry.py provokes it)",
    "DRA312": "internal safety check: an emitted CEL selector that does not compile is a dra-migrate bug "
              "(tests/check/test_prewrite_cache.py provokes it)",
    "DRA313": "internal safety check: an emitted CEL selector failing on a device shape is a dra-migrate bug "
              "(tests/check/test_prewrite_cache.py provokes it)",
    "DRA601": "internal safety check: emitted objects take the resource.k8s.io version the target serves, and a "
              "migrated object keeps its own apiVersion (an unserved one is the user's, not reported); "
              "tests/check/test_official_schema.py",
    "DRA607": "internal safety check: GPU selection emits only CEL functions every supported target offers "
              "(semver('x') with one argument, compareTo); tests/check/test_target_features.py checks objects "
              "that call others",
    "DRA708": "a kustomize file that changes between the check before translation and the end of the run, or "
              "--output-dir with a kustomization outside the given paths: the golden runner writes in place",
    "DRA901": "internal safety check: the migrated text differs from the intended change only through a bug "
              "(tests/emit/test_safety.py, the fuzz tests)",
    "DRA902": "an unexpected exception: only a bug raises one (tests/e2e/test_hostile.py, the fuzz tests)",
    "DRA903": "internal safety check: a second migration changing the output is a bug (the fuzz tests)",
}

# Codes retired so far, and never to be reused; a newly retired code is added here and in rules/codes.yaml.
RETIRED = {"DRA211", "DRA214", "DRA215", "DRA217", "DRA315", "DRA516"}


def _python_sources() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def _rule_files() -> list[Path]:
    """rules/ files the source emits from: every bundled rules file but the registry itself."""
    return sorted(p for p in RULES.rglob("*.y*ml") if p != RULES / "codes.yaml")


def _strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for k, v in data.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(data, list):
        for v in data:
            yield from _strings(v)


def emitted_codes() -> dict[str, list[str]]:
    """Every code the source can emit, with where: a Python string literal that is exactly a code (what
    make/diag/report/refuse are given), or a rules-file value that is exactly a code."""
    out: dict[str, list[str]] = {}
    for path in _python_sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.fullmatch(node.value):
                out.setdefault(node.value, []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    for path in _rule_files():
        for value in _strings(yaml.safe_load(path.read_text(encoding="utf-8"))):
            if CODE.fullmatch(value):
                out.setdefault(value, []).append(str(path.relative_to(REPO)))
    return out


def mentioned_codes() -> dict[str, list[str]]:
    """Every code named anywhere in the source's strings and comments and in the rules files (messages that
    refer to another code, docstrings, comments)."""
    out: dict[str, list[str]] = {}
    for path in [*_python_sources(), *_rule_files()]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for code in CODE.findall(line):
                out.setdefault(code, []).append(f"{path.relative_to(REPO)}:{n}")
    return out


def golden_codes() -> set[str]:
    return {c for f in GOLDEN.glob("*/diagnostics.txt") for c in CODE.findall(f.read_text(encoding="utf-8"))}


def test_every_live_code_is_emitted_somewhere() -> None:
    emitted = emitted_codes()
    assert sorted(set(CODES) - set(emitted)) == [], (
        "registered but never emitted: retire them in rules/codes.yaml (`retired: why`), never delete them")


def test_every_emitted_code_is_registered_and_live() -> None:
    emitted = emitted_codes()
    unknown = {c: where for c, where in emitted.items() if c not in CODES}
    assert unknown == {}, "emitted but not registered (or retired): add them to rules/codes.yaml"


def test_every_code_named_in_the_source_is_registered() -> None:
    unknown = {c: where for c, where in mentioned_codes().items() if c not in REGISTERED}
    assert unknown == {}


def test_retired_codes_stay_registered_and_out_of_emission() -> None:
    assert {c for c, info in REGISTERED.items() if info.retired} == RETIRED
    assert RETIRED.isdisjoint(CODES)
    assert set(CODES) | RETIRED == set(REGISTERED)
    assert RETIRED.isdisjoint(emitted_codes())
    with pytest.raises(KeyError):
        make("DRA217", "never", Location("f.yaml"))


def test_every_code_is_documented() -> None:
    names = [c.name for c in REGISTERED.values()]
    assert len(set(names)) == len(names), "two codes share a name"
    for code in REGISTERED.values():
        assert code.code == code.code.strip() and CODE.fullmatch(code.code)
        assert code.summary.strip() and "\n" not in code.summary and code.summary.endswith("."), code.code
        assert code.explanation.strip() and code.explanation.endswith((".", ")")), code.code
        assert not code.summary.startswith("Retired"), f"{code.code}: say it with `retired:`, not in the summary"
        if code.retired:
            assert "\n" not in code.retired and not code.unmigrated, code.code


def test_the_registry_file_lists_the_codes_in_order() -> None:
    listed = list(REGISTERED)
    assert listed == sorted(listed)
    # the fast path reads the codes from the file's text (codes.registered_names); it must find them all
    assert registered_names() == set(REGISTERED)


def test_every_live_code_has_a_golden_case() -> None:
    missing = sorted(set(CODES) - golden_codes() - set(NO_GOLDEN))
    assert missing == [], "add a golden case (golden/<case>/) that shows these codes, or say in NO_GOLDEN why not"


def test_no_golden_exemption_is_stale() -> None:
    assert set(NO_GOLDEN) <= set(CODES)
    assert sorted(set(NO_GOLDEN) & golden_codes()) == [], "a golden case shows these now: drop their exemption"
    assert all(reason.strip() for reason in NO_GOLDEN.values())


def test_golden_cases_name_only_live_codes() -> None:
    assert sorted(golden_codes() - set(CODES)) == []


def test_readme_names_registered_codes_and_says_which_are_retired() -> None:
    for paragraph in (REPO / "README.md").read_text(encoding="utf-8").split("\n\n"):
        for code in CODE.findall(paragraph):
            assert code in REGISTERED, f"README.md: {code} is not a code: {paragraph[:80]!r}"
            if code in RETIRED:
                assert "retired" in paragraph.lower(), f"README.md: {code} is retired; say so: {paragraph[:80]!r}"


def test_rules_lists_the_live_codes_and_explain_documents_every_code() -> None:
    proc = subprocess.run([sys.executable, "-m", "dra_migrate", "rules"], capture_output=True, text=True,
                          check=True, cwd=REPO)
    listed = [line.split()[0] for line in proc.stdout.splitlines()]
    assert listed == list(CODES)
    for code in REGISTERED.values():
        text = explain_code(code.code)
        assert text is not None and code.summary in text and code.explanation in text
        assert ("Retired: " in text) == bool(code.retired)


def test_the_registry_loads_without_schema_validation() -> None:
    """A pre-commit run reads the registry; validating it is the test suite's job
    (tests/ruleset/test_bundled_rules.py)."""
    probe = ("import sys; import dra_migrate.diagnostics.model as m; assert 'yaml' not in sys.modules; "
             "from dra_migrate.diagnostics.codes import CODES, registered_names; registered_names(); "
             "assert 'yaml' not in sys.modules; CODES['DRA201']; "
             "assert 'jsonschema' not in sys.modules and 'jsonschema_rs' not in sys.modules")
    subprocess.run([sys.executable, "-c", probe], check=True, cwd=REPO)


def test_the_diagnostic_model_and_the_registry_do_not_import_each_other_in_a_cycle() -> None:
    tree = ast.parse(Path(codes.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "dra_migrate.diagnostics.model" not in imported
