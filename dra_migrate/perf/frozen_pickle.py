"""Pickling frozen slotted dataclasses as one constructor call with their field values.

Python 3.11 unpickles a frozen dataclass with slots through the __setstate__ that dataclasses adds, which
looks up fields() again for every object. Translation results cross from the worker processes by the
thousand (diagnostics, their locations, the objects the lints read) and that lookup was most of the cost
of receiving them: this halves it on both ends of the pipe.

The reducers are registered with copyreg (the table every pickler, multiprocessing's included, consults
before a class's own __reduce_ex__), by the code that sends these objects between processes: the fork
executor (perf.parallel) and the scout (perf.scout), so the core types know nothing of it. Unpickling
needs no registration: the pickle names the class and its arguments.
"""

from __future__ import annotations

import copyreg
import dataclasses
import operator
from collections.abc import Callable
from typing import Any

Reducer = Callable[[Any], tuple[type, tuple[Any, ...]]]


def reducer(cls: type) -> Reducer:
    """`obj -> (cls, field values)`: pickle as `cls(*values)`, fields in declaration order."""
    fields = dataclasses.fields(cls)
    if any(not f.init or f.kw_only for f in fields):
        raise TypeError(f"{cls.__name__}: every field must be a positional __init__ argument")
    values = operator.attrgetter(*(f.name for f in fields))
    single = len(fields) == 1

    def reduce(obj: Any) -> tuple[type, tuple[Any, ...]]:
        got = values(obj)
        return cls, (got,) if single else got

    return reduce


def register(*classes: type) -> None:
    """Pickle each of `classes` (exactly those, not subclasses) by its fields from now on, in this process
    and in the processes it forks."""
    for cls in classes:
        if cls not in copyreg.dispatch_table:
            copyreg.pickle(cls, reducer(cls))


def register_results() -> None:
    """The frozen slotted dataclasses of a translation's result that cross between processes by the
    thousand: diagnostics and their locations, the objects the lints read."""
    # lazy: start-up (the scout imports this module in its child, before the compiler: it needs register_walk)
    from dra_migrate.check.lint import SeenObject
    from dra_migrate.diagnostics.model import Diagnostic, Location

    register(Diagnostic, Location, SeenObject)


def register_walk() -> None:
    """What the scout sends besides files: the walk's diagnostics."""
    from dra_migrate.diagnostics.model import Diagnostic, Location  # lazy: start-up (see register_results)

    register(Diagnostic, Location)
