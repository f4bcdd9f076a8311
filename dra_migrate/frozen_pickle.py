"""Pickling frozen slotted dataclasses as one constructor call with their field values.

Python 3.11 unpickles a frozen dataclass with slots through the __setstate__ that dataclasses adds, which
looks up fields() again for every object. Translation results cross from the worker processes by the
thousand (diagnostics, their locations, the objects the lints read) and that lookup was most of the cost
of receiving them: this halves it on both ends of the pipe.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, TypeVar

T = TypeVar("T")


def pickle_by_fields(cls: type[T]) -> type[T]:
    """Class decorator (under @dataclass): pickle as `cls(*values)`, fields in declaration order."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if any(not f.init or f.kw_only for f in fields):
        raise TypeError(f"{cls.__name__}: every field must be a positional __init__ argument")
    values = operator.attrgetter(*(f.name for f in fields))

    def __reduce__(self: Any) -> tuple[type[T], tuple[Any, ...]]:
        got = values(self)
        return cls, got if len(fields) > 1 else (got,)

    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    return cls
