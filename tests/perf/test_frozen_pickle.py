"""Frozen slotted dataclasses that cross from worker processes pickle as one constructor call, registered
with copyreg by perf/ (the fork executor), not by decorators on the core types."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from dra_migrate.check.lint import SeenObject
from dra_migrate.diagnostics.model import Location, make
from dra_migrate.perf import frozen_pickle


def _round_trip(value: object, monkeypatch: pytest.MonkeyPatch) -> object:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    def no_fields(*_args: object) -> None:  # what dataclasses' own __setstate__ calls for every object
        raise AssertionError("unpickled through dataclasses' __setstate__")

    with monkeypatch.context() as m:
        m.setattr(dataclasses, "fields", no_fields)
        return pickle.loads(data)


def test_the_fork_executor_registers_the_result_types() -> None:
    import copyreg

    from dra_migrate.diagnostics.model import Diagnostic
    from dra_migrate.perf import parallel  # noqa: F401 - importing it registers them

    assert {Diagnostic, Location, SeenObject} <= set(copyreg.dispatch_table)


def test_diagnostics_and_lint_views_survive_the_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen_pickle.register_results()
    diag = make("DRA301", "moved to a claim", Location("a/b.yaml", 12, 5), "Deployment/ns/web", count=2)
    back = _round_trip([diag, diag], monkeypatch)
    assert isinstance(back, list)
    assert back == [diag, diag] and back[0] is back[1]  # shared objects stay shared
    assert back[0].data == {"count": 2} and back[0].location == Location("a/b.yaml", 12, 5)
    assert back[0].severity is diag.severity
    seen = SeenObject({"kind": "Pod", "metadata": {"name": "p"}}, "a/b.yaml", 3, emitted=True)
    assert _round_trip(seen, monkeypatch) == seen


def test_single_field_class() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class One:
        value: int

    assert frozen_pickle.reducer(One)(One(4)) == (One, (4,))


def test_keyword_only_fields_are_refused() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class KeywordOnly:
        value: int

    with pytest.raises(TypeError, match="positional"):
        frozen_pickle.register(KeywordOnly)
