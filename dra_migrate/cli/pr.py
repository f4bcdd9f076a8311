"""`dra-migrate pr`: migrate on a new branch, commit, write a reviewable pull request body, push.

Plain `git` through argument lists (never a shell), so paths and branch names are never interpreted.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dra_migrate.diagnostics.model import Severity
from dra_migrate.pipeline import gpu_count
from dra_migrate.ruleset._paths import TEMPLATES_DIR
from dra_migrate.run.driver import RunConfig, RunResult, run_migration

if TYPE_CHECKING:
    from dra_migrate.reports.policy import Policy

TEMPLATE_NAME = "pr_body.md.j2"


class PrError(Exception):
    """A reason to stop before (or instead of) committing; the message is for the user."""


@dataclass(slots=True)
class PrRequest:
    paths: Sequence[str]
    branch: str
    base: str = "HEAD"
    push: str | None = None
    template: Path | None = None
    allow_dirty: bool = False
    message: str | None = None
    run: RunConfig | None = None  # migration settings; paths/mode are overridden
    policy: Policy | None = None  # what is reported (--select, --ignore, --strict), as for migrate


@dataclass(slots=True)
class PrOutcome:
    repo: Path
    branch: str
    commit: str
    body: str
    result: RunResult
    changed_files: list[str] = field(default_factory=list)
    pushed: bool = False
    nothing_new: bool = False  # no file changed: no commit (and no branch, when it did not exist)
    existed: bool = False  # the branch existed: the migration was added to it


def git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise PrError(f"git {' '.join(args)} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def find_repo(paths: Sequence[str]) -> Path:
    roots: set[Path] = set()
    for p in paths:
        start = Path(p).resolve()
        directory = start if start.is_dir() else start.parent
        if not directory.exists():
            raise PrError(f"{p}: no such file or directory")
        proc = subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise PrError(f"{p} is not inside a git repository")
        roots.add(Path(proc.stdout.strip()).resolve())
    if len(roots) != 1:
        raise PrError("the paths belong to different git repositories: " + ", ".join(sorted(map(str, roots))))
    return roots.pop()


def dirty_files(repo: Path) -> list[str]:
    """Tracked files with staged or unstaged changes (untracked files are never committed by `pr`)."""
    out = git(repo, "status", "--porcelain", "--untracked-files=no")
    return [line[3:] for line in out.splitlines() if line.strip()]


def _branch_exists(repo: Path, branch: str) -> bool:
    return bool(git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False).strip())


def _current_ref(repo: Path) -> str:
    name = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    return name if name != "HEAD" else git(repo, "rev-parse", "HEAD").strip()


def create_pr(req: PrRequest) -> PrOutcome:
    repo = find_repo(req.paths)
    if git(repo, "check-ref-format", "--branch", req.branch, check=False).strip() == "":
        raise PrError(f"{req.branch!r} is not a valid branch name")
    if not req.allow_dirty:
        dirty = dirty_files(repo)
        if dirty:
            raise PrError(
                "the working tree has uncommitted changes ("
                + ", ".join(dirty[:5])
                + (", …" if len(dirty) > 5 else "")
                + "); commit or stash them, or pass --allow-dirty"
            )
    existed = _branch_exists(repo, req.branch)
    original = _current_ref(repo)
    # A branch that exists gets what is still to migrate on it (a pr run again on an up-to-date branch adds
    # nothing, not an empty commit); --base is where a new one starts.
    git(repo, "checkout", "--quiet", *((req.branch,) if existed else ("-b", req.branch, req.base)))
    cfg = req.run or RunConfig(req.paths)
    cfg.paths, cfg.mode, cfg.output_dir = list(req.paths), "write", None
    result = run_migration(cfg)
    if req.policy is not None:
        # lazy: start-up (reports.policy: ~2 ms, only create_pr() needs it)
        from dra_migrate.reports.policy import apply

        apply(req.policy, result)
    changed = [f.path for f in result.files if f.changed] + list(result.new_files)
    if not changed:
        head = git(repo, "rev-parse", "HEAD").strip()
        git(repo, "checkout", "--quiet", original)
        if not existed:
            git(repo, "branch", "--quiet", "-D", req.branch)
        return PrOutcome(repo, req.branch, head if existed else "", "", result, nothing_new=True, existed=existed)
    git(repo, "add", "--", *[str(Path(c).resolve()) for c in changed])
    subject, body = commit_message(result, cfg, req.message)
    git(repo, "commit", "--quiet", "-m", subject, "-m", body)
    commit = git(repo, "rev-parse", "HEAD").strip()
    rel = [os.path.relpath(Path(c).resolve(), repo).replace(os.sep, "/") for c in changed]
    outcome = PrOutcome(repo, req.branch, commit, "", result, sorted(rel), existed=existed)
    outcome.body = render_body(outcome, cfg, req.template)
    if req.push:
        git(repo, "push", "--quiet", req.push, req.branch)
        outcome.pushed = True
    return outcome


def _counts(result: RunResult) -> dict[str, int]:
    diags = result.all_diagnostics
    return {
        "files_scanned": result.scanned,
        "files_changed": sum(1 for f in result.files if f.changed),
        "new_files": len(result.new_files),
        "workloads": sum(f.migrated_workloads for f in result.files),
        "gpus": sum(f.gpus for f in result.files),
        "warnings": sum(1 for d in diags if d.severity is Severity.WARNING),
        "errors": sum(1 for d in diags if d.severity is Severity.ERROR),
    }


def commit_message(result: RunResult, cfg: RunConfig, message: str | None) -> tuple[str, str]:
    c = _counts(result)
    subject = message or f"Migrate {c['workloads']} GPU workload(s) from the NVIDIA device plugin to DRA"
    body = (
        f"dra-migrate rewrote nvidia.com/gpu requests as resource.k8s.io claims "
        f"(target Kubernetes {cfg.options.target_version}, {cfg.options.api_version}).\n\n"
        f"- files changed: {c['files_changed']}\n"
        f"- new files: {c['new_files']}\n"
        f"- workloads migrated: {c['workloads']} ({c['gpus']} GPU(s) in all)\n"
        f"- warnings: {c['warnings']}\n"
        f"- errors (files left untouched): {c['errors']}\n"
    )
    return subject, body


def workload_rows(result: RunResult) -> list[dict[str, Any]]:
    rows = []
    for f in result.files:
        for tl in f.lowered:
            if tl.skip or not tl.requests:
                continue
            wl = tl.workload
            selectors = [
                s
                for r in tl.requests
                for c in ([r.choice] if r.choice else [a for _, a in r.alternatives])
                for s in c.selectors
            ]
            if tl.shared_claim is not None:
                strategy = f"shared ResourceClaim {tl.shared_claim['metadata']['name']}"
            else:
                strategy = f"per-pod ResourceClaimTemplate {tl.template_name}"
            if any(r.alternatives for r in tl.requests):
                strategy += ", firstAvailable"
            if tl.config:
                strategy += ", GPU sharing config"
            rows.append(
                {
                    "kind": wl.kind,
                    "name": f"{wl.namespace}/{wl.name}" if wl.namespace else wl.name,
                    "file": f.path,
                    "line": wl.line,
                    "gpus": gpu_count(tl),
                    "selectors": selectors,
                    "strategy": strategy,
                }
            )
    return rows


def feature_gates(target: str) -> list[str]:
    minor = int(target.split(".")[1])
    gates = []
    if minor <= 33:
        api = "v1beta1" if minor <= 32 else "v1beta2"
        gates.append(
            f"`DynamicResourceAllocation=true` (beta, off by default in {target}) on kube-apiserver, "
            "kube-controller-manager, kube-scheduler and kubelet, and "
            f"`--runtime-config=resource.k8s.io/{api}=true` on kube-apiserver"
        )
    else:
        gates.append(f"none for plain claims: DRA is GA and on by default in {target}")
    gates.append("`DRAPrioritizedList` for `firstAvailable` requests (alpha in 1.33, beta and on from 1.34)")
    gates.append(
        "`DRAExtendedResource` (kube-apiserver, kube-scheduler, kube-controller-manager, kubelet) "
        "only if pods keep requesting `nvidia.com/gpu` through a DeviceClass extendedResourceName"
    )
    return gates


def render_body(outcome: PrOutcome, cfg: RunConfig, template: Path | None = None) -> str:
    # lazy: start-up (jinja2: ~16 ms, only render_body() needs it)
    import jinja2

    if template is not None:
        loader: jinja2.BaseLoader = jinja2.FileSystemLoader(str(template.resolve().parent))
        name = template.name
    else:
        loader = jinja2.FileSystemLoader(str(TEMPLATES_DIR))
        name = TEMPLATE_NAME
    env = jinja2.Environment(
        loader=loader,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["cell"] = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    result = outcome.result
    findings = [d for d in result.all_diagnostics if d.severity is not Severity.INFO]
    findings.sort(key=lambda d: (-d.severity.rank, d.location.file, d.location.line, d.code))
    return env.get_template(name).render(
        counts=_counts(result),
        workloads=workload_rows(result),
        findings=findings,
        changed_files=outcome.changed_files,
        target=cfg.options.target_version,
        api_version=cfg.options.api_version,
        feature_gates=feature_gates(cfg.options.target_version),
        branch=outcome.branch,
        commit=outcome.commit,
    )
