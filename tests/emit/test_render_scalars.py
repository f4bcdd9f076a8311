"""Every scalar dra-migrate writes reads back as the same value for every likely reader of the manifest:
PyYAML (YAML 1.1, what the self-check uses), a model of go-yaml v2's resolver (what the API server and
kubectl read YAML with, through sigs.k8s.io/yaml), and ruamel.yaml (YAML 1.2)."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.emit import render
from dra_migrate.emit.scalars import double_quoted, plain_ok, quoted
from dra_migrate.emit.style import Style

# go-yaml v2 resolve() for a plain scalar (sigs.k8s.io/yaml goyaml.v2/resolve.go), kept conservative: True
# whenever it might yield anything but the same string
_GO_BOOL = "y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF"
_GO_OTHER = "~ null Null NULL .nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF <<"
_GO_MAP = {*_GO_BOOL.split(" "), *_GO_OTHER.split(" "), ""}
_GO_INT = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_GO_DOT_FLOAT = re.compile(r"\.[0-9]*([eE][-+]?[0-9]+)?|\.[0-9a-fA-FpP_.+-]+")


def go_v2_not_a_string(s: str) -> bool:
    if s in _GO_MAP:
        return True
    hint = s[0]
    if hint == ".":
        return _GO_DOT_FLOAT.fullmatch(s) is not None
    if hint in "+-0123456789":
        if re.match(r"[0-9]{4}-", s):  # a possible timestamp
            return True
        plain = s.replace("_", "")
        return bool(_GO_INT.fullmatch(plain) or _GO_FLOAT.fullmatch(plain) or re.fullmatch(r"-?0b[01]+", plain))
    return False


def test_the_go_model_knows_the_known_traps() -> None:
    for s in ["y", "N", "on", "Off", "0o17", "0x1F", "08", "1e3", "1_000", "2001-12-14", ".5", "+1", "-0b1"]:
        assert go_v2_not_a_string(s), s
    for s in ["gpu", "10240Mi", "1g.10gb", "nvidia.com/gpu", "yes-please"]:
        assert not go_v2_not_a_string(s), s


def _pyyaml(text: str) -> Any:
    return yaml.load(text, Loader=yaml.CSafeLoader), yaml.load(text, Loader=yaml.SafeLoader)


def _ruamel(text: str) -> Any:
    ruamel = pytest.importorskip("ruamel.yaml")
    return ruamel.YAML(typ="safe", pure=True).load(io.StringIO(text))


STYLES = [
    Style(),
    Style(quote_char='"'),
    Style(quote="'", quote_char="'"),
    Style(quote='"', quote_char='"'),
    Style(quote='"', quote_char='"', key_quote='"'),
]

TRAPS = [
    "y", "Y", "n", "N", "yes", "No", "ON", "off", "true", "False", "null", "~", "", " ", "0o17", "0x1F", "08",
    "1e3", "1_000", "1:20", "2001-12-14", ".inf", ".5", "+1", "-", "- a", "?", ":", "a: b", "a #b", "#x", "=", "<<",
    "@x", "`x", "!x", "&x", "*x", "|", ">", "%x", "'", '"', "a'b", 'a"b', "a\nb", "\t", "\u2028", "\x85", "\ufeff",
    "\x00", "é", "10240Mi", "1g.10gb", "0b1", "0Xg", "nvidia.com/gpu", "gpu.nvidia.com", "[a]", "{a}", "a,b",
]
texts = st.one_of(
    st.sampled_from(TRAPS),
    st.text(max_size=12),
    st.from_regex(r"[0-9a-zA-Z._/:#+ -]{0,10}", fullmatch=True),
)


def _check(value: str, style: Style) -> None:
    for rendered, text in (
        (render.scalar(value, style), "k: {}\n"),
        (render.scalar(value, style, flow=True), "[{}]\n"),
        (render.key(value, style), "{}: v\n"),
    ):
        doc = text.format(rendered)
        want = {"k": value} if text.startswith("k") else [value] if text.startswith("[") else {value: "v"}
        for got in _pyyaml(doc):
            assert got == want, (value, doc)
        if rendered and rendered[0] not in "'\"":  # plain: every reader's resolver applies
            assert not go_v2_not_a_string(rendered), (value, doc)
            assert plain_ok(value), value
        assert _ruamel(doc) == want, (value, doc)


@settings(max_examples=400, deadline=None)
@given(texts, st.sampled_from(STYLES))
def test_every_rendered_string_reads_back_the_same_everywhere(value: str, style: Style) -> None:
    _check(value, style)


@pytest.mark.parametrize("value", TRAPS)
def test_the_traps(value: str) -> None:
    for style in STYLES:
        _check(value, style)


def test_words_kubernetes_reads_as_booleans_or_numbers_are_quoted() -> None:
    for s in ["y", "n", "yes", "on", "off", "no", "0o17", "08", "1e3", "0x1F", "2001-12-14"]:
        assert render.scalar(s) == quoted(s), s
    assert render.scalar("10240Mi") == "10240Mi"
    assert render.scalar("1g.10gb") == "1g.10gb"
    assert render.scalar("gpu") == "gpu"


def test_quote_choice_follows_the_file_and_avoids_escapes() -> None:
    dq = Style(quote='"', quote_char='"')
    assert render.scalar("gpu", dq) == '"gpu"'
    assert render.scalar(2, dq) == "2"
    assert render.scalar(True, dq) == "true"
    assert render.scalar("a['b']", dq) == "\"a['b']\""
    assert render.scalar('a["b"]', dq) == "'a[\"b\"]'"
    assert render.scalar("it's", Style(quote="'", quote_char="'")) == '"it\'s"'
    assert render.scalar("4", Style(quote_char='"')) == '"4"'
    assert render.scalar("4") == "'4'"


def test_double_quoted_escapes_what_yaml_folds() -> None:
    assert double_quoted("a\u2028b\x85c\td\n") == '"a\\u2028b\\x85c\\td\\n"'
    assert yaml.safe_load("k: " + double_quoted("a\u2028b\x85c")) == {"k": "a\u2028b\x85c"}
