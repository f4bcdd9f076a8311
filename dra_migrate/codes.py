"""The one registry of diagnostic codes.

Codes are stable: never renumber or reuse one. Ranges:
DRA1xx source/input, DRA2xx core workload translation, DRA3xx GPU selection, DRA4xx kinds and CRDs,
DRA5xx sharing and MIG, DRA6xx target versions and validation, DRA7xx integrations,
DRA8xx scheduling lints and simulation, DRA9xx internal safety checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from dra_migrate.diagnostics import Severity

E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO  # noqa: E741


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    severity: Severity
    name: str
    summary: str
    explanation: str


_ALL: list[Code] = [
    # --- DRA1xx: source and input ------------------------------------------------------------
    Code("DRA101", E, "invalid-yaml", "The file is not valid YAML.",
         "The YAML parser rejected the file at the given position. Nothing in the file is changed; fix the "
         "syntax and run again. Other files are still processed and the run exits with code 2."),
    Code("DRA102", E, "template-syntax", "The file contains template syntax ({{ }}) and is not plain YAML.",
         "Helm and other Go templates are not YAML until rendered. dra-migrate never writes into a template: "
         "render the chart (helm template) and migrate the output, or change the template by hand using the "
         "reported GPU requests as a guide."),
    Code("DRA103", E, "not-utf8", "The file is not valid UTF-8.",
         "Kubernetes manifests are UTF-8. The file is left untouched."),
    Code("DRA104", E, "duplicate-key", "A mapping has the same key twice.",
         "YAML parsers disagree on which value wins for a duplicated key, so a rewrite could silently change "
         "meaning. The file is left untouched until the duplicate is removed."),
    Code("DRA105", E, "file-too-large", "The file is larger than the size limit.",
         "Very large files are skipped to bound memory and time. Raise the limit with --max-file-size."),
    Code("DRA106", E, "unreadable-file", "The file could not be read.",
         "The operating system refused to read the file (permissions, a broken link, a directory loop)."),
    Code("DRA107", E, "alias-limit", "The document expands too many YAML aliases.",
         "Alias expansion is bounded so that an 'alias bomb' cannot exhaust memory. The file is left untouched."),
    Code("DRA108", W, "unknown-kind", "A document without apiVersion/kind holds GPU resource keys.",
         "The document is not a Kubernetes object dra-migrate recognises (a values file, a config fragment or a "
         "patch). Its GPU requests are reported but not rewritten."),
    Code("DRA109", E, "nesting-limit", "The document nests deeper than the supported limit.",
         "Extremely deep nesting (over 200 levels, counted after alias expansion; libyaml refuses flow nesting "
         "deeper than 1000 itself) is refused to keep parsing bounded. The file is left untouched."),
    Code("DRA110", W, "symlink-skipped", "A symbolic link was not followed.",
         "Links that leave the given tree (a directory argument, or the directory of a file argument) are "
         "never followed, so a run cannot read or write outside it. A link named on the command line whose "
         "target stays in its own directory is written through (the link stays a link)."),
    Code("DRA111", E, "read-only-file", "The file is read-only and could not be rewritten.",
         "The file (or its directory) is not writable, or its mode has no write bit at all: such files are "
         "treated as deliberately frozen and refused even when running as root. Make the file writable or use "
         "--output-dir. The file is unchanged."),
    Code("DRA112", E, "tab-indentation", "The document uses tab characters where YAML forbids them.",
         "Tabs are not allowed for YAML indentation; the line and column of the first one are reported. The "
         "file is left untouched."),
    Code("DRA113", E, "merge-key", "A key that would be edited comes from, or is shadowed by, a YAML merge key.",
         "With `<<: *base` a mapping receives keys that are not written in it. Deleting a GPU key that a merge "
         "provides is impossible in place, deleting one that a merge shadows would expose the merged value, and "
         "adding claims/tolerations/resourceClaims where a merge already provides them would silently override "
         "them. The workload is left as is; expand the merge key and run again."),
    Code("DRA114", E, "recursive-alias", "An alias refers to the node that contains it.",
         "A recursive structure (`&a [*a]`) has no finite meaning as a Kubernetes object. The file is left "
         "untouched."),
    Code("DRA115", I, "symlink-in-tree", "A symbolic link inside the tree is not rewritten itself.",
         "While walking a directory, a link whose target is inside the same tree is skipped: the target is "
         "migrated under its own path (unless excluded), and the link keeps pointing at it. Rewriting through "
         "the link as well would process the file twice or replace the link by a copy."),
    Code("DRA116", E, "interrupted", "The run was interrupted (SIGINT/SIGTERM).",
         "The run stopped between files: the file being written when the signal arrived was finished "
         "atomically, every other file is either migrated or untouched, never partly written. Run again to "
         "migrate the rest."),
    # --- DRA2xx: core workload translation ---------------------------------------------------
    Code("DRA201", I, "migrated", "GPU requests were moved to a ResourceClaimTemplate.",
         "Each pod template that requested nvidia.com/gpu now references a ResourceClaimTemplate; every pod "
         "gets its own claim, as every pod got its own GPUs from the device plugin. Each GPU-using container "
         "has its own request in the claim, so containers never share devices."),
    Code("DRA202", E, "requests-limits-differ", "requests and limits give different GPU counts.",
         "Extended resources cannot be overcommitted: Kubernetes requires requests to equal limits. The "
         "document is left as is; make them equal first."),
    Code("DRA203", E, "invalid-gpu-count", "The GPU count is not a positive whole number.",
         "Counts must be integers ≥ 1 (a quoted \"2\" is accepted). Fractions, zero, negative numbers and "
         "template placeholders such as ${GPUS} cannot be translated; the document is left as is."),
    Code("DRA204", I, "init-container-reuses-request",
         "An init container reuses an app container's GPUs.",
         "Init containers run to completion before the app containers start, so the device plugin could "
         "hand them the same GPUs. The init container references the request of an app container with at "
         "least as many GPUs, so the pod needs no extra devices."),
    Code("DRA205", W, "init-container-own-request", "An init container needs its own GPU request.",
         "No app container request has enough GPUs for this init container, so it gets its own request. "
         "The claim is allocated for the whole pod lifetime: the pod now needs more GPUs than with the "
         "device plugin, which released the init container's devices to the app containers."),
    Code("DRA206", I, "sidecar-own-request", "A restartable sidecar gets its own GPU request.",
         "Sidecars (init containers with restartPolicy: Always) run alongside the app containers, so they "
         "keep distinct devices, exactly as with the device plugin."),
    Code("DRA207", I, "existing-claims-kept", "The pod already uses DRA claims; they are kept.",
         "Existing pod.spec.resourceClaims and container claim references are never changed or duplicated; "
         "the new GPU claim is added beside them."),
    Code("DRA208", I, "toleration-added", "The nvidia.com/gpu:NoSchedule toleration was made explicit.",
         "The ExtendedResourceToleration admission plugin adds this toleration to pods that request "
         "nvidia.com/gpu. Once the extended resource is gone nothing adds it, so it is written explicitly to "
         "keep the pod schedulable on tainted GPU nodes."),
    Code("DRA209", W, "init-container-sees-more",
         "An init container now sees more GPUs than it asked for.",
         "The init container reuses an app container's request that has more devices than the init "
         "container requested; it can see all of them."),
    Code("DRA210", E, "path-through-alias", "A GPU request sits inside a YAML anchor/alias.",
         "Editing an anchored block changes every place that aliases it. The document is left as is; expand "
         "the alias or migrate by hand."),
    Code("DRA211", I, "claims-elsewhere", "The new ResourceClaimTemplates were written to another file.",
         "The claim templates go to the --claims-out destination (or, for JSON input, to a sibling file)."),
    Code("DRA212", W, "zero-gpu-request", "A container requests zero GPUs.",
         "A zero request asks for no device; it is dropped from the resources and no claim is created."),
    Code("DRA213", W, "other-nvidia-resource", "An nvidia.com resource that is not translated yet.",
         "Only the resources with a translation rule are rewritten; this one is reported and left in place."),
    Code("DRA214", E, "container-claims-conflict", "A container already references claims in a way that conflicts.",
         "The container's resources.claims cannot be extended safely (not a list, or flow text that cannot be "
         "edited). The document is left as is."),
    Code("DRA215", I, "already-dra", "The document is already a DRA object or uses only DRA.",
         "Nothing to migrate."),
    Code("DRA216", E, "unsupported-layout", "The YAML layout at this place cannot be edited safely.",
         "The change would need to rewrite text whose layout dra-migrate does not edit (for example a key in "
         "a complex flow collection or a key with an explicit '?' indicator). The document is left as is."),
    Code("DRA217", E, "name-collision", "The claim template name collides and no unique name could be made.",
         "A deterministic name is derived from the workload; if it collides with an existing object a suffix "
         "is added. This error means no candidate was free."),
    Code("DRA218", I, "json-claims-sibling", "JSON input: claim templates written to a sibling file.",
         "A JSON file holds one object, so new ResourceClaimTemplates are written to '<file>.dra-claims.json' "
         "beside it (a kind: List)."),
    # --- DRA3xx: GPU selection ---------------------------------------------------------------
    # --- DRA4xx: kinds and CRDs --------------------------------------------------------------
    Code("DRA401", W, "uncovered-kind", "A GPU request in a kind no rule covers.",
         "The object holds nvidia.com GPU resources but no kind rule says where its pod templates live, so it "
         "is not rewritten. Add a rule file (see `dra-migrate rules --kinds` and --rules DIR)."),
    # --- DRA5xx: sharing and MIG -------------------------------------------------------------
    # --- DRA6xx: target versions and validation ----------------------------------------------
    # --- DRA7xx: integrations ----------------------------------------------------------------
    # --- DRA8xx: scheduling lints and simulation ---------------------------------------------
    # --- DRA9xx: internal safety checks ------------------------------------------------------
    Code("DRA901", E, "self-check-failed", "The migrated text did not match the intended change.",
         "Before any write, the original and migrated documents are parsed independently and compared. A "
         "difference outside the intended paths means a bug in dra-migrate: the file is left untouched and "
         "the unexpected path is reported. Please file an issue with the input."),
    Code("DRA902", E, "internal-error", "An unexpected internal error occurred for this file.",
         "The file is left untouched and processing continues. Please file an issue with the input."),
    Code("DRA903", E, "not-idempotent", "Migrating the output again would change it again.",
         "The migration must be a fixed point. The file is left untouched."),
]

CODES: dict[str, Code] = {c.code: c for c in _ALL}
assert len(CODES) == len(_ALL), "duplicate diagnostic code"
