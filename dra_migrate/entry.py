"""Console entry point with two short cuts for the pre-commit hooks' command line (`migrate [--check] FILE...`):

- files that cannot hold a GPU request are settled before the CLI framework or any parser is imported;
- otherwise, when no configuration can change an option, the `migrate` command runs without typer (its
  import, pydantic's and the option parsing cost about a third of a second), with the CLI's defaults.
Any other command line goes to the full CLI."""

from __future__ import annotations

import os
import sys

from dra_migrate.prefilters import CLASS, MIGRATION, SHARING

TYPE_CHECKING = False  # this module imports nothing it can avoid, typing included
if TYPE_CHECKING:
    from typing import NoReturn

_FAST_FLAGS = {"--check", "--diff", "-q", "--quiet", "--no-progress"}
# Anything the full run would look at twice: the migration prefilter, the sharing pre-pass and the DeviceClass
# pre-pass (dra_migrate.prefilters, a module that imports nothing).
_PREFILTER = (*(p.encode() for p in MIGRATION), CLASS, *SHARING)
_CONFIG_NAMES = (".dra-migrate.yaml", ".dra-migrate.yml")


def _config_start(paths: list[str]) -> str:
    """Where the CLI starts looking for a config file (dra_migrate.cli.config.first_path): the first
    existing path named, else the working directory."""
    return next((p for p in paths if os.path.exists(p)), os.getcwd())


def _configured(start: str) -> bool:
    """A config file or DRA_MIGRATE_* variable could change options: leave those runs to the full CLI."""
    if any(k.startswith("DRA_MIGRATE_") for k in os.environ):
        return True
    d = os.path.realpath(start)
    if not os.path.isdir(d):
        d = os.path.dirname(d)
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


def _hook_command(argv: list[str]) -> tuple[list[str], list[str]] | None:
    """(paths, flags) when argv is `migrate` with only the flags in _FAST_FLAGS (and a worker count, returned
    as `--jobs=N`), at least one path, no stdin and no configuration that could change an option; else None."""
    if len(argv) < 2 or argv[0] != "migrate":
        return None
    rest = list(argv[1:])
    jobs: list[str] = []
    for i, a in enumerate(rest):  # --jobs N / -j N / --jobs=N: a worker count is no reason for the framework
        if a.startswith("--jobs="):
            jobs = [a, a.split("=", 1)[1]]
        elif a in ("--jobs", "-j") and i + 1 < len(rest):
            jobs = [a, rest[i + 1]]
        else:
            continue
        if not jobs[1].isdigit() or int(jobs[1]) < 1 or rest.count(a) > 1:
            return None  # the CLI says what is wrong with it
        del rest[i : i + (1 if a.startswith("--jobs=") else 2)]
        break
    paths = [a for a in rest if not a.startswith("-")]
    flags = [a for a in rest if a.startswith("-")]
    if not paths or any(f not in _FAST_FLAGS for f in flags) or "-" in paths:
        return None
    if _configured(_config_start(paths)):
        return None
    return paths, flags + (["--jobs=" + jobs[1]] if jobs else [])


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
    if _hook_command(argv) is None:
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


def _without_typer(argv: list[str]) -> int | None:
    """The exit code of `migrate` run directly (dra_migrate.cli.migrate_cmd.execute), or None for the CLI.

    What typer adds around the command is kept: Ctrl-C exits 130 and a closed output pipe exits 1 quietly.
    Not on Windows, where click expands wildcards in the arguments."""
    if os.name == "nt" or any(k.startswith("_DRA_MIGRATE_COMPLETE") for k in os.environ):
        return None
    hook = _hook_command(argv)
    if hook is None:
        return None
    paths, flags = hook
    jobs = next((int(f.split("=", 1)[1]) for f in flags if f.startswith("--jobs=")), None)
    if jobs != 1 and ("--no-progress" in flags or not sys.stderr.isatty()):  # (a progress bar wants the total)
        # The walk and read of a directory start now, in a second process, while the compiler is imported.
        from dra_migrate import scout
        from dra_migrate.filescan import DEFAULT_MAX_BYTES

        scout.start(paths, (), True, DEFAULT_MAX_BYTES)
    from dra_migrate.cli.migrate_cmd import MigrateArgs, execute

    args = MigrateArgs(
        paths=paths,
        check="--check" in flags,
        diff="--diff" in flags,
        quiet="-q" in flags or "--quiet" in flags,
        no_progress="--no-progress" in flags,
        jobs=jobs,
    )
    try:
        return execute(args)
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        import contextlib
        import errno

        if exc.errno != errno.EPIPE:
            raise
        devnull = os.open(os.devnull, os.O_WRONLY)  # nothing more can be said; silence the flush at exit
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                os.dup2(devnull, stream.fileno())
        return 1


def main() -> None:
    from dra_migrate import gcpause

    gcpause.pause()  # until the run's first translation: see dra_migrate.gcpause
    try:
        argv = sys.argv[1:]
        code = _fast_path(argv)
        if code is None:
            code = _without_typer(argv)
        if code is not None:
            sys.exit(code)
        gcpause.resume()  # the other commands (simulate, cel...) run with the collector as usual
        from dra_migrate.cli.app import run

        run()
    except SystemExit as exc:
        exit_now(exc.code)


def exit_now(status: object) -> NoReturn:
    """Leave as `sys.exit(status)` would, minus the interpreter's teardown: freeing a large run's objects one
    by one costs ~60 ms for nothing. Threads are waited for, exit handlers run and output is flushed first."""
    if status is None:
        code = 0
    elif isinstance(status, int):
        code = status
    else:
        print(status, file=sys.stderr)
        code = 1
    import atexit
    import threading

    shutdown = getattr(threading, "_shutdown", None)  # what the interpreter does first: join non-daemon threads
    if shutdown is not None:
        shutdown()
    else:  # pragma: no cover - other Pythons
        for thread in threading.enumerate():
            if thread is not threading.main_thread() and not thread.daemon:
                thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = 120  # as CPython does when it cannot flush at exit
    os._exit(code & 0xFF)


if __name__ == "__main__":
    main()
