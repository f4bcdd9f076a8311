"""The rule set: every rules/ file loaded and checked against its schema, and what is derived from it."""
