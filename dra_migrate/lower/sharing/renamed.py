"""Renamed shared resources (`renameByDefault: true`): `nvidia.com/gpu.shared`, `nvidia.com/mig-<p>.shared`.

The device plugin advertised such a name only on the nodes whose config renames its replicas, so a pod asking
for it fitted there and nowhere else. GFD writes the same labels on those nodes as on nodes that time-slice
without renaming (replicas, sharing strategy; only the -SHARED product suffix is left out), and the DRA driver
publishes the same devices on every node, shared or not: neither a claim selector nor a generic node selector
keeps the pod on the renamed nodes. Only the pod's own `nvidia.com/device-plugin.config` selection can: the
nodes labelled with a config's key run that config (shared/reference/nvidia.md §B6-B7).
"""

from __future__ import annotations

from dra_migrate.lower.sharing.model import CONFIG_LABEL, SharingConfig


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


__all__ = ["renamed_nodes_kept", "renamed_refusal"]
