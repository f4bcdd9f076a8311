"""Typer commands built from the option declarations (dra_migrate.cli.options).

Every option is declared once and every command that takes it gets that one declaration; typer parses the
command line into strings (its own defaults are all None, meaning "not given"), and the command's settings
are then resolved like every other command's (dra_migrate.cli.settings.load: command line > DRA_MIGRATE_* >
config file > default), so a value means the same wherever it was set and its errors read the same.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from typing import Any

import typer

from dra_migrate.cli.config import ConfigError
from dra_migrate.cli.options import FLAG, LIST, Opt, for_command
from dra_migrate.cli.settings import Settings, load


def error(message: str) -> int:
    """Say what is wrong in one line on stderr; the usage-error exit code."""
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    return 2


def run_settled(command: str, paths: list[str], given: dict[str, object], run: Callable[[Settings], int]) -> int:
    """Resolve the settings and run the command: its exit code, 2 with one line for an unusable setting."""
    try:
        return run(load(command, paths, given, os.environ))
    except ConfigError as exc:
        return error(str(exc))


def _help(opt: Opt, command: str) -> str:
    choices = opt.choices_for(command)
    text = opt.help
    if choices and len(choices) > 4:
        text += f" One of {', '.join(choices)}."
    if opt.default not in (None, False, "", ()):
        text += f" (default: {opt.default})"  # (square brackets would be rich markup)
    return text


def _metavar(opt: Opt, command: str) -> str | None:
    choices = opt.choices_for(command)
    if opt.metavar is None and choices and len(choices) <= 4:
        return "|".join(choices)
    return opt.metavar


def _annotation(opt: Opt) -> Any:
    return bool | None if opt.kind == FLAG else list[str] | None if opt.kind == LIST else str | None


def command(
    app: typer.Typer, name: str, run: Callable[[Settings], int], *, argument: str, argument_help: str,
    many: bool = True, doc: str,
) -> None:
    """Register command `name`: its positional argument(s), every option declared for it, then `run`."""
    opts = [o for o in for_command(name) if o.flags]  # (file-only settings have no option)
    params = [inspect.Parameter(argument, inspect.Parameter.KEYWORD_ONLY,
                                default=typer.Argument(..., help=argument_help, show_default=False),
                                annotation=list[str] if many else str)]
    for o in opts:
        option = typer.Option(None, *o.flags, help=_help(o, name), metavar=_metavar(o, name), show_default=False)
        params.append(inspect.Parameter(o.attr, inspect.Parameter.KEYWORD_ONLY, default=option,
                                        annotation=_annotation(o)))

    def callback(**kw: Any) -> None:
        positional = kw.pop(argument)
        paths = list(positional) if many else [positional]
        given = {o.key: kw[o.attr] for o in opts if kw.get(o.attr) not in (None, [])}
        raise typer.Exit(run_settled(name, paths, given, run))

    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    callback.__annotations__ = {p.name: p.annotation for p in params}
    callback.__doc__ = doc
    callback.__name__ = name
    app.command(name)(callback)
