"""The sharing pass's second step: once the requests exist and carry the selection, the shared ResourceClaim
(or the per-device shares) the sharing pass planned (dra_migrate.lower.passes.sharing.finish)."""

from __future__ import annotations

from dra_migrate.config import SharingOptions
from dra_migrate.lower.pass_spec import Pass
from dra_migrate.lower.passes.sharing import finish

PASS = Pass(name="shared-claim", run=finish, after=("selection",), options=SharingOptions,
            codes=("DRA502", "DRA503", "DRA509", "DRA526"))
