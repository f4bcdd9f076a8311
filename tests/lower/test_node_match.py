"""node_matches: Kubernetes nodeSelector + required node affinity semantics on a label map."""

from __future__ import annotations

from typing import Any

import pytest

from dra_migrate.lower.selection import node_matches

NODE = {"zone": "a", "gpu": "NVIDIA-L4", "mem": "23034", "bad": "12x"}


def t(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(exprs)}


def e(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def test_no_selection_matches_everything() -> None:
    assert node_matches(NODE, {}, None)
    assert node_matches({}, None, None)


def test_node_selector_entries_are_anded() -> None:
    assert node_matches(NODE, {"zone": "a", "gpu": "NVIDIA-L4"}, None)
    assert not node_matches(NODE, {"zone": "a", "gpu": "Tesla-T4"}, None)
    assert not node_matches(NODE, {"missing": ""}, None)  # absent is not the empty string


@pytest.mark.parametrize(
    "expr,expected",
    [
        (e("zone", "In", "a", "b"), True),
        (e("zone", "In", "b"), False),
        (e("missing", "In", "a"), False),
        (e("zone", "NotIn", "b"), True),
        (e("zone", "NotIn", "a"), False),
        (e("missing", "NotIn", "a"), True),  # NotIn matches nodes without the label
        (e("zone", "Exists"), True),
        (e("missing", "Exists"), False),
        (e("zone", "DoesNotExist"), False),
        (e("missing", "DoesNotExist"), True),
        (e("mem", "Gt", "16384"), True),
        (e("mem", "Gt", "23034"), False),
        (e("mem", "Lt", "23035"), True),
        (e("mem", "Lt", "23034"), False),
        (e("missing", "Gt", "1"), False),
        (e("bad", "Gt", "1"), False),  # a non-integer label never compares
        (e("mem", "Gt", "1.5"), False),  # nor does a non-integer operand
        (e("mem", "Gt", "1", "2"), False),  # Gt takes exactly one value
        (e("zone", "Like", "a"), False),
    ],
)
def test_operators(expr: dict[str, Any], expected: bool) -> None:
    assert node_matches(NODE, {}, [t(expr)]) is expected


def test_expressions_in_a_term_are_anded() -> None:
    assert node_matches(NODE, {}, [t(e("zone", "In", "a"), e("gpu", "Exists"))])
    assert not node_matches(NODE, {}, [t(e("zone", "In", "a"), e("gpu", "DoesNotExist"))])


def test_terms_are_ored() -> None:
    assert node_matches(NODE, {}, [t(e("zone", "In", "b")), t(e("gpu", "In", "NVIDIA-L4"))])
    assert not node_matches(NODE, {}, [t(e("zone", "In", "b")), t(e("gpu", "In", "Tesla-T4"))])


def test_node_selector_and_affinity_are_anded() -> None:
    assert not node_matches(NODE, {"zone": "b"}, [t(e("gpu", "Exists"))])
    assert node_matches(NODE, {"zone": "a"}, [t(e("gpu", "Exists"))])


def test_empty_terms_match_nothing() -> None:
    assert not node_matches(NODE, {}, [])
    assert not node_matches(NODE, {}, [{}])
    assert not node_matches(NODE, {}, [{"matchExpressions": []}])
    assert node_matches(NODE, {}, [{}, t(e("zone", "Exists"))])


def test_match_fields_use_the_node_name() -> None:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    assert node_matches(NODE, {}, [term], name="n1")
    assert not node_matches(NODE, {}, [term], name="n2")
    assert not node_matches(NODE, {}, [term])  # unknown name: cannot match
