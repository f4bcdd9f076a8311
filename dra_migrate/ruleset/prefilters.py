"""The byte strings that make a file worth a closer look, in a module that imports only its generated default.

Most of them are derived from the rule set (dra_migrate.ruleset.prefilter_derive): the literal forms of the
resource-name patterns (rules/resources.yaml) and the kind rules' GPU-naming ``gpuFields`` keys. The bundled
rules' share is generated into dra_migrate.ruleset.prefilter_default, so the processes that read a repository
without the compiler (the pre-commit fast path, dra_migrate.entry, and the scout) need no YAML to know it.
A run with ``--rules`` adds its pack's strings (its kinds, their GPU fields) through :func:`use`.

The compiler's modules read MIGRATION / MIGRATION_BYTES / KEEP from this module at call time (``prefilters.X``,
not ``from ... import X``): :func:`use` rebinds them for the run.
"""

from dra_migrate.ruleset import prefilter_default

# Not derived from the rules (the hand-kept list of before the derivation, kept whole so that no file the
# run looked at before is skipped now): the vendor's domains (node labels, annotations and config keys the
# label rules and lints read, beyond the resource names), what the scheduling lints read of already-DRA
# objects (resource.k8s.io / resourceClaim), and the KAI scheduler's fraction annotations
# (dra_migrate.lower.passes.other_schemes.KAI_ANNOTATIONS).
FIXED = ("nvidia.com", "ResourceClaimTemplate", "volcano.sh/gpu", "volcano.sh/vgpu", "gpu-fraction", "gpu-memory",
         "resource.k8s.io", "resourceClaim")
# A DeviceClass that maps an extended resource to DRA (the bridge's pre-pass).
CLASS = b"extendedResourceName"
# A device plugin sharing config, or what points at one (the sharing pre-pass); the config label is
# dra_migrate.lower.sharing.model.CONFIG_LABEL.
SHARING = (b"timeSlicing", b"mps:", b"sharing:", b"devicePlugin", b"nvidia.com/device-plugin.config",
           b"mig.strategy", b"migStrategy")


def minimal(strings: tuple[str, ...]) -> tuple[str, ...]:
    """The strings in order, without duplicates and without those that contain another one (found anyway)."""
    unique = tuple(dict.fromkeys(strings))
    return tuple(s for s in unique if not any(t != s and t in s for t in unique))


def keep(migration: tuple[str, ...]) -> tuple[bytes, ...]:
    """What makes the read keep a file: it may need migration, or holds a repo-wide setting for the pre-pass."""
    return tuple(s.encode() for s in minimal((*migration, CLASS.decode(), *(s.decode() for s in SHARING))))


# What may need migration (a workload that may hold a GPU request, or an object the lints read), and what
# the read keeps, for the bundled rules: minimal((*FIXED, *DERIVED)) and keep() of it, generated (the fast
# path starts with them; computing them here would cost it half a millisecond).
DEFAULT: tuple[str, ...] = prefilter_default.MIGRATION
DEFAULT_KEEP: tuple[bytes, ...] = prefilter_default.KEEP
MIGRATION: tuple[str, ...] = DEFAULT
MIGRATION_BYTES: tuple[bytes, ...] = tuple(p.encode() for p in MIGRATION)
KEEP: tuple[bytes, ...] = DEFAULT_KEEP


def use(derived: tuple[str, ...]) -> None:
    """This run's strings: the defaults and what its rule set derives (the same as the defaults without
    --rules). Called once the rules are loaded, before any file is read; a later run calls it again."""
    global MIGRATION, MIGRATION_BYTES, KEEP
    MIGRATION = minimal((*DEFAULT, *derived))
    MIGRATION_BYTES = tuple(p.encode() for p in MIGRATION)
    KEEP = keep(MIGRATION)


def extended() -> bool:
    """Whether this run scans for more than the defaults (a process that started with them is of no use)."""
    return MIGRATION != DEFAULT
