"""The benchmark repository generator: deterministic, faithful to its parameters, and valid YAML/JSON."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import FileEntry, generate
from benchmarks.yamlemit import Style, dump_docs

GPU_KEY = re.compile(rb"nvidia\.com/(gpu|mig-)")
# The C build of PyYAML's safe loader: the schema of yaml.safe_load_all, fast enough for a whole repo.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _tree_hash(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[FileEntry]]:
    root = tmp_path_factory.mktemp("repo1000")
    _, entries = generate(root, 1000, gpu_fraction=0.05, seed=3)
    return root, entries


def test_same_seed_gives_identical_bytes_and_other_seed_differs(tmp_path: Path) -> None:
    generate(tmp_path / "a", 200, seed=1)
    generate(tmp_path / "b", 200, seed=1)
    generate(tmp_path / "c", 200, seed=2)
    assert _tree_hash(tmp_path / "a") == _tree_hash(tmp_path / "b")
    assert _tree_hash(tmp_path / "a") != _tree_hash(tmp_path / "c")
    assert sum(1 for p in (tmp_path / "a").rglob("*") if p.is_file()) == 200


def test_index_matches_tree_and_gpu_fraction_is_respected(repo: tuple[Path, list[FileEntry]]) -> None:
    root, entries = repo
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert on_disk == {e.path for e in entries}
    with_gpu_keys = {e.path for e in entries if GPU_KEY.search((root / e.path).read_bytes())}
    assert with_gpu_keys == {e.path for e in entries if e.gpu}
    assert abs(len(with_gpu_keys) / len(entries) - 0.05) <= 0.01


def test_non_gpu_files_mention_nvidia_only_in_the_controlled_fraction(
    repo: tuple[Path, list[FileEntry]],
) -> None:
    root, entries = repo
    mentioning = {e.path for e in entries if not e.gpu and b"nvidia.com" in (root / e.path).read_bytes()}
    assert mentioning == {e.path for e in entries if e.fp}
    assert 1 <= len(mentioning) <= 0.01 * len(entries)


@pytest.fixture(scope="module")
def parsed(repo: tuple[Path, list[FileEntry]]) -> dict[str, list[Any]]:
    root, entries = repo
    out: dict[str, list[Any]] = {}
    for e in entries:
        if not e.template:
            data = (root / e.path).read_bytes()
            out[e.path] = (
                [json.loads(data)] if e.fmt == "json" else list(yaml.load_all(data, Loader=SAFE_LOADER))
            )
    return out


def test_every_non_template_file_parses(
    repo: tuple[Path, list[FileEntry]], parsed: dict[str, list[Any]]
) -> None:
    _, entries = repo
    assert set(parsed) == {e.path for e in entries if not e.template}
    for path, docs in parsed.items():
        assert docs and all(isinstance(d, dict) for d in docs), path
    assert len(parsed) > 0.85 * len(entries)


def test_helm_templates_are_templates(repo: tuple[Path, list[FileEntry]]) -> None:
    root, entries = repo
    templates = [e for e in entries if "/templates/" in e.path]
    assert templates and all(e.template for e in templates)
    assert all(b"{{" in (root / e.path).read_bytes() for e in templates)
    charts = {e.path.split("/")[1] for e in templates}
    assert all((root / "charts" / c / "values.yaml").exists() for c in charts)


def test_repository_has_the_advertised_variety(
    repo: tuple[Path, list[FileEntry]], parsed: dict[str, list[Any]]
) -> None:
    root, entries = repo
    kinds = Counter(d.get("kind", "-") for docs in parsed.values() for d in docs)
    for kind in [
        "Deployment",
        "Service",
        "ConfigMap",
        "Secret",
        "Ingress",
        "StatefulSet",
        "Job",
        "CronJob",
        "Role",
        "RoleBinding",
        "Kustomization",
        "RayCluster",
        "PyTorchJob",
        "JobSet",
    ]:
        assert kinds[kind] > 0, kind
    blobs = {e.path: (root / e.path).read_bytes() for e in entries}
    everything = b"".join(blobs.values())
    for needle in [
        b"nvidia.com/gpu.product: NVIDIA-",
        b"cloud.google.com/gke-accelerator: nvidia-",
        b"nvidia.com/mig-",
        b"initContainers:",
        b"tolerations:",
        b"\n---\n",
        b"\n# ",
        b": {",
    ]:
        assert needle in everything, needle
    assert any(b"\r\n" in b for b in blobs.values())
    assert any(e.fmt == "json" for e in entries)
    assert any(p.endswith("kustomization.yaml") for p in blobs)
    assert re.search(rb"\n    - name: ", everything) and re.search(rb"\n  - name: ", everything)
    large = [len(blobs[e.path]) for e in entries if e.role == "configmap-large"]
    assert large and all(50_000 <= n <= 210_000 for n in large)


@pytest.mark.parametrize("indent,indent_seq,flow", [(2, True, 0.0), (4, False, 1.0), (2, False, 0.5)])
def test_emitter_round_trips_tricky_scalars(indent: int, indent_seq: bool, flow: float) -> None:
    doc: dict[str, Any] = {
        "strings": ["8080", "true", "no", "1.5", "0x1F", "2024-01-01", "", "a: b", "x #y", "null", "~", "-1"],
        "quantities": {"cpu": "500m", "memory": "2Gi", "nvidia.com/gpu": 1, "count": "1"},
        "text": "line one\nline: two\n  indented\n",
        "nested": [{"name": "a", "values": [1, 2]}, {"name": "b", "map": {"k": "v", "e": {}}}, []],
        "flags": {"on": True, "off": False, "none": None},
    }
    st = Style(
        indent=indent,
        indent_seq=indent_seq,
        flow_prob=flow,
        comment_prob=0.5,
        trailing_comment_prob=0.5,
        quote_slash_keys=True,
        single_quotes=True,
        comments=("a # comment",),
    )
    text = dump_docs([doc, {"second": "doc"}], st, random.Random(0))
    assert list(yaml.safe_load_all(text)) == [doc, {"second": "doc"}]
