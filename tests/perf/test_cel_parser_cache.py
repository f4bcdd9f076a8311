"""The CEL parser cache (dra_migrate.perf.parser_cache): same parser as celpy builds, private atomic files,
and never an error when the cache cannot be used."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import lark
import pytest
from celpy.celparser import CELParser

from dra_migrate.perf import parser_cache

EXPRESSIONS = [
    "device.attributes['gpu.nvidia.com'].productName.matches('^Tesla[ -]T4$')",
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0 && true",
    "cel.bind(x, device.driver, x == 'gpu.nvidia.com' || false)",
]


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache home and no parser in the process; the process's parser is put back afterwards."""
    saved = CELParser.CEL_PARSER
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    CELParser.CEL_PARSER = None
    yield tmp_path / "cache" / "dra-migrate"
    CELParser.CEL_PARSER = saved


def _reference() -> lark.Lark:
    saved = CELParser.CEL_PARSER
    CELParser.CEL_PARSER = None
    try:
        CELParser(tree_class=lark.Tree)
        assert CELParser.CEL_PARSER is not None
        return CELParser.CEL_PARSER
    finally:
        CELParser.CEL_PARSER = saved


def _forbid_build(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_build(self: CELParser, tree_class: type = lark.Tree) -> None:
        raise AssertionError("the parser was rebuilt instead of loaded")

    monkeypatch.setattr(CELParser, "__init__", no_build)


def test_miss_builds_and_saves_then_hit_loads_the_same_parser(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reference = _reference()
    parser_cache.install()
    files = list(fresh.glob("cel-parser-*.pickle"))
    assert len(files) == 1
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700
    assert not list(fresh.glob(".tmp-*"))  # written under a temporary name, then renamed

    CELParser.CEL_PARSER = None
    _forbid_build(monkeypatch)
    parser_cache.install()
    loaded = CELParser.CEL_PARSER
    assert loaded is not None
    assert loaded.options.options == reference.options.options  # celpy's own options, callbacks included
    for e in EXPRESSIONS:
        assert loaded.parse(e) == reference.parse(e)
    with pytest.raises(lark.exceptions.UnexpectedInput):
        loaded.parse("device.driver ==")


def test_key_changes_with_the_tree_class_and_stale_files_are_removed(fresh: Path) -> None:
    class OtherTree(lark.Tree):
        pass

    assert parser_cache.cache_key(lark.Tree) != parser_cache.cache_key(OtherTree)
    fresh.mkdir(parents=True)
    stale = fresh / "cel-parser-0123456789abcdef0123456789abcdef.pickle"
    stale.write_bytes(b"from an older lark")
    parser_cache.install()
    assert not stale.exists()
    assert len(list(fresh.glob("cel-parser-*.pickle"))) == 1


@pytest.mark.parametrize("content", [b"", b"not a pickle", b"\x80\x04K\x01."])
def test_a_damaged_file_is_rebuilt_and_replaced(fresh: Path, content: bytes) -> None:
    parser_cache.install()
    (path,) = fresh.glob("cel-parser-*.pickle")
    path.write_bytes(content)
    CELParser.CEL_PARSER = None
    parser_cache.install()
    assert CELParser.CEL_PARSER is not None
    assert CELParser.CEL_PARSER.parse(EXPRESSIONS[0]) == _reference().parse(EXPRESSIONS[0])
    assert path.read_bytes() != content


def test_a_file_others_can_write_is_not_loaded(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser_cache.install()
    (path,) = fresh.glob("cel-parser-*.pickle")
    os.chmod(path, 0o666)
    CELParser.CEL_PARSER = None
    built: list[bool] = []
    original = CELParser.__init__

    def counting(self: CELParser, tree_class: type = lark.Tree) -> None:
        built.append(True)
        original(self, tree_class=tree_class)

    monkeypatch.setattr(CELParser, "__init__", counting)
    parser_cache.install()
    assert built == [True]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # replaced by a private file


def test_an_unusable_cache_directory_is_no_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saved = CELParser.CEL_PARSER
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    CELParser.CEL_PARSER = None
    try:
        parser_cache.install()
        assert CELParser.CEL_PARSER is not None
        assert CELParser.CEL_PARSER.parse(EXPRESSIONS[0]) == _reference().parse(EXPRESSIONS[0])
    finally:
        CELParser.CEL_PARSER = saved


def test_relative_xdg_cache_home_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert parser_cache.cache_dir() == tmp_path / ".cache" / "dra-migrate"
