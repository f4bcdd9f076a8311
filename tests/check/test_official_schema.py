"""Every object the migration emits or changes validates against the official schema of the target."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.test_golden import CASES
from tests.golden_runner import run_case
from tests.oracle import documents, schema_errors

TARGETS = ["1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]


# Cases whose output needs a feature some targets lack (with the case's own --feature-gates): there the run must
# refuse with this diagnostic and write nothing, instead of emitting objects the API server would reject.
NEEDS_FEATURE: dict[str, dict[str, str]] = {
    "version-bridge": {"1.32": "DRA605", "1.33": "DRA605", "1.34": "DRA606", "1.35": "DRA606"},
    "version-bridge-1.34-gates": {"1.32": "DRA605", "1.33": "DRA605"},
    "corpus-gpu-full-bridge": {"1.32": "DRA605", "1.33": "DRA605"},
    "sharing-consumable": {"1.32": "DRA605", "1.33": "DRA605", "1.34": "DRA606", "1.35": "DRA606"},
    "sharing-consumable-unsupported": {"1.32": "DRA605", "1.33": "DRA605", "1.34": "DRA606", "1.35": "DRA606"},
    "version-bridge-1.33-refused": {"1.32": "DRA605", "1.33": "DRA605"},  # its gates turn it on from 1.34
    "version-bridge-class-in-repo": {"1.32": "DRA605", "1.33": "DRA605", "1.34": "DRA606", "1.35": "DRA606"},
    "version-bridge-init-1.34": {"1.32": "DRA605", "1.33": "DRA605"},  # DRAExtendedResource=true from 1.34
    "version-bridge-init-1.35": {"1.32": "DRA605", "1.33": "DRA605"},
}
TARGET_REFUSALS = ("DRA605", "DRA606", "DRA607")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_outputs_validate(case: Path, target: str, tmp_path: Path) -> None:
    files, diags, code = run_case(case, tmp_path, target=target)
    refusals = set(re.findall(r"\berror (DRA60[5-7])\b", diags))
    expected = NEEDS_FEATURE.get(case.name, {}).get(target)
    if expected is not None:
        assert code == 2
        assert refusals == {expected}, diags
        assert sorted(files) == sorted(f.name for f in case.iterdir() if f.name.startswith("input")), "wrote output"
        return
    assert not refusals, diags
    if code != 1:
        pytest.skip("nothing changed")
    checked = 0
    patches = _kustomize_patch_files(case)
    for name, data in files.items():
        if name in patches:
            continue  # a kustomize patch is a partial object: what it builds is tests/run/test_kustomize_builds.py's
        original = (case / name).read_bytes() if (case / name).exists() else b""
        for obj in documents(data, name):
            if not (isinstance(obj.get("apiVersion"), str) and isinstance(obj.get("kind"), str)):
                continue  # not an API object: a kustomization or a kustomize transformer configuration
            untouched = obj.get("kind") != "ResourceClaimTemplate" and obj in documents(original, name)
            if name.startswith("input") and original and untouched:
                continue  # untouched input objects are the user's business
            err = schema_errors(obj, target)
            assert err is None, err
            checked += 1
    assert checked > 0


def _kustomize_patch_files(case: Path) -> set[str]:
    """The files of a case's input tree that its kustomizations list as patches (relative to the case)."""
    from dra_migrate.run.integrations import kustomize

    out: set[str] = set()
    for k_file in (case / "input").rglob("*") if (case / "input").is_dir() else ():
        k = kustomize.load(k_file, str(k_file)) if k_file.name in kustomize.KUSTOMIZATION_NAMES else None
        for e in k.patches if k is not None else ():
            if e.path is not None:
                out.add(e.path.relative_to(case.resolve()).as_posix())
    return out


def test_api_version_per_target(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.name == "multi-container")
    seen = {}
    for target in ("1.32", "1.33", "1.34"):
        work = tmp_path / target
        work.mkdir()
        files, _d, _c = run_case(case, work, target=target)
        rct = [o for o in documents(files["input.yaml"], "input.yaml") if o["kind"] == "ResourceClaimTemplate"]
        seen[target] = rct[0]["apiVersion"]
        req = rct[0]["spec"]["spec"]["devices"]["requests"][0]
        assert ("exactly" in req) == (target != "1.32")
    assert seen == {
        "1.32": "resource.k8s.io/v1beta1",
        "1.33": "resource.k8s.io/v1beta2",
        "1.34": "resource.k8s.io/v1",
    }
