"""GPU node selection → DRA device selection (pure functions over plain data)."""

from dra_migrate.lower.selection.literals import cel_string, regex_escape
from dra_migrate.lower.selection.nodematch import node_matches
from dra_migrate.lower.selection.translate import Decision, SelectionInput, SelectionResult, translate_selection
from dra_migrate.ruleset.labels import LabelRule, LabelRules, load_label_rules, parse_label_rules

__all__ = [
    "Decision",
    "LabelRule",
    "LabelRules",
    "SelectionInput",
    "SelectionResult",
    "cel_string",
    "load_label_rules",
    "node_matches",
    "parse_label_rules",
    "regex_escape",
    "translate_selection",
]
