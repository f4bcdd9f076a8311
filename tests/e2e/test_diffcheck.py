"""The minimal-diff oracle (tests/diffcheck.py) accepts a migration's own edits and catches every other move."""

from __future__ import annotations

import pytest

from tests import diffcheck as D

BEFORE = b"""\
# a pod
apiVersion: v1
kind: Pod
metadata:
  name: p  # keep me
  labels: {app: "x"}
spec:
  nodeSelector:
    nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB
    kubernetes.io/arch: amd64

  containers:
  - name: app
    image: "repo/app:1"
    resources:
      limits:
        nvidia.com/gpu: 1
        cpu: 1
"""

AFTER = b"""\
# a pod
apiVersion: v1
kind: Pod
metadata:
  name: p  # keep me
  labels: {app: "x"}
spec:
  nodeSelector:
    kubernetes.io/arch: amd64

  containers:
  - name: app
    image: "repo/app:1"
    resources:
      limits:
        cpu: 1
      claims:
      - name: gpu
        request: app
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: p-gpu
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: p-gpu
spec:
  spec:
    devices:
      requests:
      - name: app
        exactly: {deviceClassName: gpu.nvidia.com, count: 1}
"""


def problems(after: bytes, before: bytes = BEFORE, name: str = "f.yaml") -> list[str]:
    moved, lost = D.moved_lines(before, after, name)
    return D.unexpected_changes(before, after, name) + moved + [f"lost {c}" for c in lost]


def test_a_migration_passes() -> None:
    assert problems(AFTER) == []


@pytest.mark.parametrize(("old", "new", "what"), [
    (b'image: "repo/app:1"', b"image: 'repo/app:1'", "rewritten but its node is unchanged"),
    (b"  name: p  # keep me", b"  name: p", "lost # keep me"),
    (b'{app: "x"}', b"{app: x}", "rewritten but its node is unchanged"),
    (b"        cpu: 1\n      claims", b"        cpu: 2\n      claims", "limits.cpu changed"),
    (b"    kubernetes.io/arch: amd64\n", b"", "nodeSelector"),
    (b"    kubernetes.io/arch: amd64\n\n", b"    kubernetes.io/arch: amd64\n", "line 11 rewritten"),
    (b"# a pod\n", b"", "line 1 rewritten"),
    (b"kind: ResourceClaimTemplate", b"kind: ConfigMap", "is not a claim"),
    (b'  - name: app\n    image: "repo/app:1"\n', b'  - image: "repo/app:1"\n    name: app\n',
     "rewritten but its node is unchanged"),
])
def test_other_moves_are_caught(old: bytes, new: bytes, what: str) -> None:
    assert AFTER.count(old) == 1
    found = problems(AFTER.replace(old, new))
    assert any(what in p for p in found), found


def test_line_endings_and_bom() -> None:
    crlf_before, crlf_after = BEFORE.replace(b"\n", b"\r\n"), AFTER.replace(b"\n", b"\r\n")
    assert problems(crlf_after, crlf_before) == []
    assert problems(AFTER, crlf_before)  # every line lost its CR
    assert problems(b"\xef\xbb\xbf" + AFTER, b"\xef\xbb\xbf" + BEFORE) == []
    assert problems(AFTER, b"\xef\xbb\xbf" + BEFORE) == ["the byte order mark changed"]


def test_a_last_line_without_a_break_gets_one() -> None:
    before = BEFORE.rstrip(b"\n")
    assert problems(AFTER.rstrip(b"\n"), before) == []


def test_template_documents_stay_byte_identical() -> None:
    tmpl = b"---\napiVersion: v1\nkind: Secret\nstringData:\n  token: {{ .Values.token }}\n"
    assert problems(AFTER + tmpl, BEFORE + tmpl) == []
    found = problems(AFTER + tmpl.replace(b"token }}", b"token}}"), BEFORE + tmpl)
    assert any("not YAML changed" in p for p in found), found


def test_a_dropped_document_is_caught() -> None:
    extra = b"---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n"
    assert any("input documents" in p for p in problems(AFTER, BEFORE + extra))


def test_embedded_manifest_strings_are_compared_as_objects() -> None:
    outer = b"apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nspec:\n  m: |\n    kind: Job\n    spec: {x: 1}\n"
    assert D.unexpected_changes(outer, outer.replace(b"{x: 1}", b"{x: 1, resourceClaims: []}"), "w.yaml") == []
    assert D.unexpected_changes(outer, outer.replace(b"{x: 1}", b"{x: 2}"), "w.yaml")
