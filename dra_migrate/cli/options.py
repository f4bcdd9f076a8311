"""Every option of every command, declared once.

The typer commands are built from these declarations (dra_migrate.cli.declare), configuration files and
DRA_MIGRATE_* variables are read through them (dra_migrate.cli.config), and the pre-commit entry parses its
command line with them before anything else is imported (dra_migrate.entry). So this module imports nothing.

Each option says which commands take it, and `fast`: what the entry's fast path may do when the option is
set. Files without a GPU key are settled without the compiler only while no option could change that
answer: FAST_ANY options cannot (a target version changes what a GPU request becomes, not whether a file has
one); FAST_DEFAULT options can only at a value other than their default (--rules adds kinds, --sharing-config
reads other files and reports them, --format json prints a document the compiler's report writer builds).
"""

from __future__ import annotations

from dra_migrate.ruleset.targets import DEFAULT_TARGET, SUPPORTED_VERSIONS

TYPE_CHECKING = False  # the entry imports this module before anything else, typing included
if TYPE_CHECKING:
    from collections.abc import Sequence

# The commands that run the migration, and those that also report diagnostics.
RUN = ("migrate", "pr", "plan", "explain")
REPORTING = ("migrate", "pr", "explain")
FLAG, VALUE, LIST = "flag", "value", "list"
FAST_ANY, FAST_DEFAULT = "any", "default"
FORMATS = ("text", "json", "sarif", "github")


class Opt:
    """One option: its key (`target-version`: the long flag without `--`, the config file key, and
    DRA_MIGRATE_TARGET_VERSION), its kind (FLAG, VALUE or LIST, repeatable) and the type of its value:
    str, int, path (relative to the config file when set there), codes (diagnostic codes or prefixes,
    comma-separated or repeated), or scopes (`sharing-scopes`, a config-file-only list of mappings)."""

    __slots__ = ("attr", "choices", "commands", "default", "fast", "file_only", "flags", "help", "key", "kind",
                 "metavar", "minimum", "type")

    def __init__(
        self, key: str, kind: str, default: object, help: str, *, short: str | None = None,
        commands: Sequence[str] = RUN, choices: dict[str, tuple[str, ...]] | tuple[str, ...] | None = None,
        type: str = "str", fast: str = FAST_ANY, metavar: str | None = None, minimum: int | None = None,
        file_only: bool = False,
    ) -> None:
        self.key = key
        self.attr = key.replace("-", "_")
        self.kind = kind
        self.default = default
        self.help = help
        # a file-only setting (structured data) has no flag and no DRA_MIGRATE_* variable
        self.file_only = file_only
        self.flags: tuple[str, ...] = () if file_only else ("--" + key, short) if short else ("--" + key,)
        self.commands = tuple(commands)
        self.choices = choices
        self.type = type
        self.fast = fast
        self.metavar = metavar
        self.minimum = minimum

    def choices_for(self, command: str) -> tuple[str, ...] | None:
        if isinstance(self.choices, dict):
            return self.choices.get(command, self.choices.get("*"))
        return self.choices

    def all_choices(self) -> tuple[str, ...]:
        if isinstance(self.choices, dict):
            return tuple(dict.fromkeys(c for cs in self.choices.values() for c in cs))
        return self.choices or ()


_MIGRATE = ("migrate",)
_SIMULATE = ("simulate",)
_PR = ("pr",)

