"""Every object the migration emits or changes validates against the official schema of the target."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden_runner import run_case
from tests.oracle import documents, schema_errors
from tests.test_golden import CASES

TARGETS = ["1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_outputs_validate(case: Path, target: str, tmp_path: Path) -> None:
    files, _diags, code = run_case(case, tmp_path, target=target)
    if code != 1:
        pytest.skip("nothing changed")
    checked = 0
    for name, data in files.items():
        original = (case / name).read_bytes() if (case / name).exists() else b""
        for obj in documents(data, name):
            if name.startswith("input") and original and obj.get("kind") not in ("ResourceClaimTemplate",):
                if obj in documents(original, name):
                    continue  # untouched input objects are the user's business
            err = schema_errors(obj, target)
            assert err is None, err
            checked += 1
    assert checked > 0


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
