from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = (REPO / ".." / "shared").resolve()
CORPUS = SHARED / "corpus" / "visible"
GOLDEN = REPO / "golden"


def require_shared() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"../shared is absent ({SHARED}): corpus tests need the shared folder beside the repo")
    return CORPUS
