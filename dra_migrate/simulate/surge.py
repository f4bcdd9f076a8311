"""Pods a rolling update may add (maxSurge) or take down (maxUnavailable): plain arithmetic, importable
without the simulator (the migration's lints use it)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def _resolve(value: Any, total: int, round_up: bool) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    text = str(value).strip()
    if text.endswith("%"):
        try:
            pct = int(text[:-1])
        except ValueError:
            return 0
        exact = pct * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    try:
        return max(int(text), 0)
    except ValueError:
        return 0


def surge_and_unavailable(strategy: Mapping[str, Any] | None, replicas: int) -> tuple[int, int] | None:
    """(maxSurge, maxUnavailable) in pods for a RollingUpdate strategy; None for Recreate."""
    strategy = strategy or {}
    if strategy.get("type") == "Recreate":
        return None
    ru = strategy.get("rollingUpdate") or {}
    surge = _resolve(ru.get("maxSurge", "25%"), replicas, True)
    unavailable = _resolve(ru.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable
