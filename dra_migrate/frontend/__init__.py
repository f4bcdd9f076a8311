"""Frontend: documents → IR workloads, guided by the kind rules."""
