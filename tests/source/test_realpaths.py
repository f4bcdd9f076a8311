"""source.realpaths answers as os.path.realpath does, for any path: links in the directory, in the entry, `..`
after a link, missing components, absolute entries, a loop."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from dra_migrate.source import realpaths


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "f.yaml").write_text("x")
    (tmp_path / "d" / "e" / "g.yaml").write_text("x")
    (tmp_path / "link-to-c").symlink_to(tmp_path / "a" / "b" / "c")
    (tmp_path / "a" / "rel-to-e").symlink_to(Path("..") / "d" / "e")
    (tmp_path / "d" / "file-link.yaml").symlink_to(Path("e") / "g.yaml")
    (tmp_path / "d" / "dangling").symlink_to(tmp_path / "nowhere" / "x")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    realpaths.clear()
    return tmp_path


ENTRIES = ["f.yaml", "../c/f.yaml", "..", ".", "../../d/e/g.yaml", "rel-to-e/g.yaml", "rel-to-e/../e/g.yaml",
           "link-to-c/../x.yaml", "file-link.yaml", "dangling", "dangling/more", "missing/../f.yaml",
           "loop1/x.yaml", "./f.yaml", "a//b/", "../../../../../../../../../etc"]
DIRS = ["", "a", "a/b/c", "d", "link-to-c", "a/rel-to-e", "nope"]


@pytest.mark.parametrize(("directory", "entry"), list(itertools.product(DIRS, ENTRIES)))
def test_resolutions_equal_os_realpath(tree: Path, directory: str, entry: str) -> None:
    here = tree / directory if directory else tree
    expected = os.path.realpath(os.path.join(here, entry))
    assert realpaths.real_join(realpaths.real_dir(os.fspath(here)), entry) == expected
    assert realpaths.resolved(os.path.join(here, entry)) == expected


def test_an_absolute_entry_ignores_the_directory(tree: Path) -> None:
    target = tree / "link-to-c" / "f.yaml"
    assert realpaths.real_join(os.fspath(tree / "d"), os.fspath(target)) == os.path.realpath(target)


def test_relative_paths_resolve_against_the_working_directory(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree / "a")
    realpaths.clear()
    for path in ("rel-to-e/g.yaml", "b/c/f.yaml", "../link-to-c/f.yaml", "x.yaml"):
        assert realpaths.resolved(path) == os.path.realpath(path)
