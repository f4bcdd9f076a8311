"""Where a command's settings come from: the command line, then DRA_MIGRATE_* variables, then
`.dra-migrate.yaml` / `[tool.dra-migrate]` (the first found walking up from the first path to the repository
root), then the declared default. The same for every command, through the declarations of
dra_migrate.cli.options; every value is converted and checked here, once, whatever its source, and an error
names the source (`--jobs`, `DRA_MIGRATE_JOBS`, `.dra-migrate.yaml: jobs`).

Imports nothing at module level: the pre-commit entry resolves the hook's settings before deciding whether
the compiler is needed at all.
"""

from __future__ import annotations

import os
from pathlib import Path

from dra_migrate.cli.options import BY_KEY, FLAG, LIST, OPTIONS, Opt, for_command
from dra_migrate.reports.anchor import relative

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

CONFIG_NAMES = (".dra-migrate.yaml", ".dra-migrate.yml")
ENV_PREFIX = "DRA_MIGRATE_"
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


class ConfigError(Exception):
    """A setting that cannot be used; the message (one line) names where it was set. Exit 2."""


def env_name(key: str) -> str:
    return ENV_PREFIX + key.upper().replace("-", "_")


class Resolved:
    """Every option's value (the command's own, resolved; the others at their default), where each came from
    (`sources`: absent for defaults) and the config file found, if any."""

    __slots__ = ("command", "config_file", "paths", "sources", "values")

    def __init__(self, command: str, paths: list[str], values: dict[str, Any], sources: dict[str, str],
                 config_file: str | None) -> None:
        self.command, self.paths, self.values, self.sources = command, paths, values, sources
        self.config_file = config_file

    def where(self, key: str) -> str:
        return self.sources.get(key, f"--{key}")

    def non_default(self) -> list[Opt]:
        """The options set to something other than their default."""
        return [o for o in OPTIONS if _is_set(o, self.values[o.key])]


def _is_set(opt: Opt, value: object) -> bool:
    if opt.kind == LIST:
        return bool(value) and list(value) != list(opt.default)  # type: ignore[call-overload]
    return value != opt.default


# --- the config file ----------------------------------------------------------------------------------------


def config_start(paths: Sequence[str]) -> str:
    """Where the search for a config file starts: the first existing path named, else the working directory."""
    return next((p for p in paths if p != "-" and os.path.exists(p)), os.getcwd())


def find_config(start: str) -> tuple[str, dict[str, Any]] | None:
    """(file, its settings): the first `.dra-migrate.yaml` or pyproject.toml with [tool.dra-migrate] walking
    up from `start`; a directory holding `.git` (the repository root) ends the search."""
    d = os.path.realpath(start)
    if not os.path.isdir(d):
        d = os.path.dirname(d)
    while True:
        for name in CONFIG_NAMES:
            f = os.path.join(d, name)
            if os.path.isfile(f):
                return f, _load_yaml(f)
        pp = os.path.join(d, "pyproject.toml")
        if os.path.isfile(pp):
            section = _load_pyproject(pp)
            if section is not None:
                return pp, section
        parent = os.path.dirname(d)
        if os.path.exists(os.path.join(d, ".git")) or parent == d:
            return None
        d = parent


