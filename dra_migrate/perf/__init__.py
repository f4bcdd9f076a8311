"""Speed machinery, optional by construction: the fork executor (parallel, recording, frozen_pickle), the
scout, the GC pause, the background writer and the CEL caches (caches, parser_cache, verdict_memo, usercache).

Nothing below run/ imports this package: run.executor and the entry point look for it and fall back to the
serial executor, direct writes and uncached CEL when it is absent (or DRA_MIGRATE_EXECUTOR=serial), with
byte-identical output (tests/perf/test_executors.py)."""
