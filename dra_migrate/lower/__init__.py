"""Lower: IR → DRA objects and document edit operations for a target Kubernetes version."""
