"""What a run is asked to do (RunConfig) and what it found (RunResult), with the exit code it implies.

Apart from run.driver so that the strategies (bridge mode, the kustomize and apply-unit integrations) and the
reports can name them without importing the driver that calls them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dra_migrate.config import Options
from dra_migrate.diagnostics.model import Diagnostic, Severity
from dra_migrate.lower.context import RepoFacts
from dra_migrate.pipeline import FileResult
from dra_migrate.source.filescan import DEFAULT_MAX_BYTES

if TYPE_CHECKING:
    from dra_migrate.lower.sharing.scope import ScopeMapping

EXIT_CLEAN, EXIT_CHANGED, EXIT_ERROR = 0, 1, 2


@dataclass(slots=True)
class RunConfig:
    paths: Sequence[str]
    mode: str = "write"  # write | check | diff
    output_dir: Path | None = None
    claims_out: Path | None = None
    options: Options = field(default_factory=Options)
    excludes: Sequence[str] = ()
    max_file_size: int = DEFAULT_MAX_BYTES
    rule_dirs: Sequence[Path] = ()
    sharing_configs: Sequence[Path] = ()  # device plugin configs outside the migrated paths (--sharing-config)
    sharing_scopes: Sequence[ScopeMapping] = ()  # which workloads each config governs (sharing-scopes)
    gitignore: bool = True  # prune what .gitignore ignores from directory walks
    progress: Callable[[int, int, str], None] | None = None  # (index, total, file) before each file
    jobs: int | None = None  # worker processes; None: one per CPU when there is enough to translate
    keep_ir: bool = True  # keep each file's workload IR in the result (plan, pr); migrate needs only counts
    # Repo-wide settings beyond the run's paths (the command line's runs): the sharing configs, DeviceClasses
    # and kustomizations of the repository at context_root are read as a run over all of it would read them,
    # so that a run on a few files (a pre-commit hook's) translates them as that run would (see _context_files).
    repo_context: bool = False
    context_root: Path | None = None  # None with repo_context: no root was found (DRA120)
    config_file: str | None = None  # the configuration file the settings came from (reports anchor run findings)


@dataclass(slots=True)
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)  # run-level (discovery, writes)
    new_files: dict[str, bytes] = field(default_factory=dict)  # extra files written (claims, JSON siblings)
    diffs: list[str] = field(default_factory=list)
    scanned: int = 0
    stdin_output: bytes | None = None  # `-`: the text to print (migrated, or as read)
    # How the exit code is decided (the CLI's diagnostics policy, dra_migrate.reports.policy, sets them):
    fail_on: Severity = Severity.ERROR  # the lowest severity of a reported diagnostic that fails the run
    changes_fail: bool = True  # False for the stdin filter: its migrated text is its output, not a finding
    waived: set[str] = field(default_factory=set)  # failed files whose every error the user ignored
    facts: RepoFacts = field(default_factory=RepoFacts)  # what the run's pre-pass found (plan reads the classes)

    @property
    def all_diagnostics(self) -> list[Diagnostic]:
        out = list(self.diagnostics)
        for f in self.files:
            out.extend(f.diagnostics)
        return out

    @property
    def exit_code(self) -> int:
        fail = self.fail_on.rank
        if any(f.failed and f.path not in self.waived for f in self.files) or any(
            d.severity.rank >= fail for d in self.all_diagnostics
        ):
            return EXIT_ERROR
        if self.changes_fail and (any(f.changed for f in self.files) or self.new_files):
            return EXIT_CHANGED
        return EXIT_CLEAN
