"""The composer and the plain reading against PyYAML's own loader, on generated documents: the same data, and
node offsets that point at the text they came from (properties; the hostile cases are in tests/hostile)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.source.compose import ComposeError, compose_documents
from dra_migrate.source.nodes import Alias, Mapping, Node, Scalar, Sequence
from dra_migrate.source.plain import to_plain

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12),
    st.sampled_from(["yes", "off", "~", "0x1F", "0o17", "1_000", "1e3", ".inf", "<<", "nvidia.com/gpu", "", " a"]),
)
# text keys only: the composer refuses keys that are spelt alike (`0` and `'0'`) as duplicates, PyYAML does not
keys = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), min_size=1, max_size=8)
data = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
                    max_leaves=25)
styles = st.fixed_dictionaries({
    "default_flow_style": st.sampled_from([False, True, None]),
    "indent": st.sampled_from([2, 4]),
    "width": st.sampled_from([20, 80, 10_000]),
    "allow_unicode": st.booleans(),
    "explicit_start": st.booleans(),
    "explicit_end": st.booleans(),
    "default_style": st.sampled_from([None, "'", '"']),
})


def _nodes(node: Node | None) -> list[Node]:
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        out.append(n)
        if isinstance(n, Sequence):
            stack.extend(n.items)
        elif isinstance(n, Mapping):
            for k, v in n.items:
                stack.extend((k, v))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(data, min_size=1, max_size=3), styles)
def test_plain_reading_is_pyyamls(documents: list[Any], style: dict[str, Any]) -> None:
    text = yaml.safe_dump_all(documents, sort_keys=False, **style)
    composed = compose_documents(text)
    assert [to_plain(d.root) for d in composed] == list(yaml.load_all(text, Loader=_LOADER))  # noqa: S506
    for doc in composed:
        for n in _nodes(doc.root):
            assert 0 <= n.start <= n.end <= len(text)
            lines = text.splitlines(keepends=True)
            assert sum(len(line) for line in lines[:n.line]) + n.col == n.start
            if isinstance(n, Scalar) and n.style == "" and "\n" not in text[n.start:n.end]:
                assert text[n.start:n.end] == n.value


@settings(max_examples=150, deadline=None)
@given(st.lists(data, min_size=1, max_size=3))
def test_anchors_and_merges_read_as_pyyaml_reads_them(shared: list[Any]) -> None:
    # one object referred to from several places: safe_dump writes an anchor and aliases
    obj = {"base": {"x": shared}, "uses": [shared, shared], "again": shared}
    text = yaml.safe_dump(obj, sort_keys=False) + "merged:\n  <<: [{a: 1}, {a: 2, b: 3}]\n  b: 4\n"
    (doc,) = compose_documents(text)
    assert to_plain(doc.root) == yaml.load(text, Loader=_LOADER)  # noqa: S506
    aliases = [n for n in _nodes(doc.root) if isinstance(n, Alias)]
    assert doc.aliases == len(aliases)
    assert all(text[a.start:a.end] == "*" + a.name for a in aliases)


@pytest.mark.parametrize(("text", "code", "line"), [
    ("a: 1\nb:\n  c: 2\n  c: 3\n", "DRA104", 4),
    ("a: &x [1, *x]\n", "DRA114", 1),
    ("a: *nowhere\n", "DRA101", 1),
    ("a:\n" + "".join("  " * i + "- \n" for i in range(1, 203)), "DRA109", 201),
])
def test_composition_refusals_name_their_line(text: str, code: str, line: int) -> None:
    with pytest.raises(ComposeError) as caught:
        compose_documents(text)
    assert (caught.value.code, caught.value.line) == (code, line)


@pytest.mark.parametrize("written", ["2024-5-1", "2024-05-01", "2001-12-14t21:59:43.10-05:00", "2024-06-30T12:00:00Z",
                                     "2002-12-14 21:59:43.10 -5"])
def test_a_timestamp_reads_as_the_text_it_is_written_as(written: str) -> None:
    """kubectl and the API server (go-yaml v2 through sigs.k8s.io/yaml) give a timestamp-like value to a generic
    reader as its text: an annotation `released: 2024-5-1` is the string "2024-5-1", not a date re-spelt."""
    (doc,) = compose_documents(f"released: {written}\ntagged: !!timestamp {written}\n")
    assert to_plain(doc.root) == {"released": written, "tagged": written}


@pytest.mark.parametrize(("written", "read"), [("10:30", "10:30"), ("1:20:30.5", "1:20:30.5"), ("-1:30", "-1:30"),
                                               ("1_0", 10), ("017", 15), ("0x1F", 31), (".5", 0.5), ("yes", True)])
def test_numbers_read_as_go_yaml_v2_reads_them_where_a_manifest_can_hold_them(written: str, read: object) -> None:
    """Base-60 numbers are YAML 1.1's (PyYAML reads `10:30` as 630) but not go-yaml v2's: an annotation
    `window: 10:30` is the string "10:30" to the API server. The other YAML 1.1 numbers read as PyYAML reads them."""
    (doc,) = compose_documents(f"window: {written}\n")
    value = to_plain(doc.root)["window"]
    assert value == read and type(value) is type(read)
