"""The cyclic garbage collector, paused while the process loads what it keeps for the whole run.

Start-up (imports, kind rules) and the first translation (schemas, validators, CEL environment, label
tables) allocate objects that all live to the end; the collector visits them over and over (~80
collections before the first file of a 10,000-file run) and frees nothing. The CLI pauses it when it
starts a migrate run (the commands it hands to typer get it back at once); the run resumes it once the
first file is translated, before anything that makes garbage in bulk, and in any case when it ends. A run
that translates nothing only reads files: their bytes are not tracked and leave no cycles. Library callers
never pause it.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Undo pause(); a no-op unless pause() disabled the collector."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
