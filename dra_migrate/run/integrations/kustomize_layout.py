"""The kustomize part of a run. What the user deploys is the built output, so every property of a migrated pod
must hold there, not only in each file:

- a reference to a ResourceClaimTemplate/ResourceClaim survives namePrefix/nameSuffix: each kustomization that
  lists a workload with claims gets a transformer configuration (`configurations:`) naming the pod fields;
- every object a pod references is in its build: a new claims file is added to `resources:`;
- overlay patches of a migrated workload are carried over (kustomize_patches), or the workload is not migrated.

Decided once the run has read every file and before anything is translated (`prepare`): a workload whose
build cannot be kept right is refused there, so its file is never rewritten. `finish` makes the kustomize
edits once the workloads are migrated.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.lower.context import RunContext
from dra_migrate.pipeline import might_need_migration, process_source
from dra_migrate.run.integrations import kustomize
from dra_migrate.run.integrations.kustomize import Kustomization, PatchEntry
from dra_migrate.run.integrations.kustomize_model import PatchDoc
from dra_migrate.run.integrations.kustomize_patches import Decisions, Translation
from dra_migrate.run.integrations.kustomize_tree import BuildIndex, discover_kustomizations
from dra_migrate.source.helm import GPU_TEXT_RE

if TYPE_CHECKING:
    from dra_migrate.ruleset.kinds import KindRuleSet
    from dra_migrate.source.discover import Found

NAMEREF_FILE = "dra-nameref.yaml"
PATCH_HEADER = "# dra-migrate: "


@dataclass(slots=True)
class Prepared:
    index: BuildIndex
    decisions: Decisions
    editable: set[Path]  # kustomization files the run may edit
    refused: dict[Path, list[Diagnostic]] = field(default_factory=dict)  # candidate file → why not migrated
    reports: dict[Path, list[Diagnostic]] = field(default_factory=dict)  # patch file / kustomization → reports
    run_reports: dict[Path, list[Diagnostic]] = field(default_factory=dict)  # about files the run does not route
    patch_problems: dict[tuple[Path, str, int], str] = field(default_factory=dict)  # patches that do not load
    config_files: set[Path] = field(default_factory=set)  # listed under configurations: (not manifests)
    patch_files: set[Path] = field(default_factory=set)


def _real(p: Path | str) -> Path:
    return Path(os.path.realpath(p))


def display_of(path: Path) -> str:
    """A path as diagnostics show it: relative to the working directory when it is under it."""
    rel = os.path.relpath(path)
    return path.as_posix() if rel.startswith("..") else rel


class KustomizeRun:
    def __init__(self) -> None:
        self.noted: dict[Path, tuple[Found, bytes]] = {}  # kustomization files the walk read, by real path
        self.prepared: Prepared | None = None
        self._raw: dict[Path, bytes] = {}  # the files that may need migration, by real path
        self._display: dict[Path, str] = {}
        self._translations: dict[Path, Translation | None] = {}
        self._rules: KindRuleSet | None = None
        self._run: RunContext | None = None  # the run's: its options and pre-pass facts

    # --- during the read --------------------------------------------------------------------------------

    def note(self, found: Found, raw: bytes) -> None:
        if found.name in kustomize.KUSTOMIZATION_NAMES:
            self.noted.setdefault(_real(found.path), (found, raw))

    # --- before translation ------------------------------------------------------------------------------

    def prepare(self, candidates: Sequence[tuple[Found, bytes]], paths: Sequence[str], claims_out: Path | None,
                rules: KindRuleSet, run: RunContext, read_repository: bool = False) -> None:
        """`read_repository`: the run noted the kustomizations of the whole repository (a run on some files
        reads the repository around them); only those under `paths` are the run's to edit."""
        # lazy: start-up (run.integrations: ~2 ms, only prepare() needs it)
        from dra_migrate.run.integrations import kustomize_checks

        self._rules, self._run = rules, run
        for found, raw in candidates:
            real = _real(found.path)
            self._raw[real] = raw
            self._display[real] = found.display
        loaded: dict[Path, Kustomization] = {}
        for real, (found, raw) in self.noted.items():
            k = kustomize.load(real, found.display, raw)
            if k is not None:
                loaded[real] = k
        given = [Path(os.path.realpath(p)) for p in paths if p != "-"]
        editable = {r for r in loaded if any(g == r or g in r.parents for g in given)}
        near: dict[Path, Kustomization | None] = {}
        for real in self._raw:  # a file named alone still belongs to the kustomizations beside and above it
            for k in _listing(real, loaded, near):
                loaded.setdefault(k.path, k)
                editable.add(k.path)
        if not loaded:
            return
        owned = [r for r in self._raw if any(r in {t for _e, t, _l in k.resources} for k in loaded.values())]
        if owned and not read_repository:  # overlays elsewhere in the repository patch these bases too
            for k in discover_kustomizations(owned, paths):
                loaded.setdefault(k.path, k)
        index = BuildIndex(loaded.values())
        self.prepared = Prepared(index, Decisions(), editable)
        kustomize_checks.prepare(self, self.prepared, claims_out)

    def translate(self, display: str, text: str) -> Translation:
        """The compiler on a text (fresh names), as plain objects."""
        assert self._run is not None
        # no self-check here: the run's own translation of the file checks what is written
        fresh = RunContext(self._run.options, facts=self._run.facts)
        fr = process_source(display, text.encode("utf-8"), fresh, rules=self._rules,
                            self_check=False)
        return translation_of(fr.output if fr.output is not None else fr.original, fr.new_documents,
                              fr.diagnostics if fr.failed else None)

    def translated_file(self, path: Path) -> Translation | None:
        """The compiler on a file the run will translate; None for any other file."""
        if path not in self._translations:
            raw = self._raw.get(path)
            self._translations[path] = None if raw is None else self.translate(self._display[path],
                                                                               raw.decode("utf-8", "replace"))
        return self._translations[path]

    def known_translation(self, path: Path) -> Translation | None:
        """The compiler's answer on a file, if the patch analysis asked for it already."""
        return self._translations.get(path)

    def docs(self, path: Path) -> list[Any] | None:
        raw = self._raw.get(path)
        try:
            return parse_docs(raw if raw is not None else path.read_bytes(), path.suffix == ".json")
        except (OSError, ValueError):
            return None

    def patch_docs(self, entry: PatchEntry, k: Kustomization) -> tuple[list[Any], str | None]:
        try:
            if entry.path is not None:
                raw = self._raw.get(entry.path)
                return parse_docs(raw if raw is not None else entry.path.read_bytes(),
                                  entry.path.suffix == ".json"), None
            assert entry.text is not None
            return parse_docs(entry.text.encode("utf-8"), entry.text.lstrip().startswith("[")), None
        except OSError as exc:
            return [], f"cannot read the patch: {exc.strerror}"
        except ValueError as exc:
            return [], f"the patch does not parse: {exc}"

    def mentions_gpu(self, pd: PatchDoc) -> bool:
        return might_need_migration(json.dumps(pd.data).encode())

    # --- during translation ------------------------------------------------------------------------------

    def intercept(self, found: Found, raw: bytes) -> list[Diagnostic] | None:
        p = self.prepared
        if p is None:
            return None
        real = _real(found.path)
        if real in p.refused:
            return p.refused[real]
        if real in p.reports or real in p.patch_files or real in p.config_files:
            return p.reports.get(real, [])
        return None

    def kustomization_reports(self, found: Found) -> list[Diagnostic] | None:
        p = self.prepared
        if p is None:
            return None
        return p.reports.get(_real(found.path))

    # --- after translation ---------------------------------------------------------------------------------

    def finish(self, cfg: Any, result: Any) -> None:
        if self.prepared is None:
            return
        # lazy: start-up (run.integrations: ~11 ms, only finish() needs it)
        from dra_migrate.run.integrations import kustomize_finish

        kustomize_finish.finish(self, self.prepared, cfg, result)


