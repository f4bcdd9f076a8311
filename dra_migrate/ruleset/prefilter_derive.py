"""The prefilter strings a rule set implies, and the generator of their import-free default.

A file can need the compiler only if its bytes contain one of:

- a literal form of a resource-name pattern (rules/resources.yaml): ``volcano\\.sh/v?gpu-(memory|number)``
  gives ``volcano.sh/gpu-memory``, ``volcano.sh/vgpu-memory``, ...; a pattern's expansion stops at its first
  open-ended part (``nvidia\\.com/mig-(?P<profile>...)`` gives ``nvidia.com/mig-``);
- a kind rule's ``gpuFields`` key that names a GPU on its own (matches gpu-scan.yaml's gpuWords: ``gpu``,
  ``entrypointNumGpus``), as a mapping key is written (``gpu:``, ``"gpu"``, ``'gpu'``). A GPU field whose key
  names no GPU (``resources``) is reported only for what its value names, a resource name (above) or a GPU word;
  a value that names a GPU only by word (``{GPU: 1}``) in a file without any other string is not seen;
- for a user rule pack (``--rules``), each kind it names (``Trainer``) and the keys of its documents: a pack is
  the user's statement that these objects matter, whatever their fields say.

``python -m dra_migrate.ruleset.prefilter_derive`` rewrites dra_migrate/ruleset/prefilter_default.py from the
bundled rules; tests/ruleset/test_ruleset.py checks that the file is what the command writes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from re import _constants as sre_constants
from re import _parser as sre_parser
from typing import Any

from dra_migrate.ruleset._paths import PACKAGE_DIR
from dra_migrate.ruleset.files import rules_data
from dra_migrate.ruleset.kinds import KindRule, KindRuleSet, NonWorkloadRule, load_kind_rules
from dra_migrate.ruleset.prefilters import FIXED, keep, minimal

DEFAULT_MODULE = PACKAGE_DIR / "ruleset" / "prefilter_default.py"
_MAX_FORMS = 64  # a pattern with more literal forms than this is cut at its common prefix


def _expand(items: Any) -> tuple[list[str], bool]:
    """The literal strings a parsed (sub)pattern matches, and whether they are whole (False: prefixes)."""
    forms = [""]
    for op, av in items:
        if op is sre_constants.LITERAL:
            forms = [f + chr(av) for f in forms]
            continue
        if op is sre_constants.SUBPATTERN:
            alternatives, whole = _expand(av[3])
        elif op is sre_constants.BRANCH:
            parts = [_expand(b) for b in av[1]]
            alternatives = [a for p, _w in parts for a in p]
            whole = all(w for _p, w in parts)
        elif op is sre_constants.IN and all(o is sre_constants.LITERAL for o, _v in av):
            alternatives, whole = [chr(v) for _o, v in av], True
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT) and av[0] == 0 and av[1] == 1:
            sub, whole = _expand(av[2])
            alternatives = ["", *sub]
        else:
            return forms, False
        if len(forms) * len(alternatives) > _MAX_FORMS:
            return forms, False
        forms = [f + a for f in forms for a in alternatives]
        if not whole:
            return forms, False
    return forms, True


def pattern_literals(pattern: str) -> list[str]:
    """The literal strings (or prefixes) every match of the pattern starts with."""
    forms, _whole = _expand(sre_parser.parse(pattern))
    return [f for f in dict.fromkeys(forms) if f]


def key_forms(key: str) -> list[str]:
    """How a mapping key is spelled in YAML (block and flow) and JSON."""
    return [f"{key}:", f'"{key}"', f"'{key}'"]


def resource_strings() -> list[str]:
    return [s for r in rules_data("resources.yaml")["resources"] for s in pattern_literals(r["pattern"])]


def gpu_field_strings(rules: KindRuleSet) -> list[str]:
    words = re.compile(rules_data("gpu-scan.yaml")["gpuWords"], re.IGNORECASE)
    out: list[str] = []
    for rule in rules.all():
        for gf in rule.gpu_fields:
            key = next((s for s in reversed(gf.path) if s != "*"), "")
            if key and words.search(key):
                out.extend(key_forms(key))
    return out


def pack_strings(rules: KindRuleSet, builtin: KindRuleSet) -> list[str]:
    """What user packs add: their kinds (objects the bundled rules do not name the same way) and documents."""
    bundled: list[KindRule | NonWorkloadRule] = [*builtin.all(), *builtin.non_workloads()]
    given: list[KindRule | NonWorkloadRule] = [*rules.all(), *rules.non_workloads()]
    known = {(r.group, r.kind, r.source) for r in bundled}
    out = [r.kind for r in given if (r.group, r.kind, r.source) not in known]
    documents = {d.source for d in builtin.documents()}
    out.extend(f for d in rules.documents() if d.source not in documents for k in d.keys for f in key_forms(k))
    return out


def derive(rules: KindRuleSet, builtin: KindRuleSet | None = None) -> tuple[str, ...]:
    """Every prefilter string the rule set implies (with user packs: `builtin` is the bundled rules alone)."""
    found = [*resource_strings(), *gpu_field_strings(rules)]
    if builtin is not None and builtin is not rules:
        found.extend(pack_strings(rules, builtin))
    return tuple(dict.fromkeys(found))


def derive_for(rule_dirs: Sequence[Path]) -> tuple[str, ...]:
    """The strings of a run with these --rules directories."""
    builtin = load_kind_rules(())
    return derive(load_kind_rules(tuple(rule_dirs)), builtin) if rule_dirs else derive(builtin)


def render(derived: Sequence[str]) -> str:
    """The default module: the bundled rules' strings, and with prefilters.FIXED what the run scans for."""
    migration = minimal((*FIXED, *derived))

    def table(name: str, kind: str, values: Iterable[object]) -> str:
        return f"{name}: tuple[{kind}, ...] = (\n" + "".join(f"    {v!r},\n" for v in values) + ")\n"

    return ('"""Generated by `python -m dra_migrate.ruleset.prefilter_derive` from the bundled rules: do not '
            'edit.\n\nThe prefilter strings the bundled rules imply (DERIVED: dra_migrate.ruleset.prefilter_derive) '
            'and, with\nprefilters.FIXED, what a run without --rules scans for (MIGRATION, KEEP), for the '
            'processes that must\nnot load YAML (dra_migrate.ruleset.prefilters)."""\n\n'
            + table("DERIVED", "str", derived) + "# minimal((*FIXED, *DERIVED))\n"
            + table("MIGRATION", "str", migration) + "# keep(MIGRATION)\n" + table("KEEP", "bytes", keep(migration)))


def main(argv: Sequence[str] = ()) -> int:
    text = render(derive(load_kind_rules(())))
    if "--check" in argv:
        same = DEFAULT_MODULE.read_text(encoding="utf-8") == text
        print(f"{DEFAULT_MODULE.name}: {'up to date' if same else 'out of date'}")
        return 0 if same else 1
    DEFAULT_MODULE.write_text(text, encoding="utf-8")
    print(f"wrote {DEFAULT_MODULE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
