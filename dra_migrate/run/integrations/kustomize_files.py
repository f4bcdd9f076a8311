"""The kustomize part of a run, what every stage of it reads: the prepared decisions, the files the run may
migrate and the compiler's translation of them, the documents of kustomizations' patches.

kustomize_layout drives the stages (prepare: kustomize_checks; finish: kustomize_finish); they read this."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.lower.context import RunContext
from dra_migrate.pipeline import might_need_migration, process_source
from dra_migrate.run.integrations.kustomize import Kustomization, PatchEntry
from dra_migrate.run.integrations.kustomize_model import PatchDoc
from dra_migrate.run.integrations.kustomize_patches import Decisions, Translation
from dra_migrate.run.integrations.kustomize_tree import BuildIndex
from dra_migrate.source import realpaths
from dra_migrate.source.compose import ComposeError, compose_documents
from dra_migrate.source.helm import GPU_TEXT_RE
from dra_migrate.source.plain import to_plain

if TYPE_CHECKING:
    from dra_migrate.ruleset.kinds import KindRuleSet

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


def resolved(p: Path | str) -> Path:
    return Path(realpaths.resolved(p))


def display_of(path: Path) -> str:
    """A path as diagnostics show it: relative to the working directory when it is under it."""
    rel = os.path.relpath(path)
    return path.as_posix() if rel.startswith("..") else rel



class KustomizeFiles:
    """What the kustomize checks and edits read: the files the run may migrate, their translations by the
    compiler, the documents of patches. KustomizeRun (kustomize_layout) fills it and drives the checks."""

    def __init__(self) -> None:
        self._raw: dict[Path, bytes] = {}  # the files that may need migration, by real path
        self._display: dict[Path, str] = {}
        self._translations: dict[Path, Translation | None] = {}
        self._originals: dict[Path, list[dict[str, Any]]] = {}
        self.unloadable: dict[Path, str] = {}  # files of builds that cannot be read or parsed: why
        self._rules: KindRuleSet | None = None
        self._run: RunContext | None = None  # the run's: its options and pre-pass facts

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

    def originals(self, path: Path) -> list[dict[str, Any]]:
        """The objects of a file the run may migrate, as it is (parsed once: the edit plan asks every round)."""
        if path not in self._originals:
            docs = self.docs(path) if path in self._raw else None
            self._originals[path] = objects_of(docs or [])
        return self._originals[path]

    def known_translation(self, path: Path) -> Translation | None:
        """The compiler's answer on a file, if the patch analysis asked for it already."""
        return self._translations.get(path)

    def docs(self, path: Path) -> list[Any] | None:
        """The plain documents of a file; None when it cannot be read or parsed (`unloadable` says why)."""
        raw = self._raw.get(path)
        try:
            return parse_docs(raw if raw is not None else path.read_bytes(), path.suffix == ".json")
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError | IsADirectoryError):  # (a missing entry: kustomize's to say)
                self.unloadable[path] = f"cannot be read ({exc.strerror})"
            return None
        except ValueError as exc:
            self.unloadable[path] = f"does not parse ({exc})"
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


def parse_docs(raw: bytes, is_json: bool) -> list[Any]:
    """The plain documents of a file (ValueError when it does not parse), read as the run reads the files it
    translates (source.compose, source.plain): the build model and the translations then agree on every value,
    and a file the run would refuse to parse (a duplicate key, an alias bomb) is not modelled either."""
    text = raw.decode("utf-8").removeprefix("\ufeff")
    if is_json:
        return [json.loads(text)]
    try:
        return [to_plain(d.root) for d in compose_documents(text)]
    except ComposeError as exc:
        raise ValueError(f"line {exc.line}: {exc.message}" if exc.line else exc.message) from None


def translation_of(output: bytes, new_documents: list[dict[str, Any]], errors: list[Diagnostic] | None
                   ) -> Translation:
    if errors is not None:
        first = next((d for d in errors if d.severity.name == "ERROR"), errors[0] if errors else None)
        return Translation([], f"{first.code}: {first.message}" if first else "the compiler failed")
    try:
        docs = parse_docs(output, output.lstrip().startswith(b"{"))
    except ValueError as exc:
        return Translation([], str(exc))
    return Translation([*objects_of(docs), *new_documents])


def objects_of(docs: list[Any]) -> list[dict[str, Any]]:
    """The objects of a file's plain documents, a `kind: List`'s items in its place."""
    out: list[dict[str, Any]] = []
    for d in docs:
        if isinstance(d, dict) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            out.extend(i for i in d["items"] if isinstance(i, dict))
        elif isinstance(d, dict):
            out.append(d)
    return out


def gpu_line(raw: bytes) -> tuple[int, int]:
    for i, line in enumerate(raw.decode("utf-8", "replace").splitlines(), start=1):
        m = GPU_TEXT_RE.search(line)
        if m and not line.lstrip().startswith("#"):
            return i, m.start() + 1
    return 1, 1


def refusal(display: str, raw: bytes, code: str, message: str) -> Diagnostic:
    line, col = gpu_line(raw)
    return make(code, message, Location(display, line, col))
