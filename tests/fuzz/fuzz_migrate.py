"""Coverage-guided fuzz target (atheris): bytes → process_source; no exception may escape and the
invariants must hold. See tests/fuzz/README.md for how to run it."""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    import yaml

    from dra_migrate.config import Options
    from dra_migrate.lower.context import RunContext
    from dra_migrate.pipeline import process_source

FORBIDDEN = {"DRA901", "DRA902", "DRA903"}  # a failed self-check or a crash is a bug, whatever the input


def check(data: bytes) -> None:
    fr = process_source("fuzz.yaml", data, RunContext(Options()))
    codes = {d.code for d in fr.diagnostics}
    bad = codes & FORBIDDEN
    if bad:
        raise AssertionError(f"{sorted(bad)}: {[d.render() for d in fr.diagnostics if d.code in bad]}")
    if fr.output is None:
        return
    assert not fr.failed
    text = fr.output.decode("utf-8").removeprefix("\ufeff")
    for _ev in yaml.parse(text, Loader=yaml.CSafeLoader):  # the output must parse
        pass
    again = process_source("fuzz.yaml", fr.output, RunContext(Options()))
    assert again.output is None or again.output == fr.output, "second run changed the output again"


def main() -> None:
    atheris.Setup(sys.argv, check)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