OPTIONS: tuple[Opt, ...] = (
    # what the run does with the files
    Opt("check", FLAG, False, "Write nothing; exit 1 if anything would change (each file is named).",
        commands=_MIGRATE),
    Opt("diff", FLAG, False, "Print a unified diff; write nothing.", commands=_MIGRATE),
    Opt("output-dir", VALUE, None, "Write the migrated tree here.", commands=_MIGRATE, type="path",
        fast=FAST_DEFAULT, metavar="DIR"),
    Opt("claims-out", VALUE, None, "Put new ResourceClaimTemplates in this FILE (.yaml) or DIR.", type="path",
        metavar="FILE|DIR"),
    # what the migration emits
    Opt("target-version", VALUE, DEFAULT_TARGET, "Kubernetes version to target.",
        choices=SUPPORTED_VERSIONS, metavar="X.Y"),
    Opt("feature-gates", VALUE, "", "Gates the cluster sets beyond the defaults: Name=true,Other=false.",
        fast=FAST_DEFAULT, metavar="GATES"),
    Opt("strategy", VALUE, "rewrite", "rewrite (GPU requests → claims) or extended-resource (bridge: keep "
        "requests, emit DeviceClasses).", choices=("rewrite", "extended-resource")),
    Opt("bridge-emit-gpu-class", FLAG, False, "Bridge: also emit a class for nvidia.com/gpu (the chart has one)."),
    Opt("no-validate", FLAG, False, "Skip official-schema validation."),
    Opt("move-cloud-labels", FLAG, False, "Move provider GPU labels (GKE, Karpenter…) into the claim too."),
    Opt("sharing", VALUE, "shared-claim", "Time-sliced/MPS GPUs: shared-claim (one named ResourceClaim per "
        "workload within the replicas), exclusive (whole GPUs) or consumable (per-pod shares, "
        "DRAConsumableCapacity).", choices=("shared-claim", "exclusive", "consumable")),
    Opt("sharing-config", LIST, (), "A device plugin config (ConfigMap, values or config file) kept elsewhere "
        "(repeatable).", type="path", fast=FAST_DEFAULT, metavar="FILE"),
    Opt("sharing-scopes", VALUE, (), "Which workloads each device plugin config governs: a list of {config: "
        "FILE, paths: [GLOB, ...]}, relative to the configuration file (configuration file only).",
        type="scopes", fast=FAST_DEFAULT, file_only=True),
    Opt("share-within-pod", FLAG, False, "Containers of one pod share one GPU request."),
    Opt("no-dra-quota", FLAG, False, "Report GPU ResourceQuotas but do not add the DRA device-class entry."),
    # which files
    Opt("exclude", LIST, (), "Glob of paths to skip in directory walks (repeatable).", metavar="GLOB"),
    Opt("no-gitignore", FLAG, False, "Also walk into .gitignore'd paths."),
    Opt("rules", LIST, (), "Extra rule directory (repeatable).", type="path", fast=FAST_DEFAULT, metavar="DIR"),
    Opt("max-file-size", VALUE, 8 * 1024 * 1024, "Skip larger files (bytes).", type="int", minimum=1,
        metavar="BYTES"),
    # what fails the run, and what is reported
    Opt("strict", FLAG, False, "Every GPU request left unmigrated (kustomize patches, Helm templates and values, "
        "uncovered kinds, skip annotations) is an error."),
    Opt("select", LIST, (), "Report only these codes or prefixes (DRA3, DRA701; comma-separated or repeated).",
        type="codes", commands=REPORTING, metavar="CODES"),
    Opt("ignore", LIST, (), "Do not report these codes or prefixes; they fail nothing.", type="codes",
        commands=REPORTING, metavar="CODES"),
    Opt("fail-on", VALUE, "error", "Lowest severity that fails the run (exit 2): error or warning.",
        choices=("error", "warning"), commands=REPORTING),
    Opt("format", VALUE, "text", "What stdout carries: text, json, sarif or github (migrate); text or json "
        "(plan, explain, simulate).", choices={"migrate": FORMATS, "*": ("text", "json")},
        commands=("migrate", "plan", "explain", "simulate"), fast=FAST_DEFAULT),
    Opt("report", LIST, (), "Also write FORMAT=FILE (repeatable).", commands=("migrate", "pr"),
        fast=FAST_DEFAULT, metavar="FORMAT=FILE"),
    Opt("no-progress", FLAG, False, "No progress bar or summary table.", commands=_MIGRATE),
    Opt("verbose", FLAG, False, "Show informational diagnostics and every repeat.", short="-v",
        commands=("migrate", "explain")),
    Opt("quiet", FLAG, False, "Only errors.", short="-q", commands=_MIGRATE),
    Opt("jobs", VALUE, None, "Worker processes (default: one per CPU when over 200 files have GPU keys; 1: "
        "serial).", short="-j", type="int", minimum=1, metavar="N"),
    # pr
    Opt("branch", VALUE, None, "Name of the branch to create (or to add to, when it exists).", commands=_PR,
        metavar="NAME"),
    Opt("base", VALUE, "HEAD", "Start a new branch from this ref.", commands=_PR, metavar="REF"),
    Opt("push", VALUE, None, "Push the branch to this remote.", commands=_PR, metavar="REMOTE"),
    Opt("body-file", VALUE, None, "Write the PR body here (not stdout).", commands=_PR, type="path",
        metavar="FILE"),
    Opt("template", VALUE, None, "Jinja2 template for the PR body.", commands=_PR, type="path", metavar="FILE"),
    Opt("allow-dirty", FLAG, False, "Proceed with uncommitted changes.", commands=_PR),
    Opt("message", VALUE, None, "Commit subject.", commands=_PR, metavar="MSG"),
    # simulate
    Opt("inventory", LIST, (), "ResourceSlices (kubectl get resourceslices -o yaml), DeviceClasses, Nodes "
        "(repeatable).", commands=_SIMULATE, type="path", metavar="FILE"),
    Opt("inventory-from-nodes", VALUE, None, "Nodes with GPU Feature Discovery labels (kubectl get nodes -o "
        "yaml): the slices the NVIDIA DRA driver would publish.", commands=_SIMULATE, type="path",
        metavar="FILE"),
    Opt("replicas", VALUE, None, "Pods per workload (default: spec.replicas etc.).", commands=_SIMULATE,
        type="int", minimum=0, metavar="N"),
    Opt("rollout", FLAG, False, "Replay a rolling update of each Deployment.", commands=_SIMULATE),
)

