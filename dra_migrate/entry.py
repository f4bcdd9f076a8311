"""Console entry point with a fast path: a pre-commit run on files that cannot hold a GPU request
decides and exits before the CLI framework or any parser is imported."""

from __future__ import annotations

import os
import sys

_FAST_FLAGS = {"--check", "--diff", "-q", "--quiet"}
_PREFILTER = (b"nvidia.com", b"ResourceClaimTemplate", b"volcano.sh/gpu")


def _fast_path(argv: list[str]) -> bool:
    if len(argv) < 2 or argv[0] != "migrate":
        return False
    paths = [a for a in argv[1:] if not a.startswith("-")]
    flags = [a for a in argv[1:] if a.startswith("-")]
    if not paths or any(f not in _FAST_FLAGS for f in flags) or "-" in paths:
        return False
    for p in paths:
        if not os.path.isfile(p) or os.path.islink(p):
            return False
        try:
            with open(p, "rb") as f:
                raw = f.read()
        except OSError:
            return False
        if any(s in raw for s in _PREFILTER):
            return False
    return True


def main() -> None:
    argv = sys.argv[1:]
    if _fast_path(argv):
        sys.exit(0)
    from dra_migrate.cli.app import run

    run()


if __name__ == "__main__":
    main()
