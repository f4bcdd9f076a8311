"""The run's settings as one typed model, built once per command from dra_migrate.cli.config's resolution,
and what the commands that run the migration make of it (`run_config`)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dra_migrate.cli.config import ConfigError, Resolved, resolve
from dra_migrate.cli.options import OPTIONS, RUN
from dra_migrate.config import Options, SharingOptions
from dra_migrate.ruleset.features import Target, parse_feature_gates
from dra_migrate.run.model import RunConfig

if TYPE_CHECKING:
    from dra_migrate.lower.sharing.scope import ScopeMapping
    from dra_migrate.run.model import RunConfig


@dataclasses.dataclass(slots=True)
class Settings:
    """Every option of every command (dra_migrate.cli.options declares them, with their defaults); a command
    reads the ones it takes, the others stay at their default."""

    command: str
    paths: list[str]
    config_file: Path | None
    sources: dict[str, str]  # option key → where its value was set (absent: the default)
    check: bool
    diff: bool
    output_dir: Path | None
    claims_out: Path | None
    target_version: str
    feature_gates: str
    strategy: str
    bridge_emit_gpu_class: bool
    no_validate: bool
    move_cloud_labels: bool
    sharing: str
    sharing_config: list[Path]
    sharing_scopes: tuple[ScopeMapping, ...]  # file-only (`sharing-scopes`): which workloads each config governs
    share_within_pod: bool
    no_dra_quota: bool
    exclude: list[str]
    no_gitignore: bool
    rules: list[Path]
    max_file_size: int
    strict: bool
    select: list[str]
    ignore: list[str]
    fail_on: str
    format: str
    report: list[str]
    no_progress: bool
    verbose: bool
    quiet: bool
    jobs: int | None
    branch: str | None
    base: str
    push: str | None
    body_file: Path | None
    template: Path | None
    allow_dirty: bool
    message: str | None
    inventory: list[Path]
    inventory_from_nodes: Path | None
    replicas: int | None
    rollout: bool

    @classmethod
    def of(cls, r: Resolved) -> Settings:
        fields: dict[str, Any] = {o.attr: r.values[o.key] for o in OPTIONS}
        return cls(command=r.command, paths=list(r.paths), config_file=Path(r.config_file) if r.config_file else None,
                   sources=dict(r.sources), **fields)

    @classmethod
    def defaults(cls, command: str, paths: Sequence[str], **changes: Any) -> Settings:
        """The settings with nothing configured (for callers that build them in code)."""
        values = {o.key: list(o.default) if isinstance(o.default, tuple) else o.default for o in OPTIONS}
        return dataclasses.replace(cls.of(Resolved(command, list(paths), values, {}, None)), **changes)

    def where(self, key: str) -> str:
        """Where option `key` was set, for an error message: `--key`, `DRA_MIGRATE_KEY` or `file: key`."""
        return self.sources.get(key, f"--{key}")

    @property
    def stdin(self) -> bool:
        return self.paths == ["-"]

    @property
    def mode(self) -> str:
        return "diff" if self.diff else "check" if self.check else "write"


def load(command: str, paths: Sequence[str], given: Mapping[str, object], environ: Mapping[str, str]) -> Settings:
    """The settings of one invocation; raises ConfigError for anything unusable, before any work starts."""
    return settle(resolve(command, paths, given, environ))


def settle(r: Resolved) -> Settings:
    """The typed settings of a resolution, checked for what concerns the command line as a whole."""
    s = Settings.of(r)
    command = r.command
    if command in RUN and command != "explain" and "-" in s.paths and len(s.paths) > 1:
        raise ConfigError("'-' (stdin) cannot be combined with other paths")
    if command == "pr" and "-" in s.paths:
        raise ConfigError("pr migrates files in a git repository, not stdin")
    if command == "pr" and not s.branch:
        raise ConfigError("pr needs --branch NAME (or `branch:` in the configuration)")
    if command == "simulate" and not s.inventory and s.inventory_from_nodes is None:
        raise ConfigError("give --inventory FILE and/or --inventory-from-nodes FILE")
    return s


def feature_gates(s: Settings) -> dict[str, bool]:

    try:
        return parse_feature_gates(s.feature_gates) if s.feature_gates else {}
    except ValueError as exc:
        raise ConfigError(f"{s.where('feature-gates')}: {exc}") from None


def run_config(s: Settings, mode: str, *, keep_ir: bool = False, progress: Any = None) -> RunConfig:
    """The migration run these settings describe (migrate, pr, plan and explain build theirs here)."""

    options = Options(
        target_version=s.target_version,
        api_version=Target(s.target_version).api_version,
        move_cloud_labels=s.move_cloud_labels,
        feature_gates=feature_gates(s),
        validate=not s.no_validate,
        sharing=SharingOptions(strategy=s.sharing, within_pod=s.share_within_pod),
        dra_quota=not s.no_dra_quota,
        strict=s.strict,
        strategy=s.strategy,
        bridge_emit_gpu_class=s.bridge_emit_gpu_class,
    )
    return RunConfig(
        list(s.paths),
        mode=mode,
        output_dir=s.output_dir,
        claims_out=s.claims_out,
        options=options,
        excludes=list(s.exclude),
        max_file_size=s.max_file_size,
        rule_dirs=list(s.rules),
        sharing_configs=list(s.sharing_config),
        sharing_scopes=tuple(s.sharing_scopes),
        gitignore=not s.no_gitignore,
        progress=progress,
        jobs=s.jobs,
        keep_ir=keep_ir,
        repo_context=True,
        context_root=repository_root(s.paths, s.config_file),
        config_file=str(s.config_file) if s.config_file else None,
    )


def repository_root(paths: Sequence[str], config_file: Path | None) -> Path | None:
    """Where the repo-wide settings of a run are looked for (sharing configs, DeviceClasses, kustomizations):
    the git work tree holding the first path, else the config file's directory. None without either (the run
    then reads such settings from its own paths only, and says so: DRA120)."""
    named = [p for p in paths if p != "-"]
    start = next((p for p in named if os.path.exists(p)), None)
    here = Path.cwd()
    if start is None and named:
        return None
    directory = Path(start).resolve() if start is not None else here
    if not directory.is_dir():
        directory = directory.parent
    try:
        proc = subprocess.run(["git", "-C", str(directory), "rev-parse", "--show-toplevel"], capture_output=True,
                              text=True, timeout=30, check=False)
        if proc.returncode == 0 and proc.stdout.strip():
            return Path(proc.stdout.strip()).resolve()
    except (OSError, subprocess.SubprocessError):
        pass  # no git: the other two answers
    if config_file is not None:
        return config_file.resolve().parent
    # Not the working directory: run from $HOME (or piped from anywhere) that would walk the whole home.
    return None
