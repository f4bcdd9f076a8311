"""Emit: minimal text edits against the original file, new documents, and reports."""
