"""Frozen slotted dataclasses that cross from worker processes pickle as one constructor call."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from dra_migrate.diagnostics import Location, make
from dra_migrate.frozen_pickle import pickle_by_fields
from dra_migrate.lint import SeenObject


def _round_trip(value: object, monkeypatch: pytest.MonkeyPatch) -> object:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    def no_fields(*_args: object) -> None:  # what dataclasses' own __setstate__ calls for every object
        raise AssertionError("unpickled through dataclasses' __setstate__")

    with monkeypatch.context() as m:
        m.setattr(dataclasses, "fields", no_fields)
        return pickle.loads(data)


def test_diagnostics_and_lint_views_survive_the_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    diag = make("DRA301", "moved to a claim", Location("a/b.yaml", 12, 5), "Deployment/ns/web", count=2)
    back = _round_trip([diag, diag], monkeypatch)
    assert isinstance(back, list)
    assert back == [diag, diag] and back[0] is back[1]  # shared objects stay shared
    assert back[0].data == {"count": 2} and back[0].location == Location("a/b.yaml", 12, 5)
    assert back[0].severity is diag.severity
    seen = SeenObject({"kind": "Pod", "metadata": {"name": "p"}}, "a/b.yaml", 3, emitted=True)
    assert _round_trip(seen, monkeypatch) == seen


def test_single_field_class() -> None:
    @pickle_by_fields
    @dataclasses.dataclass(frozen=True, slots=True)
    class One:
        value: int

    assert One.__reduce__(One(4)) == (One, (4,))


def test_keyword_only_fields_are_refused() -> None:
    with pytest.raises(TypeError, match="positional"):
        @pickle_by_fields
        @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
        class KeywordOnly:
            value: int
