"""The line-level YAML reading used on text no parser can read: comments and block scalars are not code."""

from __future__ import annotations

from dra_migrate.source.textscan import code_lines, strip_comment

TEXT = """\
a: 1 # nvidia.com/gpu: 2
script: |
  nvidia.com/gpu: 3

  more
b:
  - |
    nvidia.com/gpu: 4
  - name: x
    note: >-
      nvidia.com/gpu: 5
    nvidia.com/gpu: 6
cmd: echo a |
s: "a # not a comment" # a comment
t: !!str |
  hidden
---
after: marker
"""


def test_code_lines_skip_comments_and_block_scalar_content() -> None:
    assert list(code_lines(TEXT)) == [
        (1, "a: 1"),
        (2, "script: |"),
        (6, "b:"),
        (7, "  - |"),
        (9, "  - name: x"),
        (10, "    note: >-"),
        (12, "    nvidia.com/gpu: 6"),
        (13, "cmd: echo a |"),
        (14, 's: "a # not a comment"'),
        (15, "t: !!str |"),
        (17, "---"),
        (18, "after: marker"),
    ]


def test_strip_comment_keeps_hashes_inside_values() -> None:
    assert strip_comment("url: http://x/#frag") == "url: http://x/#frag"
    assert strip_comment("k: 'it''s # here' # gone") == "k: 'it''s # here' "
    assert strip_comment("# all") == ""
