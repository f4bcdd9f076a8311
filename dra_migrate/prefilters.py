"""The byte strings that make a file worth a closer look, in one module that imports nothing.

The compiler's modules (pipeline, bridge, sharing.discover) name them, and so do the processes that read
a repository without the compiler: the pre-commit fast path (dra_migrate.entry) and the scout
(dra_migrate.scout), which must start before the compiler is imported.
"""

# A workload that may hold a GPU request, or an object the scheduling lints read (resource.k8s.io /
# resourceClaim: already-DRA objects and the workloads that use them).
MIGRATION = (
    "nvidia.com",
    "ResourceClaimTemplate",
    "volcano.sh/gpu",
    "volcano.sh/vgpu",
    "gpu-fraction",
    "gpu-memory",
    "resource.k8s.io",
    "resourceClaim",
)
# A DeviceClass that maps an extended resource to DRA (the bridge's pre-pass).
CLASS = b"extendedResourceName"
# A device plugin sharing config, or what points at one (the sharing pre-pass); the config label is
# dra_migrate.sharing.model.CONFIG_LABEL.
SHARING = (b"timeSlicing", b"mps:", b"sharing:", b"devicePlugin", b"nvidia.com/device-plugin.config",
           b"mig.strategy", b"migStrategy")
