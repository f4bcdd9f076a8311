"""Comments of removed lines are carried to the claim reference that replaces them, or kept in place; never
lost (the self-check refuses an output that loses one)."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from dra_migrate.config import Options
from dra_migrate.emit import carry
from dra_migrate.emit.comments import Opaque, all_comments, comments_in
from dra_migrate.lower.context import RunContext
from dra_migrate.pipeline import FileResult, process_source
from dra_migrate.source.compose import compose_documents


def _run(text: str, claims_elsewhere: bool = False) -> FileResult:
    raw = textwrap.dedent(text).encode()
    return process_source("in.yaml", raw, RunContext(Options()), claims_elsewhere=claims_elsewhere)


def _out(text: str, claims_elsewhere: bool = False) -> str:
    fr = _run(text, claims_elsewhere)
    assert fr.output is not None, [d.render() for d in fr.diagnostics]
    return fr.output.decode()


POD = """\
    apiVersion: v1
    kind: Pod
    metadata:
      name: p
    spec:
      containers:
      - name: server
        image: vllm
        resources:
          limits:
            nvidia.com/gpu: 2  # tensor parallel = 2
            memory: 16Gi
    """


def test_end_of_line_comment_goes_to_the_containers_claim_reference() -> None:
    out = _out(POD)
    assert "            nvidia.com/gpu" not in out
    assert "      - name: gpu\n        request: server  # tensor parallel = 2\n" in out
    assert out.count("# tensor parallel = 2") == 1
    assert "count: 2  #" not in out  # the template's count line stays plain: it may be written elsewhere


def test_with_claims_out_the_comment_stays_in_the_workload_file() -> None:
    fr = _run(POD, claims_elsewhere=True)
    assert fr.output is not None and fr.new_documents
    assert "request: server  # tensor parallel = 2" in fr.output.decode()


def test_second_run_is_a_no_op() -> None:
    out = _out(POD)
    again = process_source("in.yaml", out.encode(), RunContext(Options()))
    assert again.output is None or again.output == out.encode()


def test_comment_lines_above_and_inside_a_removed_block_go_along() -> None:
    out = _out("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
        spec:
          containers:
          - name: c
            image: cuda
            resources:
              # the GPU limit
              limits:
                # one GPU
                nvidia.com/gpu: 1

              requests:
                cpu: "1"
        """)
    assert "limits" not in out
    assert "      claims:\n      # the GPU limit\n      # one GPU\n      - name: gpu\n        request: c\n" in out


def test_a_comment_after_a_blank_line_is_not_taken_along() -> None:
    out = _out("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
        spec:
          containers:
          - name: c
            image: cuda
            resources:
              limits:
                memory: 1Gi
                # about memory, not the GPU

                nvidia.com/gpu: 1
        """)
    assert "        memory: 1Gi\n        # about memory, not the GPU\n\n      claims:" in out


def test_node_selector_and_match_expression_comments_go_to_the_pods_claim_reference() -> None:
    out = _out("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
        spec:
          nodeSelector:
            nvidia.com/gpu.product: Tesla-T4  # cheap inference
            pool: gpu
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                - matchExpressions:
                  # the family
                  - key: nvidia.com/gpu.family
                    operator: In
                    values: [turing]
                  - key: kubernetes.io/arch
                    operator: In
                    values: [amd64]
          containers:
          - name: c
            image: cuda
            resources:
              limits:
                nvidia.com/gpu: 1
        """)
    assert "nvidia.com/gpu.product" not in out and "nvidia.com/gpu.family" not in out
    assert "  resourceClaims:\n  # the family\n  - name: gpu\n    resourceClaimTemplateName: p-gpu" in out
    assert "  # cheap inference\n" in out  # two different end-of-line/whole-line comments: lines above


def test_without_a_block_claim_reference_the_comment_stays_as_a_comment_line() -> None:
    out = _out("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
        spec:
          containers:
          - name: c
            image: cuda
            resources:
              limits:
                nvidia.com/gpu: 1  # kept
                memory: 1Gi
              claims: [{name: cache}]
          resourceClaims:
          - name: cache
            resourceClaimName: cache
        """)
    assert "      limits:\n        # kept\n        memory: 1Gi\n" in out


def test_comments_inside_a_multi_line_flow_map_stay() -> None:
    out = _out("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
        spec:
          containers:
          - name: c
            image: cuda
            resources:
              limits: {
                memory: 1Gi,  # memory
                nvidia.com/gpu: 1  # gpu
              }
        """)
    assert "# memory" in out and "# gpu" in out
    assert yaml.safe_load(out.split("---")[0])["spec"]["containers"][0]["resources"]["limits"] == {"memory": "1Gi"}


def test_hash_inside_scalars_is_not_a_comment() -> None:
    text = 'a: "x #y"\nb: |\n  # content\nc: d  # real\ne: f#g\n'
    docs = compose_documents(text)
    assert all_comments(text, [d.root for d in docs]) == ["# real"]
    found = comments_in(text, 0, len(text), Opaque([d.root for d in docs], text))
    assert [(c.own_line, c.gap) for c in found] == [(False, "  ")]


def test_block_scalar_header_comment_is_a_comment() -> None:
    text = "b: |  # header\n  # content\n"
    docs = compose_documents(text)
    assert all_comments(text, [d.root for d in docs]) == ["# header"]


def test_self_check_refuses_an_output_that_loses_a_comment(monkeypatch: pytest.MonkeyPatch) -> None:
    real = carry.plan_comments

    def forgetful(text: str, root: object, ops: list[object]) -> carry.CommentPlan:
        plan = real(text, root, ops)  # type: ignore[arg-type]
        plan.carried.clear()  # the removal still takes the comment: it is now dropped
        return plan

    monkeypatch.setattr("dra_migrate.emit.patch.plan_comments", forgetful)
    fr = _run(POD)
    assert fr.output is None and fr.failed
    assert any(d.code == "DRA901" and "# tensor parallel = 2" in d.message for d in fr.diagnostics)


def test_compact_sequence_items_go_before_new_keys_at_the_same_offset() -> None:
    out = _out("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
        spec:
          containers:
          - name: c
            image: cuda
            resources:
              limits:
                nvidia.com/gpu: 1
              claims: [{name: cache}]
          resourceClaims:
          - name: cache
            resourceClaimName: cache
        """)
    spec = yaml.safe_load(out.split("---")[0])["spec"]
    assert [c["name"] for c in spec["resourceClaims"]] == ["cache", "gpu"]
    assert len(spec["tolerations"]) == 1


def test_appended_to_an_existing_block_claims_list() -> None:
    out = _out("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
        spec:
          containers:
          - name: c
            image: cuda
            resources:
              limits:
                # for the model
                nvidia.com/gpu: 1  # one
              claims:
              - name: cache
          resourceClaims:
          - name: cache
            resourceClaimName: cache
        """)
    want = "      claims:\n      - name: cache\n      # for the model\n      - name: gpu\n        request: c  # one\n"
    assert want in out


def test_crlf_file_keeps_crlf_in_carried_and_kept_comments() -> None:
    text = textwrap.dedent(POD).replace("nvidia.com/gpu: 2", "# above\n        nvidia.com/gpu: 2")
    raw = text.replace("\n", "\r\n").encode()
    fr = process_source("in.yaml", raw, RunContext(Options()))
    assert fr.output is not None
    out = fr.output.decode()
    assert "\n" not in out.replace("\r\n", "")
    assert "      # above\r\n      - name: gpu\r\n        request: server  # tensor parallel = 2\r\n" in out
