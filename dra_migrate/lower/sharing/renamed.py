"""Renamed shared resources (`renameByDefault: true`): `nvidia.com/gpu.shared`, `nvidia.com/mig-<p>.shared`.

The device plugin advertised such a name only on the nodes whose config renames its replicas, so a pod asking
for it fitted there and nowhere else. GFD writes the same labels on those nodes as on nodes that time-slice
without renaming (replicas, sharing strategy; only the -SHARED product suffix is left out), and the DRA driver
publishes the same devices on every node, shared or not: neither a claim selector nor a generic node selector
keeps the pod on the renamed nodes. Only the pod's own `nvidia.com/device-plugin.config` selection can: the
nodes labelled with a config's key run that config (shared/reference/nvidia.md §B6-B7).
"""

from __future__ import annotations

from dra_migrate.lower.sharing.model import CONFIG_LABEL, SharingConfig, SharingInventory


def renamed_nodes_kept(node_selector: dict[str, str], config: SharingConfig | None) -> bool:
    """The pod's nodeSelector names the config key that renames the resource: its nodes are exactly the ones
    that advertised the renamed name, and the selector stays on the pod (DRA304)."""
    key = node_selector.get(CONFIG_LABEL)
    return key is not None and config is not None and config.key == key and config.rename_by_default


def renamed_refusal(resource: str, config: SharingConfig | None) -> str:
    """The DRA527 message: what differs, and that the pod template is left as is."""
    where = f" ({config.label})" if config is not None else ""
    return (
        f"{resource}: the device plugin advertised this renamed shared resource only on the nodes whose config "
        f"renames the replicas{where}; DRA publishes the same devices on every node, shared or not, and no node "
        "label marks the renamed ones, so a claim would fit on other nodes too: the pod template is left as is "
        f"on the device plugin (to migrate it, pin it to the config's nodes with nodeSelector {CONFIG_LABEL}: <key>)"
    )


def renaming_configs(
    inv: SharingInventory, resource: str, node_selector: dict[str, str], file: str
) -> list[SharingConfig]:
    """The configs reaching `file` that advertise `resource` only as `<resource>.shared` on their nodes: a pod
    asking for the plain name never ran there. A pod whose nodeSelector names a config key is held to that one."""
    configs, _pointers = inv.in_scope(file)
    out = [c for c in configs if c.rename_by_default and c.replicas_for(c.advertised(resource)) is not None]
    key = node_selector.get(CONFIG_LABEL)
    return [c for c in out if c.key == key] if key is not None else out


def plain_refusal(resource: str, configs: list[SharingConfig]) -> str:
    """The DRA529 message: the renamed nodes the pod never ran on would take it, and that it is left as is."""
    names = ", ".join(c.label for c in configs)
    return (
        f"{resource}: {names} advertise it only as {resource}.shared (renameByDefault) on the nodes they apply to, "
        f"so the pod never ran there; DRA publishes those GPUs as on any node and no node label marks them, so a "
        "claim would fit there too and take devices the shared pods use: the pod template is left as is on the "
        f"device plugin (to migrate it, pin it with nodeSelector {CONFIG_LABEL}: <a config key that does not "
        "rename>)"
    )


__all__ = ["plain_refusal", "renamed_nodes_kept", "renamed_refusal", "renaming_configs"]
