"""The pod-equivalence oracle: does a migrated pod keep what the device plugin gave it (issue #19)?

BEFORE (device plugin semantics) is written here from the Kubernetes and NVIDIA documentation, independently
of the compiler: `before.py` (extended resources, the kubelet's effective demand, ExtendedResourceToleration,
nodeName), `nodematch.py` (nodeSelector, required node affinity, taints), `sharing.py` (device plugin sharing
configs). AFTER (DRA) is the simulator `dra_migrate.simulate` with the real CEL environment, fed the migrated
objects (`after.py`). `cluster.py` builds the synthetic cluster both sides run on; `properties.py` states the
properties and returns the differences; `manifests.py` finds the pods of a case (golden or synthetic).
"""
