"""Every bundled rule file satisfies its JSON schema.

The loaders skip schema validation for the bundled files (a run, e.g. a pre-commit run, should not pay for
it); this test is what catches a bundled file that breaks its schema. User rule packs (--rules) are still
validated at run time: see tests/ruleset/test_kinds.py.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from dra_migrate.ruleset import features, kinds, nvidia_cluster
from dra_migrate.ruleset import kustomize as kustomize_rules
from dra_migrate.ruleset import labels as label_rules
from dra_migrate.ruleset._paths import schema_file
from dra_migrate.ruleset.files import bundled_files

# every rules and data file with the schema dra_migrate.ruleset.files names for it, the loaders' own first
BUNDLED: list[tuple[Path, Path]] = [
    (features.RULES_FILE, features.SCHEMA_FILE),
    (label_rules.DEFAULT_RULES, label_rules.SCHEMA),
    (nvidia_cluster.RULES_FILE, nvidia_cluster.SCHEMA_FILE),
    *((f, kinds.SCHEMA_FILE) for f in sorted(kinds.KINDS_DIR.glob("*.y*ml"))),
    (kustomize_rules.RULES_FILE, kustomize_rules.SCHEMA_FILE),
]
BUNDLED += [(f, schema_file(name)) for f, name in bundled_files() if name and f not in {b[0] for b in BUNDLED}]


def _validator(schema_file: Path) -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _data(rule_file: Path) -> Any:
    return yaml.safe_load(rule_file.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("rule_file", "schema_file"), BUNDLED, ids=lambda p: p.name)
def test_bundled_rule_file_matches_its_schema(rule_file: Path, schema_file: Path) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in _validator(schema_file).iter_errors(_data(rule_file))]
    assert errors == []


NEW_SCHEMAS = ("resources.schema.json", "gpu-scan.schema.json", "risks.schema.json", "devices.schema.json")


BROKEN = [*BUNDLED[:3], *(b for b in BUNDLED if b[1].name in NEW_SCHEMAS)]


@pytest.mark.parametrize(("rule_file", "schema_file"), BROKEN,
                         ids=lambda p: p.name)
def test_the_check_above_would_catch_a_broken_file(rule_file: Path, schema_file: Path) -> None:
    broken = copy.deepcopy(_data(rule_file))
    broken["misspelt_section"] = {}
    assert list(_validator(schema_file).iter_errors(broken))


def test_every_bundled_file_has_a_schema() -> None:
    # a new rules or data file must get a schema in schemas/ and an entry in dra_migrate.ruleset.files.SCHEMAS
    assert [f for f, name in bundled_files() if not name] == []
    assert {f for f, _name in bundled_files()} == {f for f, _s in BUNDLED}
    assert {s.name for _f, s in BUNDLED} >= {"resources.schema.json", "gpu-scan.schema.json", "risks.schema.json",
                                             "devices.schema.json", "simulate-nvidia.schema.json"}
    # the loaders' own schema names agree with the map
    for f, name in bundled_files():
        assert (f, schema_file(name)) in BUNDLED


def test_run_time_loaders_give_the_same_data_as_validating_ones() -> None:
    assert features.load_features() == features.load_features_from(features.RULES_FILE, validate=True)
    assert label_rules.load_label_rules() == label_rules.load_label_rules(label_rules.DEFAULT_RULES)


def test_user_supplied_files_are_still_validated(tmp_path: Path) -> None:
    data = _data(label_rules.DEFAULT_RULES)
    data["labels"]["nvidia.com/gpu.product"]["policy"] = "maybe"
    bad = tmp_path / "labels.yaml"
    bad.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(jsonschema.ValidationError):
        label_rules.load_label_rules(bad)
    fdata = _data(features.RULES_FILE)
    fdata["unknown_top_level"] = 1
    fbad = tmp_path / "features.yaml"
    fbad.write_text(yaml.safe_dump(fdata), encoding="utf-8")
    with pytest.raises(features.FeatureDataError, match="features.schema.json"):
        features.load_features_from(fbad)
