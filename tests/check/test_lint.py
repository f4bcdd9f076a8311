"""Scheduling lints (DRA802-DRA806) in `migrate`: emitted and existing DRA objects, across files."""

from __future__ import annotations

import textwrap
from pathlib import Path

from dra_migrate.check.lint import published_names
from dra_migrate.config import Options
from dra_migrate.run.driver import RunConfig, run_migration

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {replicas}
{strategy}  template:
    spec:
      containers:
      - {{name: c, image: x}}
      resourceClaims:
      - {{name: gpu, {ref}}}
"""

FIRST_AVAILABLE_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: fa}
spec:
  spec:
    devices:
      requests:
      - name: g
        firstAvailable:
        - name: a100
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"}
        - {name: any, deviceClassName: gpu.nvidia.com}
"""


def codes(tmp_path: Path, files: dict[str, str], target: str = "1.34") -> list[tuple[str, str]]:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    result = run_migration(RunConfig([str(tmp_path)], mode="check", options=Options(target_version=target)))
    return [(d.code, d.object) for d in result.all_diagnostics if d.code.startswith("DRA8")]


def deployment(replicas: int = 2, strategy: str = "", ref: str = "resourceClaimTemplateName: fa") -> str:
    return DEPLOYMENT.format(replicas=replicas, strategy=strategy, ref=ref)


def test_surge_with_first_available_across_files(tmp_path: Path) -> None:
    found = codes(tmp_path, {"dep.yaml": deployment(), "claims.yaml": FIRST_AVAILABLE_TEMPLATE})
    assert found == [("DRA802", "Deployment/web")]


def test_no_surge_no_lint(tmp_path: Path) -> None:
    no_surge = "  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}\n"
    recreate = "  strategy: {type: Recreate}\n"
    for strategy in (no_surge, recreate):
        files = {"dep.yaml": deployment(strategy=strategy), "claims.yaml": FIRST_AVAILABLE_TEMPLATE}
        assert codes(tmp_path, files) == []


def test_unpublished_attribute_in_existing_claim(tmp_path: Path) -> None:
    claim = """\
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: pinned}
    spec:
      devices:
        requests:
        - name: g
          exactly:
            deviceClassName: gpu.nvidia.com
            selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].index == 0"}}]
    """
    before = textwrap.dedent(claim)
    found = codes(tmp_path, {"claim.yaml": claim})
    assert found == [("DRA803", "ResourceClaim/pinned")]
    assert (tmp_path / "claim.yaml").read_text(encoding="utf-8") == before  # linted, never changed
    assert "index" not in published_names() and "productName" in published_names()


def test_existing_selector_matching_nothing_and_too_many_devices(tmp_path: Path) -> None:
    claim = """\
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: big}
    spec:
      devices:
        requests:
        - name: g
          exactly:
            deviceClassName: gpu.nvidia.com
            count: 40
            selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA Z9'"}}]
    """
    assert codes(tmp_path, {"claim.yaml": claim}) == [
        ("DRA801", "ResourceClaim/big"),
        ("DRA804", "ResourceClaim/big"),
    ]


def test_existing_device_class_selector_error(tmp_path: Path) -> None:
    dc = """\
    apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: broken}
    spec:
      selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].productName =="}}]
    """
    assert codes(tmp_path, {"dc.yaml": dc}) == [("DRA806", "DeviceClass/broken")]


def test_shared_claim_over_reserved_for_limit_counts_every_workload(tmp_path: Path) -> None:
    claim = """\
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: shared}
    spec:
      devices:
        requests:
        - {name: g, exactly: {deviceClassName: gpu.nvidia.com}}
    """
    files = {
        "a.yaml": deployment(20, ref="resourceClaimName: shared"),
        "b.yaml": deployment(20, ref="resourceClaimName: shared").replace("name: web", "name: api"),
        "claim.yaml": claim,
    }
    # 40 pods: over the 1.32 limit (32), within the 1.33+ limit (256)
    assert codes(tmp_path, files, "1.32") == [("DRA805", "ResourceClaim/shared")]
    assert codes(tmp_path, files, "1.34") == []


def test_lint_view_keeps_what_the_lints_read_and_drops_the_rest() -> None:
    import yaml

    from dra_migrate.check.lint import lint_view
    from dra_migrate.ruleset.kinds import load_kind_rules

    rules = load_kind_rules()
    dep = yaml.safe_load(deployment(strategy="  strategy: {type: Recreate}\n"))
    view = lint_view(dep, rules)
    assert view is not None
    assert view["spec"]["replicas"] == 2 and view["spec"]["strategy"] == {"type": "Recreate"}
    assert view["spec"]["template"]["spec"] == {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "fa"}]}
    assert dep["spec"]["template"]["spec"]["containers"], "the object itself is not changed"
    template = yaml.safe_load(FIRST_AVAILABLE_TEMPLATE)
    assert lint_view(template, rules) is template
    assert lint_view({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}, rules) is None


def test_lints_on_views_equal_lints_on_whole_objects() -> None:
    # every golden output: the lints see the same thing whether given whole objects or their views
    import yaml

    from dra_migrate.check.lint import SeenObject, lint_objects, lint_view
    from dra_migrate.ruleset.kinds import load_kind_rules

    rules = load_kind_rules()
    whole: list[SeenObject] = []
    views: list[SeenObject] = []
    golden = Path(__file__).parents[2] / "golden"
    for f in sorted(golden.glob("*/expected/*.yaml")):
        try:
            docs = [d for d in yaml.safe_load_all(f.read_text(encoding="utf-8")) if isinstance(d, dict)]
        except (yaml.YAMLError, UnicodeDecodeError):  # the goldens of invalid input
            continue
        for i, d in enumerate(docs):
            objs = d["items"] if d.get("kind") == "List" and isinstance(d.get("items"), list) else [d]
            for o in objs:
                if isinstance(o, dict):
                    whole.append(SeenObject(o, str(f), i))
                    v = lint_view(o, rules)
                    if v is not None:
                        views.append(SeenObject(v, str(f), i))
    assert len(whole) > 100
    expected = lint_objects(whole, rules, "1.34")
    assert expected, "the goldens exercise some lints"
    assert lint_objects(views, rules, "1.34") == expected
