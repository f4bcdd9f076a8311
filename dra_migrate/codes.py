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
         "The operating system refused to read the file (permissions, a broken link, a directory loop), or "
         "the path is not a regular file (a named pipe, socket or device: skipped, as reading a pipe would block)."),
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
         "No app container request has enough GPUs for this init container, so it gets its own request (init "
         "containers that run one after another share one, sized for the largest). "
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
    Code("DRA304", W, "device-plugin-label", "A node selection on a device-plugin label was kept.",
         "The label describes the device-plugin configuration (sharing, MIG strategy, config name) or is a "
         "timestamp. Under DRA, sharing and MIG are chosen per claim, so the label no longer says anything about "
         "the devices. It is kept, because removing it would let the pod run on nodes it could not run on "
         "before; remove it by hand once the device plugin no longer runs on the GPU nodes."),
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
    Code("DRA314", W, "shared-suffix-dropped", "A -SHARED product label only marked time-sliced nodes.",
         "GPU Feature Discovery appends -SHARED to nvidia.com/gpu.product on nodes where the device plugin "
         "time-slices the GPUs. The claim selects the GPU model on any node; whether the GPU is shared is "
         "configured per claim (GpuConfig), not by the node the pod lands on."),
    Code("DRA315", I, "selection-kept-shared-claim", "GPU node selection stays on a pod with a shared claim.",
         "A named ResourceClaim shared by a sharing group is allocated once, for the first pod that needs it, on a "
         "node that pod may use; every other pod follows it there. Its request can't carry one workload's "
         "selection, so the GPU labels stay on the pod's node selection, which still steers the allocation."),
    # --- DRA4xx: kinds and CRDs --------------------------------------------------------------
    Code("DRA401", W, "uncovered-kind", "A GPU request in a kind no rule covers.",
         "The object holds nvidia.com GPU resources but no kind rule says where its pod templates live, so it "
         "is not rewritten. One diagnostic per pod template that holds GPU keys, with a rule snippet whose paths "
         "are guessed from where the keys are: check it, save it in a directory and pass --rules DIR (see "
         "`dra-migrate rules --kinds`)."),
    Code("DRA402", E, "invalid-kind-rule", "A kind rule file is invalid.",
         "A file in rules/kinds or a --rules directory is not valid YAML, violates "
         "schemas/kind-rules.schema.json, has a malformed path, or overlaps another rule for the same group "
         "and kind in the same directory. "
         "The error names the file and line; nothing is migrated until the rules load."),
    Code("DRA403", W, "cr-gpu-field", "A custom resource states GPUs in its own field.",
         "The controller turns this field (a count, a resources map, a resource name) into container GPU "
         "requests itself, so no key-based translation can rewrite it. The note says where the claim belongs "
         "instead; the field is left as is."),
    Code("DRA404", W, "bare-container-gpu", "A bare container requests GPUs where no pod spec can hold claims.",
         "The kind embeds single containers (a template's container, a shorthand predictor) that the "
         "controller merges into pods it builds. Container claims need pod.spec.resourceClaims beside them, "
         "which this place does not have: move the GPU request to a pod template the controller copies, or "
         "keep the device plugin for this workload."),
    Code("DRA405", W, "gpu-name-as-value", "A GPU resource name is given as a value.",
         "A field names the extended resource (name: nvidia.com/gpu, gpuType: nvidia.com/gpu) and some "
         "controller requests it. Nothing is rewritten; with DRA the controller must request a claim instead."),
    Code("DRA406", W, "non-workload-gpu", "An object that creates no pods refers to GPU resources.",
         "Quotas, defaults, node pools and flavors that name nvidia.com/gpu keep working for nodes served by "
         "the device plugin but do not see DRA claims. Review them together with the migrated workloads."),
    Code("DRA407", W, "gpu-infrastructure", "A device-plugin or GPU Feature Discovery DaemonSet.",
         "This DaemonSet does not use GPUs: it is the infrastructure that advertises nvidia.com/gpu and GPU "
         "node labels. With DRA the NVIDIA DRA driver publishes the devices (ResourceSlices); remove this "
         "DaemonSet from the nodes the driver serves rather than migrating it."),
    Code("DRA408", W, "controller-claims-support", "The controller must pass resourceClaims through.",
         "A migrated custom resource only works if its controller (and the CRD schema, which otherwise prunes "
         "the fields) copies pod.spec.resourceClaims and container resources.claims into the pods it creates. "
         "The message names the first controller version known to do so, or says it is unknown."),
    Code("DRA409", I, "ray-num-gpus-set", "rayStartParams.num-gpus was made explicit.",
         "KubeRay derives `ray start --num-gpus` from the Ray container's nvidia.com/gpu limit when "
         "rayStartParams has no num-gpus. The limit is gone after migration, so the count is written "
         "explicitly for the group."),
    Code("DRA410", W, "ray-num-gpus-not-set", "rayStartParams.num-gpus could not be made explicit.",
         "KubeRay would start Ray with no GPUs once the nvidia.com/gpu limit is gone, and the group's "
         "rayStartParams cannot be edited safely (not a mapping). Set num-gpus by hand."),
    Code("DRA411", W, "quota-gpu", "A ResourceQuota limits nvidia.com/gpu, which DRA claims do not consume.",
         "Devices allocated through claims are counted by `<device-class>.deviceclass.resource.k8s.io/devices` "
         "quota entries, not by requests.nvidia.com/gpu. The old key is kept: nodes still served by the device "
         "plugin keep being counted by it."),
    Code("DRA412", I, "quota-dra-key-added", "A device-class quota entry was added beside the GPU quota.",
         "`gpu.nvidia.com.deviceclass.resource.k8s.io/devices` limits the devices requested by claims of the "
         "gpu.nvidia.com class in the namespace to the same number the nvidia.com/gpu entry allowed. Disable "
         "with --no-dra-quota."),
    Code("DRA413", W, "kueue-gpu-quota", "A Kueue quota counts nvidia.com/gpu.",
         "Kueue charges quota from pod requests; migrated pods request no nvidia.com/gpu, so this quota stops "
         "counting them unless Kueue maps the DeviceClass to a resource name (deviceClassMappings)."),
    # --- DRA5xx: sharing and MIG -------------------------------------------------------------
    Code("DRA501", I, "sharing-config-obsolete", "A device plugin sharing config; left unchanged, obsolete under DRA.",
         "This ConfigMap (or values file) holds a k8s-device-plugin config with time-slicing or MPS. dra-migrate "
         "reads it to translate the workloads that used the shared resource and leaves it as it is. Under DRA "
         "sharing is per claim (a GpuConfig in the claim), so once the device plugin is gone from the nodes the "
         "config has no effect and can be deleted, together with the nvidia.com/device-plugin.config node labels."),
    Code("DRA502", W, "shared-claim",
         "Pods now share one named ResourceClaim (one GPU) instead of time-sliced replicas.",
         "The device plugin advertised N replicas per GPU and let the scheduler spread pods over every GPU of every "
         "node. A named ResourceClaim is allocated once: every pod that references it runs on the same node and uses "
         "the same device, at most 256 pods may reserve one claim (32 on Kubernetes 1.32), and it lives in one "
         "namespace. Containers of one pod that reference the claim share that device too. The message compares "
         "the old replicas with the number of pods that now reference the claim. Choose per workload with the "
         "annotation dra-migrate.io/sharing: exclusive|shared-claim, or for the run with --sharing."),
    Code("DRA503", W, "sharing-feature-gate",
         "The emitted sharing config needs an alpha feature gate of the DRA driver.",
         "GpuConfig with strategy TimeSlicing needs the driver gate TimeSlicingSettings, MPS needs MPSSupport; both "
         "are alpha and off by default, and a claim using them fails when its pods start. Enable them in the driver's "
         "Helm values, e.g. featureGates: {TimeSlicingSettings: true}. A claim shared without any config (driver demo "
         "gpu-test3) also time-slices with the GPU's default timeslice; delete the config if you cannot enable "
         "the gate."),
    Code("DRA504", W, "exclusive-needs-more-gpus", "A workload that shared GPUs now needs one GPU per pod.",
         "With the exclusive strategy each pod gets its own GPU through a ResourceClaimTemplate; the device plugin "
         "packed several pods onto one GPU. The message says how many GPUs the workload needs now compared with the "
         "shared setup."),
    Code("DRA505", W, "sharing-config-unknown", "A shared resource is used but its device plugin config was not found.",
         "nvidia.com/gpu.shared (renameByDefault) or a per-node config is used but no config says the strategy or the "
         "replicas. dra-migrate assumes time-slicing; pass the config with --sharing-config FILE to be exact."),
    Code("DRA506", W, "sharing-ambiguous", "Several device plugin configs share this resource differently.",
         "Configs are selected per node (label nvidia.com/device-plugin.config) and none is the default for this "
         "workload, so it is not known whether its pods got a shared replica or a whole GPU. It is translated as a "
         "whole GPU; select the config with a nodeSelector on nvidia.com/device-plugin.config or annotate the "
         "workload (dra-migrate.io/sharing) to decide."),
    Code("DRA507", I, "mig-translated",
         "A MIG slice request became a request on mig.nvidia.com with a profile selector.",
         "nvidia.com/mig-<profile> (mixed strategy) or nvidia.com/gpu on nodes selected by a MIG product label (single "
         "strategy) becomes a request on the device class mig.nvidia.com with a CEL selector on the driver's profile "
         "attribute ('+' attributes such as +me are restored from the '.me' of the resource name)."),
    Code("DRA508", W, "mig-single-unknown-profile", "nvidia.com/gpu may have been a MIG slice (single strategy).",
         "The repository uses the MIG single strategy (the GPU Operator's default) and this workload does not say "
         "which profile: under that strategy nvidia.com/gpu was a MIG slice on MIG-enabled nodes. The DRA driver "
         "publishes MIG-enabled GPUs only as mig.nvidia.com devices, so a gpu.nvidia.com request never lands there. "
         "It is translated as a full GPU; add a nvidia.com/gpu.product nodeSelector ending in -MIG-<profile> (or "
         "change the request to mig.nvidia.com by hand) if it ran on MIG slices."),
    Code("DRA509", W, "mig-shared", "A time-sliced MIG slice: the sharing config is not carried over.",
         "TimeSlicing on a MIG device has no effect in the DRA driver (MigDeviceConfig has no timeSlicingConfig), "
         "so no config is emitted; pods that share the claim time-share the slice anyway."),
    Code("DRA510", W, "hami-not-translated", "HAMi vGPU resources: the pod template is left as is.",
         "HAMi caps memory and cores of a shared GPU (nvidia.com/gpumem, gpumem-percentage, gpucores); with them "
         "nvidia.com/gpu: N means N capped vGPU slices, not N whole GPUs. The DRA equivalent needs either the "
         "driver's MPS sharing with pinned memory limits (GpuConfig mpsConfig.defaultPinnedDeviceMemoryLimit and "
         "defaultActiveThreadPercentage) or consumable capacity (capacity.requests.memory, Kubernetes feature "
         "DRAConsumableCapacity, driver ConsumableShares); translate by hand or with HAMi's own DRA driver."),
    Code("DRA511", W, "kai-not-translated", "KAI scheduler GPU sharing annotations: the pod template is left as is.",
         "gpu-fraction / gpu-memory annotations ask the KAI scheduler for a fraction of a GPU. DRA has no fraction: "
         "the equivalent is a shared claim with MPS (defaultActiveThreadPercentage, pinned memory limit) or "
         "consumable capacity (capacity.requests.memory with DRAConsumableCapacity). Translate by hand."),
    Code("DRA512", W, "volcano-not-translated", "Volcano vGPU resources: the pod template is left as is.",
         "volcano.sh/gpu-memory / volcano.sh/gpu-number are Volcano's GPU sharing; they are not whole GPUs. The DRA "
         "equivalent needs consumable capacity (capacity.requests.memory, DRAConsumableCapacity) or MPS with pinned "
         "memory limits. Translate by hand."),
    Code("DRA513", I, "share-within-pod", "Containers of one pod share one device request on request.",
         "The workload asked (annotation dra-migrate.io/share-within-pod: \"true\" or --share-within-pod) that its "
         "GPU containers use the same devices: they reference one request, sized for the largest container, and see "
         "the same GPUs. Without it every container gets its own devices, as with the device plugin."),
    Code("DRA514", W, "shared-request-greater-than-one", "A container asked for more than one shared replica.",
         "Several replicas of a shared GPU never guaranteed several GPUs' worth of compute (and MPS rejected such "
         "requests by default: failRequestsGreaterThanOne). The container now uses the one device of its claim."),
    Code("DRA515", W, "invalid-sharing-annotation", "A dra-migrate.io annotation has an unknown value; it is ignored.",
         "dra-migrate.io/sharing accepts exclusive or shared-claim; dra-migrate.io/share-within-pod accepts "
         "\"true\" or \"false\"."),
    Code("DRA516", W, "shared-claim-over-limit", "More pods reference a shared claim than allowed or than before.",
         "A ResourceClaim can be reserved by at most 256 pods (32 on Kubernetes 1.32); beyond that pods stay "
         "pending. More pods than the old replicas per GPU also means more processes per GPU than before."),
    Code("DRA517", W, "sharing-mixed-template", "A pod template mixes shared and exclusive GPU resources.",
         "One pod would need both a shared named claim and a per-pod claim template; dra-migrate does not "
         "wire two GPU claims into one pod. The pod template is left as is."),
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
    Code("DRA605", E, "feature-not-in-target", "The output needs a feature the target version does not have.",
         "The emitted object uses a field that the target release does not know at all (for example "
         "firstAvailable in resource.k8s.io/v1beta1 on 1.32, or DeviceClass extendedResourceName before 1.34). "
         "No feature gate can enable it: choose a newer --target-version. Nothing is written."),
    Code("DRA606", E, "feature-gate-off", "The output needs a feature that is off by default on the target.",
         "The target release has the field, but behind an alpha (or off-by-default beta) feature gate. The API "
         "server drops or rejects a field whose gate is off. If the cluster enables the gate, say so with "
         "--feature-gates GATE=true (the message names the gate); otherwise choose a newer --target-version. "
         "Nothing is written."),
    Code("DRA607", E, "cel-function-unavailable", "A CEL selector calls a function the target does not offer.",
         "New selector expressions are compiled with the CEL environment of the target release (libraries arrive "
         "one release after they are introduced, some are behind feature gates). The API server would refuse "
         "the expression. Nothing is written."),
    Code("DRA608", W, "feature-gate-override-invalid", "A --feature-gates setting does not apply to the target.",
         "The gate does not exist in the target release, or it is locked to its default (GA): the API server "
         "would refuse to start with that setting. dra-migrate ignores the setting for this target."),
    Code("DRA609", I, "feature-gate-required", "The output relies on a feature gate that is off by default.",
         "The feature is enabled only because --feature-gates says so: enable the same gate on the API server, "
         "the scheduler, the controller manager and the kubelets before applying, or the objects are refused or "
         "the field is silently dropped."),
    Code("DRA610", I, "bridge-served", "Bridge mode serves this workload as it is.",
         "With --strategy extended-resource the workload keeps resources.limits[<extended resource>]; a "
         "DeviceClass with spec.extendedResourceName makes the scheduler allocate the devices through DRA "
         "(KEP-5004, feature gate DRAExtendedResource). No change to the workload is needed."),
    Code("DRA611", W, "bridge-needs-rewrite", "Bridge mode cannot serve this workload faithfully.",
         "An extended-resource request carries only a count: it cannot say which GPU model (nodeSelector or "
         "affinity on GPU labels), cannot ask for a shared GPU (time-slicing, MPS, .shared resources) and cannot "
         "express MIG slices requested as nvidia.com/gpu (MIG single strategy). Migrate this workload with the "
         "default rewrite strategy, or accept the listed difference."),
    Code("DRA612", I, "bridge-chart-class", "nvidia.com/gpu is already mapped by the NVIDIA chart's DeviceClass.",
         "The NVIDIA DRA driver chart installs DeviceClass gpu.nvidia.com with extendedResourceName: "
         "nvidia.com/gpu whenever it renders the resource.k8s.io/v1 API, so no class is emitted for it. Use "
         "--bridge-emit-gpu-class to emit a standalone class anyway."),
    Code("DRA613", W, "bridge-class-conflict", "Two DeviceClasses claim the same extended resource name.",
         "Only one DeviceClass can serve an extended resource name: when several claim it, the scheduler uses the "
         "most recently created one (ties: the lexicographically first name). The emitted class selects the "
         "same devices as the chart's class, so either choice allocates full GPUs; but re-installing the chart "
         "makes its class the newer one again, and deleting either class silently switches to the other."),
    Code("DRA614", I, "already-dra-backed", "The workload's extended resource is already served by DRA.",
         "A DeviceClass in the repository sets spec.extendedResourceName for this resource, so the scheduler "
         "already allocates it through DRA (KEP-5004). The workload is left as it is."),
    Code("DRA615", I, "bridge-class-in-repo", "The repository already defines a class for this extended resource.",
         "A DeviceClass with the same extendedResourceName exists in the scanned files; bridge mode does not emit "
         "a second one (two classes for one name conflict)."),
    # --- DRA7xx: integrations ----------------------------------------------------------------
    Code("DRA701", W, "kustomize-patch-gpu", "A kustomize patch file sets GPU resources; it is not migrated.",
         "The file is listed under patches/patchesStrategicMerge of a kustomization.yaml, so it is a partial "
         "object merged into a base, not a workload. Rewriting it alone would put a ResourceClaimTemplate "
         "where kustomize expects a patch, and deleting nvidia.com/gpu from a patch does not delete it from the "
         "base. Migrate the base (or render with `kustomize build` and migrate the output), then make the "
         "patch add the same resources.claims and resourceClaims entries (both merge by name)."),
    Code("DRA702", W, "kustomize-inline-patch-gpu", "An inline kustomize patch sets GPU resources.",
         "A `patch: |` entry in kustomization.yaml (JSON 6902 or strategic merge) mentions a GPU resource. It "
         "is text inside a string and is never rewritten: change it by hand to add a claim instead."),
    Code("DRA703", I, "kustomization-updated", "The new claims file was added to kustomization.yaml resources.",
         "--claims-out wrote ResourceClaimTemplates into a kustomize directory; the file was appended to that "
         "kustomization's `resources:` list so `kustomize build` includes it."),
    Code("DRA704", W, "helm-template-gpu", "A Helm chart template requests GPUs; templates are never rewritten.",
         "Files under a chart's templates/ are Go templates, not YAML. Each GPU key is reported with its line: "
         "replace it by a resources.claims entry and add pod.spec.resourceClaims plus a ResourceClaimTemplate "
         "template (see the README, Helm charts)."),
    Code("DRA705", W, "helm-values-gpu", "A Helm values file sets GPU resources.",
         "A values file beside Chart.yaml sets a GPU resource that a template copies into a pod (usually via "
         "`toYaml .Values.resources`). Remove the GPU key from the values and give the chart a claim instead: "
         "values such as gpu.count feeding a ResourceClaimTemplate template."),
    Code("DRA706", I, "skip-annotation", "The workload opts out with the dra-migrate.io/skip annotation.",
         "The workload is left untouched; the annotation's value is the reason, quoted in the message."),
    Code("DRA707", E, "skip-annotation-strict", "--strict: a workload opts out with dra-migrate.io/skip.",
         "With --strict every skip annotation is an error, so a CI gate can require a fully migrated tree."),
    Code("DRA708", W, "kustomization-not-updated", "kustomization.yaml could not be updated for the claims file.",
         "The new claims file is written, but the kustomization's resources list could not be edited safely "
         "(no block sequence, or a layout the editor refuses). Add the file to `resources:` by hand."),
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
