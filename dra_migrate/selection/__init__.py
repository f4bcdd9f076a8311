"""GPU node selection → DRA device selection (pure functions over plain data)."""

from dra_migrate.selection.literals import cel_string, regex_escape
from dra_migrate.selection.nodematch import node_matches
from dra_migrate.selection.rules import LabelRule, LabelRules, load_label_rules, parse_label_rules
from dra_migrate.selection.translate import Decision, SelectionInput, SelectionResult, translate_selection

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
