"""Layout detection for new text: how a document quotes strings and keys, and how a JSON text is laid out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dra_migrate.emit.claims_file import claims_files
from dra_migrate.emit.style import JsonLayout, Style, detect_style, json_layout
from dra_migrate.source.compose import compose_documents


def _style(text: str) -> Style:
    doc = compose_documents(text)[0]
    return detect_style(doc.root, "\n", False, None, text)


@pytest.mark.parametrize(
    ("text", "quote", "quote_char", "key_quote"),
    [
        ("a: b\nc: d\ne: '4'\n", "", "'", ""),  # plain; quotes only where needed, single
        ('a: b\nc: d\ncpu: "4"\n', "", '"', ""),  # plain; double where needed
        ('a: "b"\nc: "d"\ne: f\n', '"', '"', ""),  # habitually double-quoted
        ("a: 'b'\nc: 'd'\ne: f\n", "'", "'", ""),
        ('"a": "b"\n"c": "d"\n', '"', '"', '"'),  # keys too
        ('a: b\nargs: ["x", "y", "z"]\n', "", "'", ""),  # quoting in flow sequences is not the file's habit
        ('{"a": "b", "c": "d"}\n', '"', '"', '"'),  # all in flow syntax: flow is the only evidence
        ("a: 1\nb: true\n", "", "'", ""),  # no string at all: defaults
    ],
)
def test_quoting_style(text: str, quote: str, quote_char: str, key_quote: str) -> None:
    st = _style(text)
    assert (st.quote, st.quote_char, st.key_quote) == (quote, quote_char, key_quote)


def test_strings_that_must_be_quoted_are_not_evidence_of_a_quoting_habit() -> None:
    st = _style('name: a\nimage: b\nreplicas: "3"\nenabled: "true"\nversion: "1.2"\n')
    assert st.quote == "" and st.quote_char == '"'


@pytest.mark.parametrize(
    ("dump", "expected"),
    [
        ({"separators": (",", ":")}, JsonLayout(2, ":", ",", False, False, False)),
        ({}, JsonLayout(2, ": ", ", ", False, False, False)),
        ({"indent": 4}, JsonLayout(4, ": ", ", ", False, True, False)),
        ({"indent": 2, "separators": (",", ":")}, JsonLayout(2, ":", ",", False, True, False)),
        ({"indent": "\t"}, JsonLayout(2, ": ", ", ", False, True, False)),
    ],
)
def test_json_layout(dump: dict[str, object], expected: JsonLayout) -> None:
    obj = {"a": {"b": [1, 2], "c": {"d": "x: y, z"}}, "e": "\"{[,:]}\""}
    assert json_layout(json.dumps(obj, **dump)) == expected  # type: ignore[arg-type]


def test_json_layout_one_line_leaves_and_final_newline() -> None:
    text = '{\n  "a": {"b": 1, "c": 2},\n  "d": [1, 2],\n  "e": {\n    "f": {"g": 1}\n  }\n}\n'
    assert json_layout(text) == JsonLayout(2, ": ", ", ", True, True, True)


def test_json_sibling_follows_its_manifest(tmp_path: Path) -> None:
    src = tmp_path / "pod.json"
    src.write_text(json.dumps({"kind": "Pod"}, separators=(",", ":")))
    obj = {"kind": "ResourceClaimTemplate", "metadata": {"name": "x"}}
    out = claims_files(None, [(str(src), obj)])
    assert out == {tmp_path / "pod.dra-claims.json": b'{"apiVersion":"v1","kind":"List","items":[' +
                   b'{"kind":"ResourceClaimTemplate","metadata":{"name":"x"}}]}'}
    src.write_text(json.dumps({"kind": "Pod", "spec": {}}, indent=4) + "\n")
    data = claims_files(None, [(str(src), obj)])[tmp_path / "pod.dra-claims.json"]
    assert data.decode() == json.dumps({"apiVersion": "v1", "kind": "List", "items": [obj]}, indent=4) + "\n"


def test_json_sibling_without_a_readable_manifest_is_two_space_pretty(tmp_path: Path) -> None:
    obj = {"kind": "ResourceClaimTemplate", "metadata": {"name": "x"}}
    data = claims_files(None, [(str(tmp_path / "gone.json"), obj)])[tmp_path / "gone.dra-claims.json"]
    assert data.decode() == json.dumps({"apiVersion": "v1", "kind": "List", "items": [obj]}, indent=2) + "\n"
