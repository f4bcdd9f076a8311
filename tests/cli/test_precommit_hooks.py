"""The pre-commit hook definitions. The hooks themselves run through the real `pre-commit try-repo` in
tests/installed/test_precommit.py."""

from __future__ import annotations

import yaml

from tests.conftest import REPO


def test_hook_definitions_hit_the_fast_path() -> None:
    from dra_migrate.cli.options import BY_KEY, FAST_DEFAULT, parse_argv

    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"dra-migrate", "dra-migrate-check"}
    for h in hooks.values():
        argv = h["entry"].split()[1:] + list(h.get("args", []))
        assert argv[0] == "migrate"
        _paths, given = parse_argv("migrate", [*argv[1:], "f.yaml"])
        assert all(BY_KEY[k].fast != FAST_DEFAULT for k in given), argv  # nothing that turns the fast path off
        assert h["language"] == "python"
        assert h["files"] == r"\.(ya?ml|json)$"