def _load_yaml(f: str) -> dict[str, Any]:
    # lazy: start-up (yaml: ~9 ms, only _load_yaml() needs it)
    import yaml

    try:
        with open(f, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{f}: cannot read the configuration: {' '.join(str(exc).split())}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{f}: the configuration must be a mapping of option names to values")
    return data


def _load_pyproject(f: str) -> dict[str, Any] | None:
    try:
        with open(f, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError(f"{f}: cannot read: {exc.strerror}") from None
    if b"[tool.dra-migrate" not in raw:  # the config table, not a mere mention; spares tomllib's import
        return None
    # lazy: start-up (tomllib: ~3 ms, only _load_pyproject() needs it)
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{f}: cannot read: {exc}") from None
    section = data.get("tool", {}).get("dra-migrate")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ConfigError(f"{f}: [tool.dra-migrate] must be a table")
    return section


# --- resolution ---------------------------------------------------------------------------------------------


def resolve(command: str, paths: Sequence[str], given: Mapping[str, object], environ: Mapping[str, str]
            ) -> Resolved:
    """The settings of `command`: `given` (the command line, values as strings) over `environ` over the config
    file over the defaults. Raises ConfigError."""
    mine = for_command(command)
    found = find_config(config_start(paths))
    file_values: dict[str, tuple[str, object]] = {}  # key -> (raw key as written, value)
    config_file = None
    if found is not None:
        config_file, section = found
        known = {o.key for o in OPTIONS}
        for raw_key, value in section.items():
            key = str(raw_key).replace("_", "-")
            if key not in known:
                raise ConfigError(f"{config_file}: unknown option {raw_key!r} (known: {', '.join(sorted(known))})")
            file_values[key] = (str(raw_key), value)
    values = {o.key: (list(o.default) if o.kind == LIST else o.default) for o in OPTIONS}  # type: ignore[call-overload]
    sources: dict[str, str] = {}
    base = os.path.dirname(config_file) if config_file else None
    for opt in mine:
        if opt.key in given and not opt.file_only:
            where, raw, source = f"--{opt.key}", given[opt.key], "cli"
        elif env_name(opt.key) in environ and not opt.file_only:
            where, raw, source = env_name(opt.key), environ[env_name(opt.key)], "env"
        elif opt.key in file_values:
            raw_key, raw = file_values[opt.key]
            where, source = f"{config_file}: {raw_key}", "file"
        else:
            continue
        value = convert(opt, raw, where, source, base)
        choices = opt.choices_for(command)
        if choices is not None and value not in choices:
            if source != "cli" and value in opt.all_choices():
                continue  # a value for the other commands that take this option (format: sarif is migrate's)
            raise ConfigError(f"{where}: must be one of {', '.join(choices)}, not {value!r}")
        values[opt.key] = value
        sources[opt.key] = where
    for key, (raw_key, raw) in file_values.items():  # the file is checked whole, whichever command reads it
        opt = BY_KEY[key]
        if opt in mine:
            continue
        where = f"{config_file}: {raw_key}"
        value = convert(opt, raw, where, "file", base)
        if opt.choices is not None and value not in opt.all_choices():
            raise ConfigError(f"{where}: must be one of {', '.join(opt.all_choices())}, not {value!r}")
        if opt.type == "codes":
            _check_codes({key: value}, {key: where})
    for key in ("select", "ignore"):
        if values[key]:
            _check_codes(values, sources, key)
    return Resolved(command, list(paths), values, sources, config_file)


def convert(opt: Opt, raw: object, where: str, source: str, base: str | None) -> object:
    """The value of `opt` from its raw form: a string (command line, environment) or YAML/TOML data."""
    if opt.type == "scopes":
        return sharing_scopes(raw, where, base)
    if opt.kind == FLAG:
        if isinstance(raw, bool):
            return raw
        s = str(raw).strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
        raise ConfigError(f"{where}: expected true or false, not {raw!r}")
    if opt.kind == LIST:
        if isinstance(raw, str):
            # the environment's convention is click's: whitespace-separated; a config file's string is one item
            items: list[object] = list(raw.split()) if source == "env" else [raw]
        elif isinstance(raw, list | tuple):
            items = list(raw)
        else:
            raise ConfigError(f"{where}: expected a list")
        return [v for item in items for v in _item(opt, item, where, source, base)]
    if isinstance(raw, dict | list):
        raise ConfigError(f"{where}: expected a single value")
    return _scalar(opt, raw, where, source, base)


def sharing_scopes(raw: object, where: str, base: str | None) -> tuple[Any, ...]:
    """`sharing-scopes: [{config: FILE, paths: [GLOB, ...]}, ...]`, checked: which workloads each device plugin
    config governs (dra_migrate.lower.sharing.scope.ScopeMapping), patterns relative to the configuration file."""
    file, _sep, key = where.rpartition(": ")

    def fail(index: int | None, detail: str, message: str) -> ConfigError:
        line = _line_of(file, key, index) if file else None
        at = f"{file}:{line}: {key}" if line is not None else where
        return ConfigError(f"{at}{detail}: {message}")

    if not isinstance(raw, list):
        raise fail(None, "", "expected a list of {config: FILE, paths: [GLOB, ...]}")
    # lazy: start-up (lower.sharing.scope: ~1 ms, only sharing_scopes() needs it)
    from dra_migrate.lower.sharing.scope import ScopeMapping

    root = os.path.abspath(base) if base is not None else os.getcwd()
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or set(entry) != {"config", "paths"}:
            raise fail(i, f"[{i}]", "expected exactly the keys config and paths")
        config, paths = entry["config"], entry["paths"]
        if not isinstance(config, str) or not config:
            raise fail(i, f"[{i}].config", "expected a file path or pattern")
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p for p in paths):
            raise fail(i, f"[{i}].paths", "expected a non-empty list of path patterns")
        out.append(ScopeMapping(root, config, tuple(paths), file or where))
    return tuple(out)


def _line_of(file: str, key: str, index: int | None) -> int | None:
    """The 1-based line of `key` (or of its `index`th item) in a YAML configuration file, for a message."""
    if not file.endswith((".yaml", ".yml")):
        return None
    # lazy: start-up (yaml: ~9 ms, only _line_of() needs it)
    import yaml

    try:
        with open(file, encoding="utf-8") as fh:
            root = yaml.compose(fh)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(root, yaml.MappingNode):
        return None
    for k, v in root.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            if index is not None and isinstance(v, yaml.SequenceNode) and index < len(v.value):
                return int(v.value[index].start_mark.line) + 1
            return int(k.start_mark.line) + 1
    return None


def _item(opt: Opt, raw: object, where: str, source: str, base: str | None) -> list[object]:
    if isinstance(raw, dict | list):
        raise ConfigError(f"{where}: expected a list of single values")
    if opt.type == "codes":
        return [c for c in str(raw).replace(",", " ").split()]
    return [_scalar(opt, raw, where, source, base)]


def _scalar(opt: Opt, raw: object, where: str, source: str, base: str | None) -> object:
    if isinstance(raw, float) and opt.key == "target-version":
        raise ConfigError(f"{where}: write the version as a string (\"{raw}\"): YAML reads {raw} as a number")
    if opt.type == "int":
        try:
            n = int(str(raw).strip()) if not isinstance(raw, bool) else None
        except ValueError:
            n = None
        if n is None:
            raise ConfigError(f"{where}: expected a whole number, not {raw!r}")
        if opt.minimum is not None and n < opt.minimum:
            raise ConfigError(f"{where}: must be at least {opt.minimum}, not {n}")
        return n
    s = str(raw) if not isinstance(raw, bool) else str(raw).lower()
    if opt.type == "path":
        if not s:
            raise ConfigError(f"{where}: expected a path")
        if source == "file" and base is not None and not os.path.isabs(s):
            s = relative(os.path.join(base, s))  # a config file's paths are relative to the file

        return Path(s)
    return s


def _check_codes(values: dict[str, Any], sources: dict[str, str], only: str | None = None) -> None:
    """--select / --ignore: each a code or a prefix of at least one code (DRA7, DRA70, DRA701). A retired code
    is accepted: a configuration that ignores it stays valid."""
    # lazy: start-up (diagnostics.codes: ~1 ms, only _check_codes() needs it)
    from dra_migrate.diagnostics.codes import registered_names

    for key in [only] if only else list(values):
        checked = []
        for code in values[key]:
            c = str(code).upper()
            if not c.startswith("DRA") or not c[3:].isdigit() and c != "DRA" or len(c) > 6:
                raise ConfigError(f"{sources.get(key, '--' + key)}: {code!r} is not a code or a prefix "
                                  "of codes (DRA701, DRA7)")
            if not any(k.startswith(c) for k in registered_names()):
                raise ConfigError(f"{sources.get(key, '--' + key)}: no diagnostic code starts with {code!r} "
                                  "(dra-migrate rules lists them)")
            checked.append(c)
        values[key] = checked