BY_KEY: dict[str, Opt] = {o.key: o for o in OPTIONS}


def for_command(command: str) -> tuple[Opt, ...]:
    return tuple(o for o in OPTIONS if command in o.commands)


# A command line the full CLI parses: --help, completion, or something malformed (click words the error).
class Unparsed(Exception):
    pass


def parse_argv(command: str, args: Sequence[str]) -> tuple[list[str], dict[str, object]]:
    """(positional arguments, {key: value given}) for `command`'s arguments, as click would parse them: a
    VALUE option's last occurrence wins, a LIST option's occurrences add up, `--` ends the options. Values
    stay strings (dra_migrate.cli.config converts and checks them, for every source alike). Raises Unparsed
    for what only the full CLI handles: --help, unknown options, a missing value, bundled short flags."""
    by_flag = {f: o for o in for_command(command) for f in o.flags}
    positional: list[str] = []
    given: dict[str, object] = {}
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        i += 1
        if a == "--":
            positional.extend(args[i:])
            break
        if a == "-" or not a.startswith("-"):
            positional.append(a)
            continue
        if a.startswith("--"):
            name, eq, attached = a.partition("=")
        elif len(a) > 2 and a[:2] in by_flag and by_flag[a[:2]].kind != FLAG:
            name, eq, attached = a[:2], "=", a[2:]  # -j2
        else:
            name, eq, attached = a, "", ""  # (bundled short flags, -vq, are click's to parse)
        opt = by_flag.get(name)
        if opt is None:
            raise Unparsed(a)
        if opt.kind == FLAG:
            if eq:
                raise Unparsed(a)
            given[opt.key] = True
            continue
        if eq:
            value = attached
        elif i < n:
            value = args[i]
            i += 1
        else:
            raise Unparsed(a)
        if opt.kind == LIST:
            previous = given.get(opt.key)
            given[opt.key] = [*(previous if isinstance(previous, list) else []), value]
        else:
            given[opt.key] = value
    return positional, given
