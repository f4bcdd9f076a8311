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


@pytest.fixture(autouse=True, scope="session")
def _private_user_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The per-user cache (CEL parser, selector verdicts) of the test session, not the developer's: a test
    never reads what another checkout or an earlier version left there. Subprocesses inherit it."""
    import os

    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
