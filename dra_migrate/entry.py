"""Console entry point. `migrate` command lines (the pre-commit hooks', whatever their options) run without
typer, in two steps:

- the options are parsed and resolved from the one declaration (dra_migrate.cli.options, .config: command
  line > DRA_MIGRATE_* > config file > default) before any parser or the compiler is imported, and files that
  cannot hold a GPU request are settled right there, unless an option changes what can match;
- otherwise `migrate` runs directly (dra_migrate.cli.migrate_cmd.execute): typer's import, pydantic's and its
  option parsing cost about a third of a second.
Any other command line, --help, and anything malformed (click words the error) goes to the full CLI.

The speed machinery of perf/ (the GC pause, the scout, the CEL caches) is engaged here when perf/ is there and
DRA_MIGRATE_EXECUTOR is not `serial` (nor DRA_MIGRATE_PERF_OFF names the mechanism: perf.switches); without
it the same commands run serially (run.executor)."""

from __future__ import annotations

import os
import sys

from dra_migrate.ruleset.prefilters import DEFAULT_KEEP

TYPE_CHECKING = False  # this module imports nothing it can avoid, typing included
if TYPE_CHECKING:
    from typing import NoReturn

    from dra_migrate.cli.config import Resolved

# Anything the full run would look at twice: the migration prefilter, the sharing pre-pass and the DeviceClass
# pre-pass (dra_migrate.ruleset.prefilters: the bundled rules' strings, generated; --rules never comes here).
_PREFILTER = DEFAULT_KEEP


def _perf_wanted(mechanism: str) -> bool:
    """perf/'s `mechanism` is there and may be used: DRA_MIGRATE_EXECUTOR=serial (run.executor.EXECUTOR_ENV)
    says none may, DRA_MIGRATE_PERF_OFF names those that may not (dra_migrate.perf.switches)."""
    if os.environ.get("DRA_MIGRATE_EXECUTOR", "").strip().lower() == "serial":
        return False  # (before any import: a forced serial run loads nothing of perf/)
    try:
        from dra_migrate.perf import switches  # lazy: start-up (only once a run is to start)
    except ImportError:  # perf/ removed: a serial tool
        return False
    return not switches.off(mechanism)


def _install_caches() -> None:
    """perf/'s CEL parser cache and selector-verdict memo for this command, before the compiler is imported."""
    if not _perf_wanted("caches"):
        return
    from dra_migrate.perf import caches  # lazy: start-up (the fast path needs no cache)

    caches.install()


def _error(message: str) -> int:
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    return 2


def _resolved(argv: list[str]) -> Resolved | int | None:
    """The settings of a `migrate` command line (an int: the exit code of an unusable setting), or None when
    the full CLI is to parse it."""
    if len(argv) < 2 or argv[0] != "migrate" or os.name == "nt":  # (on Windows click expands wildcards)
        return None
    if any(k.startswith("_DRA_MIGRATE_COMPLETE") for k in os.environ):
        return None
    # lazy: start-up (not even the option table for a command line the full CLI takes)
    from dra_migrate.cli.config import ConfigError, resolve
    from dra_migrate.cli.options import Unparsed, parse_argv

    try:
        paths, given = parse_argv("migrate", argv[1:])
    except Unparsed:
        return None
    if not paths:
        return None  # click says what is missing
    try:
        return resolve("migrate", paths, given, os.environ)
    except ConfigError as exc:
        return _error(str(exc))


def _fast_path(r: Resolved) -> int | None:
    """The exit code when every file is settled without the compiler, else None."""
    from dra_migrate.cli.options import FAST_DEFAULT  # lazy: start-up (this module imports nothing it can avoid)

    if "-" in r.paths or any(o.fast == FAST_DEFAULT for o in r.non_default()):
        return None
    v = r.values
    if not v["quiet"] and not v["no-progress"] and sys.stderr.isatty():
        return None  # the full CLI prints a summary table on a terminal
    for p in r.paths:
        if not p.endswith((".yaml", ".yml", ".json")) or not os.path.isfile(p) or os.path.islink(p):
            return None
        try:
            with open(p, "rb") as f:
                raw = f.read()
        except OSError:
            return None
        if any(s in raw for s in _PREFILTER):
            return None
    if not v["quiet"]:
        verb = "would change" if v["check"] or v["diff"] else "changed"
        sys.stderr.write(f"{len(r.paths)} file(s) scanned, 0 with GPU keys, 0 {verb}, 0 new file(s), "
                         "0 left untouched because of errors\n")
    return 0


def _scout_wanted(r: Resolved) -> bool:
    """Whether the run will take a scout (run.driver._scout_for says the same from the run's side). Every
    option that decides what the walk sees goes to the scout (paths, --exclude, --no-gitignore,
    --max-file-size, --output-dir: every file's bytes); those that only change what the run makes of the
    files (--target-version, --format, --report, --feature-gates, ...) do not concern it. Not scouted: a
    --rules pack (it adds prefilter strings the scout does not scan for), the bridge strategy (it walks on its
    own), --jobs 1 and a progress bar (it wants the total first)."""
    v = r.values
    return (v["jobs"] != 1 and not v["rules"] and v["strategy"] != "extended-resource"
            and (v["no-progress"] or not sys.stderr.isatty()) and _perf_wanted("scout"))


def _start_scout(r: Resolved) -> None:
    v = r.values
    from dra_migrate.perf import scout  # lazy: start-up (only a run that walks wants it)

    scout.start(r.paths, v["exclude"], not v["no-gitignore"], v["max-file-size"], v["output-dir"] is not None)


def _without_typer(r: Resolved) -> int:
    """The exit code of `migrate` run directly (dra_migrate.cli.migrate_cmd.execute).

    What typer adds around the command is kept: Ctrl-C exits 130 and a closed output pipe exits 1 quietly."""
    if _scout_wanted(r):
        # The walk and read of a directory start now, in a second process, while the compiler is imported.
        _start_scout(r)
    _install_caches()
    # lazy: start-up (the compiler, imported once the fast path gave up and the scout is forked)
    from dra_migrate.cli.config import ConfigError
    from dra_migrate.cli.migrate_cmd import execute
    from dra_migrate.cli.settings import settle

    try:
        return execute(settle(r))
    except ConfigError as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        # lazy: start-up (only a closed output pipe needs them)
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
    try:
        resolved = _resolved(sys.argv[1:])
        if isinstance(resolved, int):
            sys.exit(resolved)
        if resolved is not None:
            code = _fast_path(resolved)
            sys.exit(code if code is not None else _without_typer(resolved))
        _install_caches()
        from dra_migrate.cli.app import run  # lazy: start-up (typer, for the commands the fast path leaves)

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
    # lazy: start-up (this module imports nothing it can avoid)
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
