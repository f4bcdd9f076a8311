"""`dra-migrate plan`: per workload, which strategy to use (rewrite / bridge / leave), why, the feature gates
it needs on the target and the risks to know. Runs the pipeline in check mode: nothing is written."""

from __future__ import annotations

import functools
import json
import sys
from typing import Any

import typer

from dra_migrate.cli.declare import command
from dra_migrate.cli.settings import Settings, run_config
from dra_migrate.diagnostics.model import Severity
from dra_migrate.ruleset.features import Target
from dra_migrate.ruleset.files import rules_data
from dra_migrate.run.driver import RunConfig, run_migration

DRA_GATE = "DynamicResourceAllocation"


@functools.lru_cache(maxsize=1)
def _risks() -> list[dict[str, str]]:
    return list(rules_data("risks.yaml")["risks"])


def _gate_info(target: Target, gate: str, gates: dict[str, bool]) -> dict[str, Any]:
    state = target.gate_state(gate)
    return {
        "gate": gate,
        "stage": state.stage,
        "onByDefault": state.stage != "absent" and target.feature_enabled(gate, {DRA_GATE: True}),
        "enabled": state.stage != "absent" and target.feature_usable(gate, gates),
    }


def build_plan(cfg: RunConfig) -> dict[str, Any]:
    """The plan for every GPU workload under cfg.paths (cfg.mode is forced to check)."""
    # lazy: start-up (run.bridge: ~1 ms, only build_plan() needs it)
    from dra_migrate.run.bridge import analyze

    cfg.mode = "check"
    opts = cfg.options
    target = Target(opts.target_version)
    result = run_migration(cfg)
    extended_ok = target.gate_state("DRAExtendedResource").stage != "absent"
    workloads: list[dict[str, Any]] = []
    for fr in result.files:
        for wl in fr.workloads:
            if not wl.needs_gpus:
                continue
            verdict = analyze(wl, result.facts.classes_for(wl.file), opts.target_version)
            lowered = [tl for tl in fr.lowered if tl.workload is wl]
            diags = [d for d in fr.diagnostics if d.object == wl.ref]
            errors = [d for d in diags if d.severity is Severity.ERROR]
            rewrite_ok = (
                not wl.blocked
                and not fr.failed
                and not errors
                and any(tl.requests and not tl.skip for tl in lowered)
            )
            bridge_ok = verdict.served and extended_ok
            bridge_default = target.feature_usable("extendedResourceName")
            why: list[str] = []
            if verdict.backed_by and set(verdict.backed_by) == set(verdict.resources):
                strategy = "leave"
                why.append(
                    "already served by DRA: "
                    + ", ".join(f"{r} by DeviceClass {c!r}" for r, c in sorted(verdict.backed_by.items()))
                )
            elif rewrite_ok and (not bridge_ok or not bridge_default):
                strategy = "rewrite"
                why.append("the rewrite translates every GPU request of this workload into claims")
                if verdict.reasons:
                    why.append("bridge mode would lose: " + "; ".join(verdict.reasons))
                elif not extended_ok:
                    why.append(
                        f"bridge mode needs DRAExtendedResource, which Kubernetes {target.version} lacks"
                    )
                else:
                    why.append(
                        "bridge mode would also serve it, but DRAExtendedResource is off by default on "
                        f"Kubernetes {target.version}"
                    )
            elif bridge_ok:
                strategy = "bridge"
                why.append(
                    "bridge mode serves it with no manifest change (" + ", ".join(verdict.resources) + ")"
                )
            else:
                strategy = "leave"
                why.append("neither strategy applies automatically; migrate by hand")
                # A refusal is often a warning (the template is left, not broken): show every reason.
                why.extend(f"{d.code}: {d.message}" for d in diags if d.severity is not Severity.INFO)
                why.extend(verdict.reasons)
            needed = [DRA_GATE]
            if strategy == "bridge":
                needed.append("DRAExtendedResource")
            if strategy == "rewrite" and any(r.alternatives for tl in lowered for r in tl.requests):
                needed.append("DRAPrioritizedList")
            when = set()
            if strategy in ("rewrite", "bridge"):
                when.add("dra")
                if not target.dra_default_on:
                    when.add("dra-off")
            if strategy == "bridge":
                when.add("bridge")
            if any(pt.pod_claims for pt in wl.pod_templates):
                when.add("claims")
            workloads.append(
                {
                    "workload": wl.ref,
                    "file": wl.file,
                    "line": wl.line,
                    "resources": verdict.resources,
                    "strategy": strategy,
                    "why": why,
                    "gates": [_gate_info(target, g, opts.feature_gates) for g in needed]
                    if strategy != "leave"
                    else [],
                    "risks": [r["note"] for r in _risks() if r["when"] in when],
                }
            )
    return {
        "target": {
            "kubernetes": target.version,
            "apiVersion": target.api_version,
            "draOnByDefault": target.dra_default_on,
        },
        "workloads": workloads,
        "inputErrors": [
            d.render()
            for f in result.files
            if f.failed
            for d in f.diagnostics
            if d.severity is Severity.ERROR
        ],
    }


def render_text(plan: dict[str, Any]) -> str:
    t = plan["target"]
    lines = [
        f"Plan for Kubernetes {t['kubernetes']} ({t['apiVersion']}"
        f"{'' if t['draOnByDefault'] else ', DRA off by default'})"
    ]
    for w in plan["workloads"]:
        lines.append("")
        lines.append(f"{w['workload']}  ({w['file']}:{w['line']}; {', '.join(w['resources'])})")
        lines.append(f"  strategy: {w['strategy']}")
        lines.extend(f"  why: {reason}" for reason in w["why"])
        for g in w["gates"]:
            state = (
                "on by default"
                if g["onByDefault"]
                else ("enabled by --feature-gates" if g["enabled"] else "OFF: enable it on the cluster")
            )
            lines.append(f"  gate: {g['gate']} ({g['stage']}, {state})")
        lines.extend(f"  risk: {note}" for note in w["risks"])
    if not plan["workloads"]:
        lines.append("no GPU workloads found")
    lines.extend(f"input error: {e}" for e in plan["inputErrors"])
    return "\n".join(lines) + "\n"


def execute(s: Settings) -> int:
    plan = build_plan(run_config(s, "check", keep_ir=True))
    if s.format == "json":
        sys.stdout.write(json.dumps(plan, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(plan))
    return 2 if plan["inputErrors"] else 0


def register(app: typer.Typer) -> None:
    command(app, "plan", execute, argument="paths", argument_help="Files or directories (recursive).",
            doc="Recommend a strategy per GPU workload (rewrite / bridge / leave), without writing anything.")
