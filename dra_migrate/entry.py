"""Console entry point with a fast path: a pre-commit run on files that cannot hold a GPU request
decides and exits before the CLI framework or any parser is imported."""

from __future__ import annotations

import os
import sys

_FAST_FLAGS = {"--check", "--diff", "-q", "--quiet", "--no-progress"}
# Anything the full run would look at twice: the migration prefilter (dra_migrate.pipeline.PREFILTER), the
# sharing pre-pass (sharing.discover.PREFILTER) and the DeviceClass pre-pass (bridge.PREFILTER). Kept as a
# literal so this module imports nothing; tests/test_entry_fast_path.py checks it covers all three.
_PREFILTER = (
    b"nvidia.com", b"ResourceClaimTemplate", b"volcano.sh/gpu", b"volcano.sh/vgpu", b"gpu-fraction", b"gpu-memory",
    b"timeSlicing", b"mps:", b"sharing:", b"devicePlugin", b"mig.strategy", b"migStrategy", b"extendedResourceName",
    b"resource.k8s.io", b"resourceClaim", b"nvidia.com/device-plugin.config",
)
_CONFIG_NAMES = (".dra-migrate.yaml", ".dra-migrate.yml")


def _configured(start: str) -> bool:
    """A config file or DRA_MIGRATE_* variable could change options: leave those runs to the full CLI."""
    if any(k.startswith("DRA_MIGRATE_") for k in os.environ):
        return True
    d = os.path.realpath(start)
    while True:
        if any(os.path.isfile(os.path.join(d, n)) for n in _CONFIG_NAMES):
            return True
        pp = os.path.join(d, "pyproject.toml")
        if os.path.isfile(pp):
            try:
                with open(pp, "rb") as f:
                    if b"[tool.dra-migrate" in f.read():  # the config table, not a mere mention
                        return True
            except OSError:
                return True
        if os.path.exists(os.path.join(d, ".git")):
            return False
        parent = os.path.dirname(d)
        if parent == d:
            return False
        d = parent


def _fast_path(argv: list[str]) -> int | None:
    """The exit code when every file is settled without the compiler, else None."""
    if len(argv) < 2 or argv[0] != "migrate":
        return None
    paths = [a for a in argv[1:] if not a.startswith("-")]
    flags = [a for a in argv[1:] if a.startswith("-")]
    if not paths or any(f not in _FAST_FLAGS for f in flags) or "-" in paths:
        return None
    quiet = "-q" in flags or "--quiet" in flags
    if not quiet and "--no-progress" not in flags and sys.stderr.isatty():
        return None  # the full CLI prints a summary table on a terminal
    if _configured(os.getcwd()):
        return None
    for p in paths:
        if not p.endswith((".yaml", ".yml", ".json")) or not os.path.isfile(p) or os.path.islink(p):
            return None
        try:
            with open(p, "rb") as f:
                raw = f.read()
        except OSError:
            return None
        if any(s in raw for s in _PREFILTER):
            return None
    if not quiet:
        verb = "would change" if "--check" in flags or "--diff" in flags else "changed"
        sys.stderr.write(f"{len(paths)} file(s) scanned, 0 with GPU keys, 0 {verb}, 0 new file(s), "
                         "0 left untouched because of errors\n")
    return 0


def main() -> None:
    argv = sys.argv[1:]
    code = _fast_path(argv)
    if code is not None:
        sys.exit(code)
    from dra_migrate.cli.app import run

    run()


if __name__ == "__main__":
    main()
