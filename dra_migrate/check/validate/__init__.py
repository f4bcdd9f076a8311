"""Validation of emitted objects: the official OpenAPI schema of the target release plus the API server's
semantic limits that the schema does not carry."""

from dra_migrate.check.validate.issues import SchemaIssue
from dra_migrate.check.validate.limits import check_claim_spec, check_object_limits, check_pod_spec_claims
from dra_migrate.check.validate.schema import schema_served, served_api_versions, validate_object

__all__ = [
    "SchemaIssue",
    "check_claim_spec",
    "check_object_limits",
    "check_pod_spec_claims",
    "schema_served",
    "served_api_versions",
    "validate_object",
]
