"""GPU counts as the API server reads an extended-resource quantity: whole non-negative quantities only.

The API parses the value as a resource.Quantity ("2", 2, 2.0, "2000m" and "2e0" are all 2) and refuses one
that is not a whole number for an extended resource. Anything else is not a count; when it is a shell,
envsubst or template placeholder (`$GPUS`, `${GPUS:-1}`, `__NUM_GPUS__`, `{{ .Values.gpus }}`, `<GPUS>`),
the file is a template that something renders before it reaches the API, and the diagnostic says so.
"""

from __future__ import annotations

import re

_INT = re.compile(r"^\+?[0-9]+$")
_QUANTITY_CHARS = re.compile(r"^[+-]?[0-9.]+[eEinumkKMGTP]*[-+]?[0-9]*$")
# Placeholder spellings of the common renderers: shell/envsubst ($X, ${X...}, $(X)), Go/Jinja/Mustache templates
# ({{ }}, {% %}), token replacement (__X__, @X@, #{X}#, %X%, <X>, [[X]]).
PLACEHOLDER = re.compile(
    r"\$\{[^}]*\}?|\$\([^)]*\)?|\$[A-Za-z_][A-Za-z0-9_]*|\{\{.*?(?:\}\}|$)|\{%.*?(?:%\}|$)|__[A-Za-z0-9_]+__"
    r"|@[A-Za-z_][A-Za-z0-9_.]*@|#\{[^}]*\}#?|%[A-Za-z_][A-Za-z0-9_]*%|<[A-Za-z_][A-Za-z0-9_.-]*>|\[\[[^\]]*\]\]"
)


def parse_gpu_count(value: object) -> int | None:
    """The count, or None when it is not a whole non-negative quantity (fractions, placeholders, junk)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and value >= 0 else None
    if isinstance(value, str):
        text = value.strip()
        if _INT.match(text):
            return int(text)
        if _QUANTITY_CHARS.match(text):
            return _quantity_count(text)
    return None


def _quantity_count(text: str) -> int | None:
    # lazy: start-up (cel.quantity: ~2 ms, only _quantity_count() needs it)
    from dra_migrate.cel.quantity import QuantityError, parse_quantity  # rare spellings only

    try:
        q = parse_quantity(text)
    except (QuantityError, ValueError, OverflowError):
        return None
    v = q.value
    return int(v) if v.denominator == 1 and 0 <= v < 2**63 else None  # (beyond int64: no device count)


def placeholder_in(value: object) -> str | None:
    """The first placeholder in a count's text, or None."""
    if not isinstance(value, str):
        return None
    m = PLACEHOLDER.search(value)
    return m.group(0) if m else None
