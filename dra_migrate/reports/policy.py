"""What a team tunes about the diagnostics of a run (ruff and kube-linter style), applied to the run's result
before anything is reported, so that every report and the exit code agree:

- `--strict`: every diagnostic whose code leaves a GPU request unmigrated (`unmigrated` in the code
  registry: kustomize patches, Helm templates and values, uncovered kinds, refusals) is an error;
- `--select` / `--ignore`: codes or prefixes (`DRA3`, `DRA701`) reported, or not; an ignored diagnostic
  fails nothing, and a file refused only for ignored errors does not fail the run (it is still untouched);
- `--fail-on warning`: a reported warning fails the run (exit 2) as an error does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dra_migrate.diagnostics.model import Diagnostic, Severity

if TYPE_CHECKING:
    from dra_migrate.run.model import RunResult


@dataclasses.dataclass(frozen=True, slots=True)
class Policy:
    select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    strict: bool = False
    fail_on: str = "error"

    def reported(self, code: str) -> bool:
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        return not any(code.startswith(p) for p in self.ignore)

    def adjust(self, d: Diagnostic) -> Diagnostic | None:
        """The diagnostic as reported, or None when it is not."""
        if not self.reported(d.code):
            return None
        if self.strict and d.severity is not Severity.ERROR:
            # lazy: start-up (diagnostics.codes: ~1 ms, only adjust() needs it)
            from dra_migrate.diagnostics.codes import CODES

            code = CODES.get(d.code)
            if code is not None and code.unmigrated:
                return dataclasses.replace(d, severity=Severity.ERROR)
        return d


def apply(policy: Policy, result: RunResult) -> None:
    """Filter and re-grade `result`'s diagnostics in place, and set how its exit code is decided."""
    result.fail_on = Severity.WARNING if policy.fail_on == "warning" else Severity.ERROR
    if not policy.select and not policy.ignore and not policy.strict:
        return
    result.diagnostics = _adjusted(policy, result.diagnostics)
    for f in result.files:
        before = f.diagnostics
        f.diagnostics = _adjusted(policy, before)
        if f.failed and not any(d.severity is Severity.ERROR for d in f.diagnostics) and any(
            d.severity is Severity.ERROR for d in before
        ):
            result.waived.add(f.path)


def _adjusted(policy: Policy, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    out = []
    for d in diagnostics:
        a = policy.adjust(d)
        if a is not None:
            out.append(a)
    return out
