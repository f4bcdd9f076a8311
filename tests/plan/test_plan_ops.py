"""apply_ops: the self-check's expectation, without touching the document it starts from."""

from __future__ import annotations

import copy

from dra_migrate.plan import Append, DeleteItem, DeleteKey, ReplaceValue, SetKey, apply_ops


def test_ops_apply_and_leave_the_input_and_op_values_alone() -> None:
    data = {
        "spec": {
            "template": {"spec": {"containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": 1}}},
                                                 {"name": "b"}]}},
            "replicas": 2,
        },
        "metadata": {"labels": {"x": "y"}},
        "items": [1, 2, 3],
    }
    before = copy.deepcopy(data)
    claims = [{"name": "gpu"}]
    ops = [
        DeleteKey(("spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")),
        SetKey(("spec", "template", "spec", "containers", 0, "resources", "claims"), claims),
        ReplaceValue(("spec", "replicas"), 3),
        DeleteItem(("items", 0)),
        Append(("items",), (4,)),
    ]
    out = apply_ops(data, ops)
    assert data == before
    assert out["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {}, "claims": [{"name": "gpu"}]}
    assert out["spec"]["replicas"] == 3 and out["items"] == [2, 3, 4]
    assert out["metadata"] is data["metadata"]  # untouched parts are shared, not copied
    out["spec"]["template"]["spec"]["containers"][0]["resources"]["claims"][0]["name"] = "changed"
    assert claims == [{"name": "gpu"}]  # values are copied in
