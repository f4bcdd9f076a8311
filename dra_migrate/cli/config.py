"""Defaults for command options from `.dra-migrate.yaml` / `[tool.dra-migrate]` and DRA_MIGRATE_* variables.

Click's `default_map` sits below the command line and above the built-in defaults, so merging
environment over file here gives: CLI > environment > config file > default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

CONFIG_NAMES = (".dra-migrate.yaml", ".dra-migrate.yml")
ENV_PREFIX = "DRA_MIGRATE_"


class ConfigError(Exception):
    pass


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """Walk up from `start` to the first `.dra-migrate.yaml` or pyproject.toml with [tool.dra-migrate]."""
    p = start.resolve()
    if not p.is_dir():
        p = p.parent
    for d in (p, *p.parents):
        for name in CONFIG_NAMES:
            f = d / name
            if f.is_file():
                return f, _load_yaml(f)
        pp = d / "pyproject.toml"
        if pp.is_file():
            section = _load_pyproject(pp)
            if section is not None:
                return pp, section
        if (d / ".git").exists():  # the repository root bounds the search
            break
    return None


def _load_yaml(f: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{f}: cannot read the configuration: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{f}: the configuration must be a mapping of option names to values")
    return data


def _load_pyproject(f: Path) -> dict[str, Any] | None:
    import tomllib

    try:
        data = tomllib.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{f}: cannot read: {exc}") from None
    section = data.get("tool", {}).get("dra-migrate")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ConfigError(f"{f}: [tool.dra-migrate] must be a table")
    return section


def _options(command: Any) -> dict[str, Any]:
    """Option key ('target-version', as in config files) → click option."""
    out: dict[str, Any] = {}
    for p in command.params:
        if getattr(p, "param_type_name", "") == "option":  # typer vendors click: no isinstance
            longs = [o for o in p.opts if o.startswith("--")]
            if longs and not p.hidden and p.name not in ("help",):
                out[longs[0][2:]] = p
    return out


def env_name(key: str) -> str:
    return ENV_PREFIX + key.upper().replace("-", "_")


def default_map(
    command: Any, file_values: Mapping[str, Any], environ: Mapping[str, str], source: str = "configuration"
) -> dict[str, Any]:
    opts = _options(command)
    out: dict[str, Any] = {}
    for raw_key, value in file_values.items():
        key = str(raw_key).replace("_", "-")
        if key not in opts:
            raise ConfigError(f"{source}: unknown option {raw_key!r} (known: {', '.join(sorted(opts))})")
        out[opts[key].name or key] = _coerce(opts[key], value, f"{source}: {raw_key}")
    for key, opt in opts.items():
        env = env_name(key)
        if env in environ:
            out[opt.name or key] = _coerce(opt, environ[env], env)
    return out


def _coerce(opt: Any, value: Any, where: str) -> Any:
    if opt.multiple:
        if isinstance(value, str):
            value = value.split()  # click's convention for multi-value environment variables
        if not isinstance(value, Sequence):
            raise ConfigError(f"{where}: expected a list")
        return [str(v) for v in value]
    if opt.is_flag:
        if isinstance(value, bool):
            return value
        s = str(value).strip().lower()
        if s in ("1", "true", "yes", "on"):
            return True
        if s in ("0", "false", "no", "off", ""):
            return False
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    if isinstance(value, (dict, list)):
        raise ConfigError(f"{where}: expected a single value")
    return str(value) if not isinstance(value, bool) else value


def first_path(args: Sequence[str]) -> Path:
    for a in args[1:]:
        if not a.startswith("-") and a != "-" and os.path.exists(a):
            return Path(a)
    return Path.cwd()


def build_default_map(group: Any, argv: Sequence[str], environ: Mapping[str, str]) -> dict[str, Any]:
    """{'migrate': {...}} for the command named in argv, or {} when it takes no configuration."""
    if not argv or argv[0] != "migrate":
        return {}
    command = group.commands.get("migrate") if hasattr(group, "commands") else None
    if command is None:
        return {}
    found = find_config(first_path(argv))
    values: dict[str, Any] = {}
    source = "configuration"
    if found is not None:
        source = str(found[0])
        values = found[1]
    dm = default_map(command, values, environ, source)
    return {"migrate": dm} if dm else {}
