"""The one registry of diagnostic codes, read from its data file, ``rules/codes.yaml``.

The data file holds each code's severity, name, summary, explanation and marks (``unmigrated``, ``retired``);
its schema is ``schemas/codes.schema.json``. Codes are stable: never renumber or reuse one. A code that is no
longer emitted stays in the file with ``retired:`` (one line saying why): it is then out of ``CODES`` (so
``make`` refuses it and ``dra-migrate rules`` does not list it) but still in ``REGISTERED``, so that
``dra-migrate explain`` documents it and ``--select``/``--ignore`` in an existing configuration accept it.

The file is read on first use, not on import: every module that builds a diagnostic imports this one, and a run
that reports nothing need not parse the prose. Like the other bundled rules files it is not validated at run
time (tests/ruleset/test_bundled_rules.py does); tests/diagnostics/test_diagnostic_codes.py checks that the
registry and the source agree.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from dra_migrate.diagnostics.severity import Severity
from dra_migrate.ruleset._paths import rules_file

# How the data file lists a code, one entry a line: enough to know the codes without parsing YAML (see
# registered_names); tests/diagnostics/test_diagnostic_codes.py checks that it finds exactly the parsed file's
# codes.
_ENTRY = r"^  - code: (DRA\d{3})[ \t]*$"


# A NamedTuple, not a dataclass: the fast path imports this module (through the diagnostic model), and a
# dataclass costs ~0.7 ms to create against ~0.1 ms. Immutable all the same.
class Code(NamedTuple):
    code: str
    severity: Severity
    name: str
    summary: str
    explanation: str
    # A GPU request stays in the manifests as the device plugin's: the run could not migrate it (a patch, a
    # template, an uncovered kind, a refusal). `--strict` makes these errors; `dra-migrate rules` marks them.
    unmigrated: bool = False
    # Why the code is no longer emitted (one line); "" for a live code.
    retired: str = ""


def _code(entry: dict[str, Any]) -> Code:
    return Code(entry["code"], Severity(entry["severity"]), entry["name"], entry["summary"], entry["explanation"],
                bool(entry.get("unmigrated", False)), str(entry.get("retired", "")))


@functools.cache
def _load() -> tuple[dict[str, Code], dict[str, Code]]:
    """(every registered code, the live ones), in the data file's order."""
    # lazy: start-up (the fast path checks --select/--ignore with registered_names, without importing yaml)
    from dra_migrate.ruleset.files import rules_data

    every: dict[str, Code] = {}
    for entry in rules_data("codes.yaml")["codes"]:
        code = _code(entry)
        if code.code in every:
            raise ValueError(f"rules/codes.yaml: {code.code} is registered twice")
        every[code.code] = code
    return every, {k: c for k, c in every.items() if not c.retired}


@functools.cache
def registered_names() -> frozenset[str]:
    """Every registered code, retired ones too, read from the data file's text: what `--select`/`--ignore` may
    name, checked while the command line is resolved (also on the fast path, which parses no YAML)."""
    return frozenset(re.findall(_ENTRY, rules_file("codes.yaml").read_text(encoding="utf-8"), re.MULTILINE))


class _Registry(Mapping[str, Code]):
    """A read-only view of the registry that loads the data file the first time it is read."""

    __slots__ = ("_live",)

    def __init__(self, live: bool) -> None:
        self._live = live

    def _codes(self) -> dict[str, Code]:
        every, live = _load()
        return live if self._live else every

    def __getitem__(self, code: str) -> Code:
        return self._codes()[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._codes())

    def __len__(self) -> int:
        return len(self._codes())

    def __contains__(self, code: object) -> bool:
        return code in self._codes()


# The codes the tool emits, by code: what callers look up (severity, name, prose, `unmigrated`).
CODES: Mapping[str, Code] = _Registry(live=True)
# Every code ever registered, the retired ones too.
REGISTERED: Mapping[str, Code] = _Registry(live=False)