def _listing(file: Path, loaded: dict[Path, Kustomization], near: dict[Path, Kustomization | None]
             ) -> list[Kustomization]:
    """The kustomizations in the file's directory and the directories above it that list it in resources
    (`near`: each directory's kustomization, looked up once)."""
    out: list[Kustomization] = []
    d = file.parent
    for _ in range(8):
        if d not in near:
            found = kustomize.find_kustomization(d)
            near[d] = None if found is None else loaded.get(_real(found)) or kustomize.load(_real(found),
                                                                                           display_of(found))
        k = near[d]
        if k is not None and file in {t for _e, t, _l in k.resources}:
            out.append(k)
        if (d / ".git").exists() or d.parent == d:
            break
        d = d.parent
    return out


def parse_docs(raw: bytes, is_json: bool) -> list[Any]:
    """The plain documents of a file (ValueError when it does not parse)."""
    text = raw.decode("utf-8").removeprefix("\ufeff")
    if is_json:
        return [json.loads(text)]
    try:
        return [d for d in yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))]  # noqa: S506
    except yaml.YAMLError as exc:
        raise ValueError(str(exc).splitlines()[0]) from None


def translation_of(output: bytes, new_documents: list[dict[str, Any]], errors: list[Diagnostic] | None
                   ) -> Translation:
    if errors is not None:
        first = next((d for d in errors if d.severity.name == "ERROR"), errors[0] if errors else None)
        return Translation([], f"{first.code}: {first.message}" if first else "the compiler failed")
    try:
        docs = parse_docs(output, output.lstrip().startswith(b"{"))
    except ValueError as exc:
        return Translation([], str(exc))
    objects: list[dict[str, Any]] = []
    for d in docs:
        if isinstance(d, dict) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            objects.extend(i for i in d["items"] if isinstance(i, dict))
        elif isinstance(d, dict):
            objects.append(d)
    objects.extend(new_documents)
    return Translation(objects)


def gpu_line(raw: bytes) -> tuple[int, int]:
    for i, line in enumerate(raw.decode("utf-8", "replace").splitlines(), start=1):
        m = GPU_TEXT_RE.search(line)
        if m and not line.lstrip().startswith("#"):
            return i, m.start() + 1
    return 1, 1


def refusal(display: str, raw: bytes, code: str, message: str) -> Diagnostic:
    line, col = gpu_line(raw)
    return make(code, message, Location(display, line, col))
