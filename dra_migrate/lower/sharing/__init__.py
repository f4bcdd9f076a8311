"""GPU sharing and partitioning: device plugin sharing configs (time-slicing, MPS), MIG, other schemes."""
