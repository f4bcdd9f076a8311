"""Baseline workloads that `run.py` times in child processes, the same way it times the tool.

    python benchmarks/baselines.py prefilter REPO      # read every file, test for b"nvidia.com"
    python benchmarks/baselines.py compose LISTFILE    # PyYAML CSafeLoader compose_all of the listed files
    python benchmarks/baselines.py roundtrip LISTFILE  # ruamel.yaml typ='rt' load_all + dump_all of the files

Each prints one JSON line of counts so the runner can check the workload did what it claims. Imports happen
inside the sub-commands so each child pays only for the library it measures, like a tool that imports lazily.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

NEEDLE = b"nvidia.com"


def prefilter(repo: Path) -> dict[str, int]:
    files = hits = size = 0
    for root, dirs, names in os.walk(repo):
        dirs.sort()
        for name in sorted(names):
            with open(os.path.join(root, name), "rb") as f:
                data = f.read()
            files += 1
            size += len(data)
            hits += NEEDLE in data
    return {"files": files, "hits": hits, "bytes": size}


def _listed(listfile: Path) -> list[str]:
    return [line for line in listfile.read_text().splitlines() if line]


def compose(listfile: Path) -> dict[str, int]:
    import yaml

    loader = yaml.CSafeLoader  # the C parser: the fastest YAML parse available in Python
    nodes = errors = 0
    for path in _listed(listfile):
        with open(path, "rb") as f:
            data = f.read()
        try:
            nodes += sum(1 for _ in yaml.compose_all(data, Loader=loader))
        except yaml.YAMLError:
            errors += 1
    return {"files": len(_listed(listfile)), "documents": nodes, "errors": errors}


def roundtrip(listfile: Path) -> dict[str, int]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yml = YAML(typ="rt")
    yml.preserve_quotes = True
    yml.width = 4096
    docs = errors = out = 0
    for path in _listed(listfile):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            loaded = list(yml.load_all(text))
            buf = io.StringIO()
            yml.dump_all(loaded, buf)
        except YAMLError:
            errors += 1
            continue
        docs += len(loaded)
        out += len(buf.getvalue())
    return {"files": len(_listed(listfile)), "documents": docs, "errors": errors, "bytes_out": out}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("prefilter", "compose", "roundtrip"):
        print(__doc__, file=sys.stderr)
        return 2
    fn = {"prefilter": prefilter, "compose": compose, "roundtrip": roundtrip}[argv[0]]
    print(json.dumps(fn(Path(argv[1]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
