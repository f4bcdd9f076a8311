"""dra-migrate: NVIDIA device plugin manifests → Kubernetes Dynamic Resource Allocation."""

__version__ = "0.1.0"
