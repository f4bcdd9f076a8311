from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.cel import (
    DeviceView,
    compile_selector,
    regex_literal_escape,
    single_quoted_literal,
    string_literal,
)

DEV = DeviceView(driver="gpu.nvidia.com", attributes={"gpu.nvidia.com": {"productName": "x"}})


@settings(max_examples=60, deadline=None)
@given(st.text())
def test_string_literal_round_trips(value: str) -> None:
    lit = string_literal(value)
    assert "\n" not in lit and "\r" not in lit
    # The literal is one operand: nothing in it can end the string or add structure.
    assert compile_selector(f"{lit} == {lit} && size({lit}) == {len(value)}").evaluate(DEV) is True
    assert compile_selector(f"{lit} + 'x' != {lit}").evaluate(DEV) is True


@settings(max_examples=60, deadline=None)
@given(st.text())
def test_regex_escape_matches_literally(value: str) -> None:
    pattern = string_literal("^" + regex_literal_escape(value) + "$")
    lit = string_literal(value)
    assert compile_selector(f"{lit}.matches({pattern})").evaluate(DEV) is True
    assert compile_selector(f"({lit} + 'x').matches({pattern})").evaluate(DEV) is False


def test_examples() -> None:
    assert string_literal('a"b\\c\n') == '"a\\"b\\\\c\\n"'
    assert regex_literal_escape("NVIDIA A100-SXM4-40GB (x)") == "NVIDIA A100-SXM4-40GB \\(x\\)"
    assert compile_selector(string_literal("é€😀") + " == 'é€😀'").evaluate(DEV) is True


@settings(max_examples=60, deadline=None)
@given(st.text())
def test_single_quoted_literal_round_trips(value: str) -> None:
    lit = single_quoted_literal(value)
    assert lit.isascii() and lit.isprintable() and lit.startswith("'")
    same = f"{lit} == {string_literal(value)} && size({lit}) == {len(value)}"
    assert compile_selector(same).evaluate(DEV) is True


def test_single_quoted_examples() -> None:
    assert single_quoted_literal("it's a\\b") == "'it\\'s a\\\\b'"
    assert single_quoted_literal("ü😀") == "'\\u00fc\\U0001f600'"
