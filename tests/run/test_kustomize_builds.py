"""What the user deploys is the built output: real `kubectl kustomize` builds before and after the migration.

For every kustomization of a tree (each golden case with an `input/` tree, the corpus' kustomize sample, and
trees made here), the build after the migration must:
- build (with --load-restrictor LoadRestrictionsNone, as overlays that load ../ files need);
- hold every object the build before held, by kind, namespace and name;
- resolve every resourceClaimTemplateName/resourceClaimName to an object of the build, in the pod's namespace;
- never have a container that requests both a claim and an NVIDIA extended resource;
- give every container the GPU count it had before (claims: the count of each request it names);
- keep, through the pod-equivalence oracle (tests/equivalence) on the built objects, the node set each GPU pod
  fits on, the devices per container and the pod-level demand.
Tests that need kubectl skip when it is absent (`.ci/run` installs it where a registry has it).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dra_migrate.run.driver import RunConfig, run_migration
from dra_migrate.source.discover import KUSTOMIZATION_NAMES
from tests.conftest import GOLDEN, require_shared
from tests.equivalence import properties as P
from tests.equivalence.manifests import at, kind_rules, pod_templates

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl absent: the built-output checks need "
                                   "`kubectl kustomize` (install kubectl, or run .ci/run)")
GPU_PREFIXES = ("nvidia.com/gpu", "nvidia.com/mig-")
Key = tuple[str, str, str]


def built(root: Path) -> str:
    assert KUBECTL is not None
    out = subprocess.run([KUBECTL, "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(root)],
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, f"kubectl kustomize {root} failed: {out.stderr}"
    return out.stdout


def build(root: Path) -> list[dict[str, Any]]:
    return _objects(built(root))


def kustomizations(tree: Path) -> Iterator[Path]:
    for p in sorted(tree.rglob("*")):
        if p.name in KUSTOMIZATION_NAMES and "kind: Component" not in p.read_text():
            yield p.parent


def _key(o: dict[str, Any]) -> Key:
    meta = o.get("metadata") or {}
    return str(o.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name"))


def _gpus(c: dict[str, Any]) -> int:
    res = c.get("resources") or {}
    for section in ("limits", "requests"):
        for k, v in (res.get(section) or {}).items():
            if str(k).startswith(GPU_PREFIXES):
                return int(v)
    return 0


def _request_count(req: dict[str, Any]) -> int:
    body = req.get("exactly") or (req.get("firstAvailable") or [req])[0]
    return int(body.get("count", 1))


def _claimed(c: dict[str, Any], spec: dict[str, Any], templates: dict[str, dict[str, Any]]) -> int:
    """GPUs a container gets through its claims: the count of each request it names (all, if it names none)."""
    entries = {e["name"]: e for e in spec.get("resourceClaims") or []}
    total = 0
    for claim in (c.get("resources") or {}).get("claims") or []:
        entry = entries[claim["name"]]
        obj = templates[entry.get("resourceClaimTemplateName") or entry.get("resourceClaimName")]
        devices = (obj["spec"].get("spec") or obj["spec"])["devices"]
        for req in devices["requests"]:
            if claim.get("request") in (None, req["name"]):
                total += _request_count(req)
    return total


def check_builds(before_tree: Path, after_tree: Path) -> int:
    """Every property above, for every kustomization of the trees; the number of GPU containers checked."""
    checked = 0
    rules = kind_rules()
    for root in kustomizations(before_tree):
        rel = root.relative_to(before_tree)
        before_text, after_text = built(root), built(after_tree / rel)
        case = P.Case(f"build/{rel}", {"build.yaml": before_text.encode()}, {"build.yaml": after_text.encode()}, "",
                      {}, None)
        for prop in ("node-set", "container-devices", "pod-demand"):
            if P.applies(case, prop):
                assert P.check(case, prop) == [], f"{rel}: {prop}"
        before = {_key(o): o for o in _objects(before_text)}
        after = {_key(o): o for o in _objects(after_text)}
        assert set(before) <= set(after), f"{rel}: objects missing after: {set(before) - set(after)}"
        for key, obj in after.items():
            if key not in before:
                assert key[0] in ("ResourceClaimTemplate", "ResourceClaim"), f"{rel}: new object {key}"
            ns = key[1]
            claims = {k[2]: o for k, o in after.items() if k[0] in ("ResourceClaimTemplate", "ResourceClaim")
                      and k[1] == ns}
            for template in pod_templates(obj, rules)[0]:
                path, spec = template.path, template.spec
                for entry in spec.get("resourceClaims") or []:
                    name = entry.get("resourceClaimTemplateName") or entry.get("resourceClaimName")
                    kind = "ResourceClaimTemplate" if "resourceClaimTemplateName" in entry else "ResourceClaim"
                    assert (kind, ns, name) in after, f"{rel}: {key} references {kind} {ns}/{name}, not in the build"
                old_spec = at(before[key], path) if key in before else None
                for i, c in enumerate(spec.get("containers") or []):
                    if (c.get("resources") or {}).get("claims"):
                        assert _gpus(c) == 0, f"{rel}: {key} container {c['name']} requests claims and GPUs"
                    if old_spec is None:
                        continue
                    old = (old_spec.get("containers") or [])[i]
                    assert old.get("name") == c.get("name")
                    got = _claimed(c, spec, claims) + _gpus(c)
                    assert got == _gpus(old), f"{rel}: {key} {c['name']}: {got} GPUs, {_gpus(old)} before"
                    checked += bool(_gpus(old))
    return checked


def _objects(text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for d in yaml.safe_load_all(text):
        if isinstance(d, dict) and d.get("kind") == "List":
            out.extend(d.get("items") or [])
        elif isinstance(d, dict):
            out.append(d)
    return out


TREE_CASES = sorted(p for p in GOLDEN.iterdir() if (p / "input").is_dir())


def test_tree_cases_are_found() -> None:
    names = {c.name for c in TREE_CASES}
    assert {"kustomize-name-prefix", "kustomize-smp-count", "kustomize-json6902-count", "kustomize-refused-patch",
            "kustomize-two-overlays", "kustomize-claims-out", "kustomize-inline-patch"} <= names


# Cases whose input kustomize cannot build: the migration must leave them as they are (and they still fail).
BROKEN_BEFORE = {"kustomize-base-does-not-parse": 'mapping key "app" already defined'}


@needs_kubectl
@pytest.mark.parametrize("case", TREE_CASES, ids=[c.name for c in TREE_CASES])
def test_golden_tree_builds_keep_every_pod(case: Path) -> None:
    before, after = case / "input", case / "expected" / "input"
    if case.name in BROKEN_BEFORE:
        for tree in (before, after):
            assert KUBECTL is not None
            out = subprocess.run([KUBECTL, "kustomize", "--load-restrictor", "LoadRestrictionsNone",
                                  str(tree / "overlay")], capture_output=True, text=True, timeout=120, check=False)
            assert out.returncode != 0 and BROKEN_BEFORE[case.name] in out.stderr, out.stderr
        assert {p.relative_to(before): p.read_bytes() for p in before.rglob("*") if p.is_file()} == {
            p.relative_to(after): p.read_bytes() for p in after.rglob("*") if p.is_file()}
        return
    check_builds(before, after)


def _run(tree: Path, **kw: Any) -> Any:
    return run_migration(RunConfig([str(tree)], **kw))


@needs_kubectl
def test_corpus_gke_a100_jax_builds_the_same(tmp_path: Path) -> None:
    corpus = require_shared()
    prefix = "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-a100-jax__kubernetes__"
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    for part in ("kustomization", "job", "job-patch", "service"):
        shutil.copy(corpus / f"{prefix}{part}.yaml", before / f"{part}.yaml")
    shutil.copytree(before, after)
    result = _run(after)
    assert "DRA716" in {d.code for d in result.all_diagnostics}  # refused by name: the patch adds the GPUs
    check_builds(before, after)
    assert build(before) == build(after)


BASE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  selector:
    matchLabels: {app: app}
  template:
    metadata:
      labels: {app: app}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
      containers:
      - name: main
        image: x
        resources:
          limits:
            nvidia.com/gpu: 1
      - name: side
        image: y
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def _tree(tmp_path: Path, overlays: dict[str, dict[str, str]]) -> tuple[Path, Path]:
    before = tmp_path / "before"
    (before / "base").mkdir(parents=True)
    (before / "base" / "app.yaml").write_text(BASE)
    (before / "base" / "kustomization.yaml").write_text("resources:\n- app.yaml\n")
    for name, files in overlays.items():
        (before / name).mkdir(parents=True)
        for f, text in files.items():
            (before / name / f).write_text(text)
    after = tmp_path / "after"
    shutil.copytree(before, after)
    return before, after


SMP = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n"


@needs_kubectl
@pytest.mark.parametrize("overlay", [
    # counts and products, by strategic merge, JSON 6902, target selectors, two levels
    {"o/kustomization.yaml": "namePrefix: p-\nresources: [../base]\npatches:\n- path: p.yaml\n",
     "o/p.yaml": SMP + "      containers:\n      - name: side\n        resources:\n          limits:\n"
                       "            nvidia.com/gpu: 4\n"},
    {"o/kustomization.yaml": "nameSuffix: -s\nnamespace: team-n\nresources: [../base]\npatches:\n"
                             "- target: {kind: Deployment}\n  patch: |\n    - op: replace\n"
                             "      path: /spec/template/spec/containers/1/resources/limits/nvidia.com~1gpu\n"
                             "      value: 3\n",
     "o2/kustomization.yaml": "namePrefix: x-\nresources: [../o]\npatches:\n- path: p.yaml\n",
     "o2/p.yaml": SMP + "      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n"},
    {"o/kustomization.yaml": "resources: [../base]\npatchesStrategicMerge:\n- |-\n  " + SMP.replace("\n", "\n  ")
     + "      containers:\n        - name: main\n          resources:\n            limits:\n"
       "              nvidia.com/gpu: 2\n"},
], ids=["smp-prefix", "two-levels-json6902-then-product", "inline-patches-strategic-merge"])
def test_overlay_patches_build_the_migrated_objects(tmp_path: Path, overlay: dict[str, str]) -> None:
    dirs: dict[str, dict[str, str]] = {}
    for rel, text in overlay.items():
        d, f = rel.split("/")
        dirs.setdefault(d, {})[f] = text
    before, after = _tree(tmp_path, dirs)
    result = _run(after)
    codes = {d.code for d in result.all_diagnostics}
    assert "DRA715" in codes and "DRA716" not in codes and "DRA717" not in codes, codes
    assert check_builds(before, after) >= 2
    assert _run(after).exit_code == 0  # and a second run changes nothing


@needs_kubectl
@pytest.mark.parametrize("overlay", [
    # the patch replaces tolerations (the migration adds one), gives a container GPUs its base lacks,
    # removes a GPU the base has, or uses a strategic-merge directive
    SMP + "      tolerations:\n      - key: dedicated\n        operator: Exists\n",
    SMP + "      containers:\n      - name: extra\n        image: z\n        resources:\n          limits:\n"
          "            nvidia.com/gpu: 1\n",
    SMP + "      containers:\n      - name: side\n        resources:\n          limits:\n"
          "            nvidia.com/gpu: null\n",
    SMP + "      containers:\n      - name: side\n        $patch: delete\n",
], ids=["tolerations-replaced", "new-gpu-container", "gpu-removed", "directive"])
def test_overlay_patches_that_cannot_be_carried_refuse_the_base(tmp_path: Path, overlay: str) -> None:
    before, after = _tree(tmp_path, {"o": {"kustomization.yaml": "resources: [../base]\npatches:\n- path: p.yaml\n",
                                           "p.yaml": overlay}})
    result = _run(after)
    codes = [d.code for d in result.all_diagnostics]
    assert "DRA717" in codes and "DRA716" in codes, codes
    assert (after / "base" / "app.yaml").read_text() == BASE
    assert (after / "o" / "p.yaml").read_text() == overlay
    check_builds(before, after)


@needs_kubectl
def test_claims_out_outside_the_build_is_refused(tmp_path: Path) -> None:
    before, after = _tree(tmp_path, {"o": {"kustomization.yaml": "namePrefix: p-\nresources: [../base]\n"}})
    result = _run(after, claims_out=after / "claims.yaml")
    assert "DRA718" in {d.code for d in result.all_diagnostics}
    assert (after / "base" / "app.yaml").read_text() == BASE
    check_builds(before, after)


KUSTOMIZE_CODES = ("DRA701", "DRA702", "DRA703", "DRA715", "DRA716", "DRA717", "DRA718", "DRA719")


def test_every_kustomize_code_is_in_a_golden_case() -> None:
    from dra_migrate.diagnostics.codes import CODES

    seen = "".join((c / "diagnostics.txt").read_text() for c in TREE_CASES)
    for code in KUSTOMIZE_CODES:
        assert code in CODES and f" {code}:" in seen, code
