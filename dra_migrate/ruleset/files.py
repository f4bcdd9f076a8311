"""The one reader of dra-migrate's bundled rules and data files, and the map of which schema checks each.

Every file under ``rules/`` (the diagnostic codes of ``rules/codes.yaml`` too), and the device data
(``dra_migrate/data/devices``), has a JSON schema in ``schemas/``. The bundled files are checked by the test
suite (tests/ruleset/test_ruleset.py), not on every run: schema validation costs far more than loading. User rule
packs (``--rules DIR``) are checked when loaded, with file:line errors (dra_migrate.ruleset.kinds).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import yaml

from dra_migrate.ruleset._paths import DATA_DIR, RULES_DIR, rules_file, schema_file

# The C loader is several times faster and these files load on every run that finds a GPU file.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Bundled file (a glob under rules/, or data/...) → its schema, under schemas/.
SCHEMAS: dict[str, str] = {
    "rules/kinds/*.yaml": "kind-rules.schema.json",
    "rules/features.yaml": "features.schema.json",
    "rules/labels.yaml": "labels.schema.json",
    "rules/kustomize.yaml": "kustomize.schema.json",
    "rules/resources.yaml": "resources.schema.json",
    "rules/gpu-scan.yaml": "gpu-scan.schema.json",
    "rules/risks.yaml": "risks.schema.json",
    "rules/autoscalers.yaml": "autoscalers.schema.json",
    "rules/codes.yaml": "codes.schema.json",
    "rules/simulate/*.yaml": "simulate-nvidia.schema.json",
    "data/devices/*.yaml": "devices.schema.json",
}


@functools.cache
def rules_data(name: str) -> Any:
    """A bundled rules file, parsed (``"resources.yaml"``)."""
    return yaml.load(rules_file(name).read_text(encoding="utf-8"), Loader=_LOADER)  # noqa: S506 (safe loader)


@functools.cache
def schema(name: str) -> Any:
    return json.loads(schema_file(name).read_text(encoding="utf-8"))


def bundled_files() -> list[tuple[Path, str]]:
    """Every bundled rules and data file with its schema's name; a file no entry of SCHEMAS covers has ""."""
    out: list[tuple[Path, str]] = []
    for root, shown in ((RULES_DIR, "rules"), (DATA_DIR, "data")):
        for path in sorted(root.rglob("*")):
            if not path.is_file() or path.suffix not in (".yaml", ".yml", ".json"):
                continue
            rel = f"{shown}/{path.relative_to(root).as_posix()}"
            name = next((s for pattern, s in SCHEMAS.items() if Path(rel).match(pattern)), "")
            out.append((path, name))
    return out
