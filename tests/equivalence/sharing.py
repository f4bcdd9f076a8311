"""Device plugin configs of a case, read independently of dra_migrate.lower.sharing (nvidia.md §B7).

A config is any string in the case's objects (ConfigMap data, the device plugin chart's `config.map`, the GPU
Operator's `devicePlugin.config.data`) or any `--sharing-config` file that parses as a mapping with `sharing`
or `flags` (`version: v1`). Its key is the mapping key that holds it (the value of the node label
nvidia.com/device-plugin.config that selects it); a sibling `default: <key>` names the default.

A repository may hold several clusters' configs: a pod takes the configs of the nearest directory above its
file that holds any (its own cluster's), else every config (a --sharing-config file, or a config kept
elsewhere and mapped to the pod).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from tests.equivalence.cluster import Sharing


@dataclass(frozen=True)
class Config:
    key: str
    sharing: Sharing | None  # None: no sharing in this config
    file: str = ""  # the file it was found in, as laid out in the case ("": a --sharing-config file)

    def replicas(self, resource: str) -> int:
        """Pods per device the config let share `resource` (an advertised name, `.shared` included)."""
        if self.sharing is None:
            return 1
        for name, n in self.sharing.replicas.items():
            if self.sharing.advertised(name) == resource:
                return n
        return 1


def parse_config(text: str) -> Sharing | None | bool:
    """The config's sharing, None for a config without sharing, False if `text` is not a config."""
    try:
        data = yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return False
    if not isinstance(data, dict) or not ({"sharing", "flags"} & set(data)) or data.get("version", "v1") != "v1":
        return False
    sharing = data["sharing"] if isinstance(data.get("sharing"), dict) else {}
    for strategy, block in (("time-slicing", sharing.get("timeSlicing")), ("mps", sharing.get("mps"))):
        if not isinstance(block, dict):
            continue
        replicas = {
            str(r["name"]): int(r["replicas"]) for r in block.get("resources") or []
            if isinstance(r, dict) and "name" in r and str(r.get("replicas", "")).isdigit()
        }
        fail = block.get("failRequestsGreaterThanOne")
        return Sharing(strategy, replicas, rename=bool(block.get("renameByDefault", False)),
                       fail_gt_one=(strategy == "mps") if fail is None else bool(fail))
    return None


@dataclass
class Configs:
    by_key: dict[str, Config]
    defaults: set[str]
    found: list[Config] = field(default_factory=list)  # every config, of every cluster

    def for_pod(self, selected_key: str | None, pod_file: str | None = None) -> list[Config]:
        """The configs that may apply to a pod in `pod_file`: the one it selects, else the default, else any."""
        pool = self._of_cluster(pod_file)
        if selected_key is not None:
            return [c for c in pool if c.key == selected_key]
        defaults = [c for c in pool if c.key in self.defaults]
        return defaults or pool

    def _of_cluster(self, pod_file: str | None) -> list[Config]:
        if pod_file is None:
            return list(self.found)
        def holds(c: Config) -> bool:
            where = posixpath.dirname(c.file)
            return bool(c.file) and (not where or pod_file.startswith(where + "/"))
        nearest = max((len(posixpath.dirname(c.file)) for c in self.found if holds(c)), default=None)
        if nearest is None:
            return list(self.found)
        return [c for c in self.found if holds(c) and len(posixpath.dirname(c.file)) == nearest]


def _walk(node: Any, found: Configs, file: str) -> None:
    if isinstance(node, dict):
        default = node.get("default")
        if isinstance(default, str) and ({"map", "data", "name", "create"} & set(node)):
            found.defaults.add(default)
        for k, v in node.items():
            if isinstance(v, str) and "\n" in v:
                parsed = parse_config(v)
                if parsed is not False:
                    found.by_key[str(k)] = Config(str(k), parsed, file)  # type: ignore[arg-type]
                    found.found.append(found.by_key[str(k)])
            else:
                _walk(v, found, file)
    elif isinstance(node, list):
        for v in node:
            _walk(v, found, file)


def find_configs(objects: Iterable[tuple[str, Mapping[str, Any]]], files: Mapping[str, str]) -> Configs:
    """Configs in the case's objects ((file, object) pairs), and in `files` (name -> text, the --sharing-config
    files, which apply to every pod)."""
    found = Configs({}, set())
    for file, obj in objects:
        _walk(obj, found, file)
    for name, text in files.items():
        parsed = parse_config(text)
        if parsed is not False:
            found.by_key[name] = Config(name, parsed)  # type: ignore[arg-type]
            found.found.append(found.by_key[name])
        else:
            try:
                for doc in yaml.load_all(text, Loader=yaml.CSafeLoader):
                    _walk(doc, found, "")
            except yaml.YAMLError:
                pass
    return found
