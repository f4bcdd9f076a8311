"""`dra-migrate simulate PATH... --inventory FILE`: would the migrated manifests schedule on this cluster?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml


def _load_yaml(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return [json.loads(text)]
    return [d for d in yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if d]


def simulate(
    paths: Annotated[list[str], typer.Argument(help="Migrated manifests (files or directories).")],
    inventory: Annotated[
        list[Path] | None,
        typer.Option(
            "--inventory",
            help="ResourceSlices (kubectl get resourceslices -o yaml), DeviceClasses, Nodes; repeatable.",
        ),
    ] = None,
    from_nodes: Annotated[
        Path | None,
        typer.Option(
            "--inventory-from-nodes",
            help="Nodes with GPU Feature Discovery labels (kubectl get nodes "
            "-o yaml): the slices the NVIDIA DRA driver would publish.",
        ),
    ] = None,
    replicas: Annotated[
        int | None, typer.Option("--replicas", min=0, help="Pods per workload (default: spec.replicas etc.).")
    ] = None,
    rollout: Annotated[
        bool, typer.Option("--rollout", help="Replay a rolling update of each Deployment.")
    ] = False,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Simulate the DRA allocator on an inventory: where each claim fits, how many replicas fit at once,
    which firstAvailable alternative each gets, and near misses for claims no node can satisfy.

    Exit codes: 0 every workload can schedule, 1 some workload cannot be scheduled at all, 2 bad input.
    """
    from dra_migrate.simulate.gfd import inventory_from_nodes
    from dra_migrate.simulate.inventory import Inventory, iter_objects
    from dra_migrate.simulate.manifests import read_manifests
    from dra_migrate.simulate.report import SimulateOptions, render_text
    from dra_migrate.simulate.report import simulate as run

    if fmt not in ("text", "json"):
        typer.echo("--format must be text or json", err=True)
        raise typer.Exit(2)
    if not inventory and from_nodes is None:
        typer.echo("give --inventory FILE and/or --inventory-from-nodes FILE", err=True)
        raise typer.Exit(2)
    docs: list[Any] = []
    sources: list[str] = []
    try:
        for path in inventory or []:
            docs.extend(_load_yaml(path))
            sources.append(str(path))
        inv = Inventory.from_objects(docs)
        if from_nodes is not None:
            derived = inventory_from_nodes(iter_objects(_load_yaml(from_nodes)))
            inv.slices.extend(derived.slices)
            inv.nodes.update(derived.nodes)
            inv.warnings.extend(derived.warnings)
            sources.append(f"{from_nodes} (GFD labels)")
    except (OSError, UnicodeDecodeError, yaml.YAMLError, json.JSONDecodeError) as exc:
        typer.echo(f"cannot read the inventory: {exc}", err=True)
        raise typer.Exit(2) from exc
    manifests = read_manifests(paths)
    report = run(manifests, inv, SimulateOptions(replicas, rollout), inventory_sources=sources)
    if fmt == "json":
        typer.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        typer.echo(render_text(report), nl=False)
    raise typer.Exit(report["summary"]["exitCode"])


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
