"""The Kubernetes releases dra-migrate can target, in a module that imports nothing: the command line's
option declaration (dra_migrate.cli.options) validates --target-version before the compiler is imported.
dra_migrate.ruleset.features checks that rules/features.yaml describes exactly these releases."""

SUPPORTED_VERSIONS: tuple[str, ...] = ("1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
DEFAULT_TARGET = "1.34"
