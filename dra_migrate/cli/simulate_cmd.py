"""`dra-migrate simulate PATH... --inventory FILE`: would the migrated manifests schedule on this cluster?"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from dra_migrate.cli.settings import Settings

if TYPE_CHECKING:
    import typer


def _load_yaml(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return [json.loads(text)]
    return [d for d in yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if d]


def execute(s: Settings) -> int:
    """Simulate the DRA allocator on an inventory: where each claim fits, how many replicas fit at once,
    which firstAvailable alternative each gets, and near misses for claims no node can satisfy.

    Exit codes: 0 every workload can schedule, 1 some workload cannot be scheduled at all, 2 bad input.
    """
    # lazy: start-up (simulate.gfd: ~10 ms, only execute() needs it)
    from dra_migrate.simulate.gfd import inventory_from_nodes
    from dra_migrate.simulate.inventory import Inventory, iter_objects
    from dra_migrate.simulate.manifests import read_manifests
    from dra_migrate.simulate.report import SimulateOptions, render_text
    from dra_migrate.simulate.report import simulate as run

    inventory, from_nodes = s.inventory, s.inventory_from_nodes
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
        sys.stderr.write(f"cannot read the inventory: {exc}\n")
        return 2
    manifests = read_manifests(s.paths)
    report = run(manifests, inv, SimulateOptions(s.replicas, s.rollout), inventory_sources=sources)
    if s.format == "json":
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(report))
    return int(report["summary"]["exitCode"])


def register(app: typer.Typer) -> None:
    # lazy: start-up (cli.declare: ~15 ms, only register() needs it)
    from dra_migrate.cli.declare import command

    command(app, "simulate", execute, argument="paths", argument_help="Migrated manifests (files or directories).",
            doc=execute.__doc__ or "")
