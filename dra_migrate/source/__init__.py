"""Source layer: files → documents with exact text and node positions."""
