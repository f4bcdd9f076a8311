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
         "Extremely deep nesting is refused to keep parsing bounded. The file is left untouched."),
    Code("DRA110", W, "symlink-skipped", "A symbolic link was not followed.",
         "Links that leave the given tree are never followed, so a run cannot write outside it."),
    Code("DRA111", E, "read-only-file", "The file is read-only and could not be rewritten.",
         "Make the file writable or use --output-dir."),
    Code("DRA112", I, "tab-indentation", "The document uses tab characters where YAML forbids them.",
         "Tabs are not allowed for YAML indentation."),
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
    Code("DRA301", I, "gpu-selection-moved", "GPU node labels were moved into the claim's device selectors.",
         "Labels written by GPU Feature Discovery only served to pick the GPU model, memory or architecture. "
         "They now select the device itself (CEL selectors on the gpu.nvidia.com attributes) and leave the "
         "node selector, which also makes the pod schedulable on any node that has such a device."),
    Code("DRA302", W, "terms-not-separable", "ORed node affinity terms tie a GPU choice to a node choice.",
         "Each nodeSelectorTerm is an alternative. When the terms pair different GPU labels with different "
         "node labels (zone A with A100 or zone B with H100), no claim selector plus node affinity expresses "
         "the same pairs. The affinity is left unchanged and the claim does not constrain the GPU model."),
    Code("DRA303", W, "untranslatable-requirement", "A GPU label requirement has no device equivalent.",
         "The requirement stays on the node selector or affinity, where it still needs the label on the "
         "node. Check that the label exists on the DRA nodes, or rewrite the requirement as a CEL selector."),
    Code("DRA304", W, "label-dropped", "A device-plugin label was removed from the node selection.",
         "The label describes the device-plugin configuration (sharing, MIG strategy, config name) or is a "
         "timestamp. It has no meaning once DRA serves the GPUs and would go stale, so it no longer "
         "restricts where the pod runs; sharing is configured per claim."),
    Code("DRA305", I, "preferences-first-available",
         "Preferred GPU labels became firstAvailable alternatives.",
         "Preferred node affinity on GPU labels is expressed as an ordered list of subrequests: the "
         "scheduler takes the first one that can be allocated, highest weight first, and falls back to any "
         "GPU. Weights are no longer added up across several matching preferences."),
    Code("DRA306", W, "preference-not-separable", "A preferred term mixes GPU and node labels.",
         "The preference pairs a GPU label with a node label; it is left unchanged on the node affinity."),
    Code("DRA307", W, "approximate-selection", "A label was translated approximately.",
         "The label value is not the number the device publishes (for example a cloud catalogue's nominal "
         "GPU memory); the selector uses a tolerance and may accept slightly different devices."),
    Code("DRA308", W, "mig-label-full-gpu-class",
         "The label describes a MIG slice but the request is for full GPUs.",
         "MIG-enabled GPUs are published only as their slices, in the mig.nvidia.com class. A label that "
         "names a MIG profile means the pod ran on a slice: the request should use mig.nvidia.com. The label "
         "is left on the node selector."),
    Code("DRA309", I, "cloud-label-kept", "A cloud provider's GPU label stays on the node selector.",
         "Provider-maintained labels still hold on DRA nodes, so they keep selecting the node pool; they are "
         "not duplicated in the claim. --move-cloud-labels moves them into the claim instead."),
    Code("DRA310", W, "too-many-alternatives", "More GPU preferences than firstAvailable allows.",
         "A request has at most 8 subrequests; the lowest-weight preferences were left out."),
    Code("DRA311", W, "preferences-kept-no-first-available",
         "Preferred GPU node affinity was kept: the target has no firstAvailable.",
         "Preferences between GPU models become firstAvailable subrequests, which need the DRAPrioritizedList "
         "feature (beta and on from 1.34). For an older target the preferred node affinity stays as it is, "
         "which still steers pods to nodes but no longer ranks devices."),
    Code("DRA312", E, "cel-compile-error", "An emitted CEL selector does not compile.",
         "Every selector is compiled with a Kubernetes DRA CEL environment before anything is written. This is "
         "a bug in a translation rule (rules/labels.yaml) or a user rule pack; the file is left untouched."),
    Code("DRA313", E, "cel-runtime-error", "An emitted CEL selector fails on a real device shape.",
         "A runtime error (for example a missing attribute) aborts scheduling of the pod in Kubernetes. Every "
         "selector is evaluated against the NVIDIA driver's device shapes before it is written; the file is "
         "left untouched."),
    # --- DRA4xx: kinds and CRDs --------------------------------------------------------------
    Code("DRA401", W, "uncovered-kind", "A GPU request in a kind no rule covers.",
         "The object holds nvidia.com GPU resources but no kind rule says where its pod templates live, so it "
         "is not rewritten. Add a rule file (see `dra-migrate rules --kinds` and --rules DIR)."),
    Code("DRA402", E, "invalid-kind-rule", "A kind rule file is invalid.",
         "A file in rules/kinds or a --rules directory is not valid YAML, violates "
         "schemas/kind-rules.schema.json, has a malformed path, or overlaps another rule for the same group "
         "and kind in the same directory. "
         "The error names the file and line; nothing is migrated until the rules load."),
    # --- DRA5xx: sharing and MIG -------------------------------------------------------------
    # --- DRA6xx: target versions and validation ----------------------------------------------
    Code("DRA601", E, "api-version-not-served",
         "The target Kubernetes version does not serve this apiVersion/kind.",
         "The object would be rejected by the API server of the target release because that release does not "
         "know the apiVersion for this kind (for example resource.k8s.io/v1 before 1.34). Choose another "
         "--target or let dra-migrate emit the version the target serves."),
    Code("DRA602", E, "schema-violation",
         "The object does not match the official schema of the target version.",
         "Checked against the OpenAPI-derived JSON schema of the target release (bundled with "
         "kubernetes-validate), rejecting unknown fields. The API server would refuse the object."),
    Code("DRA603", E, "api-limit-violated",
         "The object breaks an API-server validation rule the schema does not carry.",
         "DRA objects have limits beyond the schema: at most 32 requests, 8 subrequests, 32 selectors, "
         "constraints and config entries, 32 devices per claim, 10 Ki characters per CEL expression, DNS "
         "names, unique names and references that must exist. The API server (or the scheduler, for the "
         "device count) "
         "would refuse the object."),
    Code("DRA604", W, "dra-off-by-default", "The target version has DRA off by default.",
         "Kubernetes 1.32 and 1.33 ship DRA as beta with the DynamicResourceAllocation feature gate off and the "
         "beta resource.k8s.io APIs disabled. The cluster must enable both (feature gates on the API server, "
         "scheduler, controller manager and kubelet; --runtime-config on the API server) or the migrated "
         "manifests are rejected. Said once per run."),
    # --- DRA7xx: integrations ----------------------------------------------------------------
    # --- DRA8xx: scheduling lints and simulation ---------------------------------------------
    Code("DRA801", W, "selector-matches-nothing", "No known NVIDIA device matches a selector.",
         "The selector was evaluated against the device shapes the NVIDIA DRA driver publishes for common "
         "GPUs and MIG slices and matched none. The pod may stay Pending forever; check the label value (a "
         "typo, a GPU model unknown to dra-migrate) with `dra-migrate cel EXPR`."),
    Code("DRA802", W, "rolling-update-surge-first-available",
         "A Deployment can surge while its claim prefers devices with firstAvailable.",
         "During a rolling update with maxSurge > 0 (the default is 25%) new pods are scheduled while the old "
         "pods still hold their devices. When the preferred devices are all taken, the allocator gives the new "
         "pod the next firstAvailable alternative, and the pod keeps that (slower) device after the old pods "
         "are gone. Set spec.strategy.rollingUpdate.maxSurge: 0 (old pods are removed first) or use "
         "strategy type Recreate. `dra-migrate simulate --rollout` replays the update on an inventory."),
    Code("DRA803", W, "attribute-not-published", "A selector reads an attribute the NVIDIA driver does not publish.",
         "The NVIDIA DRA driver removed the `index` and `minor` (and MIG `parentIndex`) attributes in v25.8; "
         "other names are checked against the attributes and capacities of the bundled device fixture. Looking "
         "up a missing attribute is a CEL runtime error, which aborts the pod's scheduling attempt: select by "
         "uuid, productName or resource.kubernetes.io/pciBusID instead. Existing DRA objects are reported too "
         "and left unchanged."),
    Code("DRA804", W, "too-many-devices-per-claim", "A claim asks for more than 32 devices.",
         "The allocator refuses a claim whose requests need more than 32 devices in total "
         "(AllocationResultsMaxSize); the pod never schedules. Split the devices over several claims."),
    Code("DRA805", W, "shared-claim-reserved-for-limit",
         "A shared ResourceClaim has more potential consumers than reservedFor allows.",
         "Every pod using a named ResourceClaim is listed in its status.reservedFor, which holds at most 256 "
         "entries (32 on Kubernetes 1.32). The replicas of every workload referencing the claim are added up; "
         "pods beyond the limit stay Pending ('resourceclaim in use'). Use a ResourceClaimTemplate (one claim "
         "per pod) or fewer replicas."),
    Code("DRA806", W, "existing-selector-invalid",
         "A CEL selector of an existing DRA object does not compile or fails on a known device.",
         "Selectors already in the repository are compiled and evaluated against the NVIDIA driver's device "
         "shapes like emitted ones, but only reported: dra-migrate does not change objects it did not create."),
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
