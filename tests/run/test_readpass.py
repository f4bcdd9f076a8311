"""The run's read of a file: the one RE2 search that decides which files are kept must agree exactly with
testing each pattern with `in`, on any bytes (invalid UTF-8, NULs, patterns cut or at the edges)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.run.readpass import KEEP, read_file

# a pattern, a pattern cut short, a pattern with a byte changed: near misses are where a matcher goes wrong
PIECES = [p for k in KEEP for p in (k, k[:-1], k[1:], k[:3] + b"\xff" + k[4:])]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=12), st.sampled_from(PIECES)), max_size=8))
def test_kept_exactly_when_a_pattern_occurs(tmp_path_factory: object, parts: list[bytes]) -> None:
    raw = b"".join(parts)
    path = Path(str(tmp_path_factory.mktemp("r"))) / "f.yaml"  # type: ignore[attr-defined]
    path.write_bytes(raw)
    kind, value = read_file(str(path), "f.yaml", 1 << 20)
    assert kind == ("kept" if any(p in raw for p in KEEP) else "plain")
    assert value == raw


def test_unreadable_and_oversized_files(tmp_path: Path) -> None:
    kind, diag = read_file(str(tmp_path / "missing.yaml"), "missing.yaml", 100)
    assert kind == "error" and diag.code == "DRA106"
    big = tmp_path / "big.yaml"
    big.write_bytes(b"x" * 200)
    assert read_file(str(big), "big.yaml", 100) == ("too-big", None)  # nothing to migrate: passed over
    big.write_bytes(b"nvidia.com/gpu: 1\n" + b"x" * 200)
    kind, fr = read_file(str(big), "big.yaml", 100)
    assert kind == "too-big" and fr.failed and fr.diagnostics[0].code == "DRA105"


@pytest.mark.skipif(not Path("/proc/version").exists(), reason="needs a file whose size the kernel reports as 0")
def test_a_file_longer_than_its_reported_size_is_read_to_the_end() -> None:
    # /proc files report size 0 yet hold text: the read must not stop at the size fstat gave
    kind, raw = read_file("/proc/version", "version", 1 << 20)
    assert kind == "plain" and raw == Path("/proc/version").read_bytes() and raw


def test_the_sharing_prefilter_names_the_config_label() -> None:
    """dra_migrate.ruleset.prefilters imports nothing, so it spells the device plugin's config label itself."""
    from dra_migrate.lower.sharing.model import CONFIG_LABEL
    from dra_migrate.ruleset.prefilters import SHARING

    assert CONFIG_LABEL.encode() in SHARING
