"""Regenerate the byte-exact hostile corpus files that are impractical to edit by hand (BOM, CRLF, bad bytes,
huge or deep files). Hand-written cases live beside them as plain .yaml files. Run from the repo root:
`python tests/hostile/make_corpus.py`; then review `git diff tests/hostile`."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n  - name: c\n    image: x\n"
    "    resources:\n      limits:\n        nvidia.com/gpu: {count}\n"
)


def pod(name: str, count: str = "1") -> str:
    return POD.format(name=name, count=count)


def main() -> None:
    files: dict[str, bytes] = {
        "non-utf8.yaml":
            pod("latin").replace("image: x", "image: caf\udce9").encode("utf-8", "surrogateescape"),
        "crlf-mixed.yaml": pod("crlf-mixed").replace("\n", "\r\n", 6).encode(),
        "bom-crlf.yaml": ("\ufeff" + pod("bom-crlf")).replace("\n", "\r\n").encode(),
        "no-trailing-newline.yaml": pod("no-newline").rstrip("\n").encode(),
        "long-lines.yaml": pod("long").replace("image: x", "image: x" + "y" * 20_000).encode(),
        "too-large.yaml": (pod("large") + "# " + "z" * 2000 + "\n").encode(),
        "deep-flow.yaml": (
            pod("deep").replace("image: x", "image: x\n    args: " + "[" * 10_000 + "]" * 10_000)
        ).encode(),
        "alias-bomb.yaml": (
            pod("bomb")
            + "---\nx0: &a0 [nvidia.com/gpu, lol]\n"
            + "".join(f"x{i}: &a{i} [{', '.join(['*a' + str(i - 1)] * 9)}]\n" for i in range(1, 10))
        ).encode(),
    }
    for name, data in files.items():
        (HERE / name).write_bytes(data)


if __name__ == "__main__":
    main()
