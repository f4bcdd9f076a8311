"""Before translation: which kustomize builds can be kept right after the migration, and the refusals.

Each edit the finish step will need (a kustomization's `configurations:`, `resources:` or `patches:`, a patch
file, a new file) is tried on the text now; a workload whose build needs an edit that cannot be made is not
migrated, with the reason.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.emit.claims_file import claims_target
from dra_migrate.pipeline import might_need_migration
from dra_migrate.run.integrations import kustomize
from dra_migrate.run.integrations.kustomize import Kustomization
from dra_migrate.run.integrations.kustomize_files import display_of, refusal
from dra_migrate.run.integrations.kustomize_model import Builder, Instance
from dra_migrate.run.integrations.kustomize_patches import Analysis
from dra_migrate.run.integrations.kustomize_tree import BuildIndex
from dra_migrate.source.helm import GPU_TEXT_RE

if TYPE_CHECKING:
    from dra_migrate.run.integrations.kustomize_files import KustomizeFiles, Prepared


def prepare(run: KustomizeFiles, p: Prepared, claims_out: Path | None) -> None:
    # lazy: start-up (run.integrations.kustomize_finish: ~9 ms, only prepare() needs it)
    from dra_migrate.run.integrations.kustomize_finish import plan, render_plan

    assert run._rules is not None
    index = p.index
    for k in index.by_dir.values():
        p.patch_files.update(e.path for e in k.patches if e.path is not None)
        p.config_files.update(k.configurations)
    candidates = set(run._raw)
    builder = Builder(index, run.docs, run.patch_docs, run._rules)
    instances: list[Instance] = []
    for k in index.by_dir.values():
        if index.parents(k) or k.kind == "Component":
            continue
        if _relevant(run, index, k, candidates):
            instances.extend(builder.state(k))
    analysis = Analysis(run._rules, run.translate, run.translated_file, run.mentions_gpu)
    d = analysis.run(instances)
    p.decisions = d
    p.patch_problems = builder.patch_problems
    problems: dict[Path, list[tuple[str, str]]] = {}  # candidate → [(code, why)]

    def refuse(file: Path, code: str, why: str) -> None:
        problems.setdefault(file, []).append((code, why))
        d.refuse(file, why, "")

    _claims_placement(run, p, claims_out, candidates, refuse)
    analysis.cascade()
    # every edit the build will need, tried on the text now; a workload whose build cannot be edited is refused
    for _round in range(8):
        migrating = {f for f in candidates if f not in d.refused and _changes(run, f)}
        finals = {f: t.objects for f in migrating if (t := run.known_translation(f)) is not None}
        pl = plan(run, p, migrating, finals, _sources(run, claims_out, migrating), predicting=True)
        failed = {path: why for path, why in render_plan(run, p, pl).items() if isinstance(why, str)}
        new = False
        for path, why in sorted(failed.items()):
            for file, code, what in pl.needs.get(path, []):
                if file in candidates and file not in d.refused:
                    refuse(file, code, f"its build needs {what}, but {why}")
                    new = True
        analysis.cascade()
        if not new:
            break
    _report(run, p, problems)


def _sources(run: KustomizeFiles, claims_out: Path | None, migrating: set[Path]) -> dict[Path, set[Path]]:
    """The new claims file each migrated file would write to, as the run will (emit.claims_file)."""
    out: dict[Path, set[Path]] = {}
    for f in migrating:
        if (claims_out is not None or f.suffix == ".json") and _creates(run, f):
            out.setdefault(Path(os.path.realpath(claims_target(claims_out, run._display[f]))), set()).add(f)
    return out


def _relevant(run: KustomizeFiles, index: object, k: Kustomization, candidates: set[Path]) -> bool:
    """Whether the build of root `k` needs the patch model: it has patches, and GPU workloads or GPU patches."""
    assert isinstance(index, BuildIndex)
    under = index.kustomizations_under(k)
    if not any(sub.patches for sub in under):
        return False
    if any(f in candidates for f in index.builds_files(k)):
        return True
    return any(e.path in candidates or (e.text is not None and _gpu_text(e.text)) for sub in under for e in sub.patches)


def _gpu_text(text: str) -> bool:
    return might_need_migration(text.encode())


def _changes(run: KustomizeFiles, file: Path) -> bool:
    """Whether the compiler rewrites the file's objects: known for the files the patch analysis translated;
    for the others (most of them: translating is the run's job, in parallel), whether it names a GPU."""
    raw = run._raw.get(file)
    if raw is None:
        return False
    t = run.known_translation(file)
    if t is None:
        return _names_gpu(raw)
    return t.refused is None and t.objects != run.originals(file)


def _names_gpu(raw: bytes) -> bool:
    return GPU_TEXT_RE.search(raw.decode("utf-8", "replace")) is not None


def _creates(run: KustomizeFiles, file: Path) -> bool:
    """Whether migrating the file creates objects (claim templates) that go to another file."""
    raw = run._raw.get(file)
    t = run.known_translation(file)
    if t is None or raw is None:
        return raw is not None and _names_gpu(raw)
    return t.refused is None and len(t.objects) > len(run.originals(file))


def _claims_placement(run: KustomizeFiles, p: Prepared, claims_out: Path | None, candidates: set[Path],
                      refuse: object) -> None:
    """A file that receives new claim objects (--claims-out, the sibling of a JSON file) must be in the
    builds of the workloads that reference them: added to the resources of each kustomization listing the
    workload, inside its directory (kustomize's default load restrictor), and never twice in one build."""
    assert callable(refuse)
    listers: dict[Path, list[tuple[Kustomization, Path]]] = {}
    for f in sorted(candidates):
        if f.suffix != ".json" and claims_out is None:
            continue
        owners = p.index.owners(f)
        if not owners or not _creates(run, f):
            continue
        target = Path(os.path.realpath(claims_target(claims_out, run._display[f])))
        for k in owners:
            rel = os.path.relpath(target, k.dir)
            inside = not rel.startswith("..")
            if not inside and not os.path.relpath(f, k.dir).startswith(".."):
                refuse(f, "DRA718", f"its claim templates go to {target.name}, outside {k.display}'s directory: "
                       "kustomize refuses such a resource (load restrictor), so the pods would reference objects "
                       "their build does not have; give --claims-out a path inside it")
                continue
            listers.setdefault(target, []).append((k, f))
    for target, pairs in listers.items():
        ks = {k.path: k for k, _f in pairs}
        if len(ks) < 2:
            continue
        roots = [{r.path for r in p.index.roots_above(k)} for k in ks.values()]
        shared = set.intersection(*roots)
        if shared:
            for _k, f in pairs:
                refuse(f, "DRA718", f"its claim templates go to {target.name}, which {len(ks)} kustomizations "
                       f"would list, and one build ({Path(sorted(shared)[0]).parent.name}) holds them all: kustomize "
                       "refuses an object twice; use a --claims-out directory (a file per source)")


def _unloadable_in(run: KustomizeFiles, p: Prepared, k: Kustomization) -> str | None:
    """Why the build of `k` cannot be modelled, if one of its files cannot be read or parsed."""
    for f in p.index.builds_files(k):
        why = run.unloadable.get(f)
        if why is not None:
            return f"its build includes {run._display.get(f) or display_of(f)}, which {why}"
    return None


def _report(run: KustomizeFiles, p: Prepared, problems: dict[Path, list[tuple[str, str]]]) -> None:
    """The diagnostics a refused file, a patch that stays, gets in place of its translation."""
    d = p.decisions
    for f, whys in d.refused.items():
        raw = run._raw.get(f)
        if raw is None:
            continue
        coded = problems.get(f, [])
        seen: set[str] = set()
        diags: list[Diagnostic] = []
        for code, why in coded:
            diags.append(refusal(run._display[f], raw, code, f"not migrated: {why}"))
            seen.add(why)
        for why, _where in whys:
            if why not in seen and why:
                diags.append(refusal(run._display[f], raw, "DRA717", f"not migrated: {why}"))
        diags.extend(_left_with_their_file(run, f, raw, diags))
        p.refused[f] = diags
    carried = {(key[0], key[1], key[2]) for key in d.carried}
    for k in p.index.by_dir.values():
        for e in k.patches:
            ekey = (k.path, e.field, e.index)
            if ekey in carried:
                continue
            refused, why = d.stays.get(ekey, (False, "its target is in no build this run migrates"))
            if ekey not in d.stays and run.unloadable:
                broken = _unloadable_in(run, p, k)
                if broken is not None:  # kustomize fails on that file too: the build is broken as it is
                    why = broken
            problem = p.patch_problems.get(ekey)
            if problem:  # kustomize fails on it too: the build is broken before the migration as well
                refused, why = False, problem
            code = "DRA716" if refused else ("DRA701" if e.path is not None else "DRA702")
            raw = run._raw.get(e.path) if e.path is not None else None
            mentions: list[Diagnostic] = []
            if raw is not None and e.path is not None:
                mentions = kustomize.patch_file_mentions(
                    run._display.get(e.path, e.entry), raw, e.where(k.display), f"stays as it is: {why}", code)
                p.reports.setdefault(e.path, []).extend(mentions)
            elif e.text is not None and k.path in run._raw:
                mentions = kustomize.inline_patch_mentions(k, e, f"stays as it is: {why}", code)
                p.reports.setdefault(k.path, []).extend(mentions)
            if refused and not mentions:
                what = (f"kustomize patch {e.entry}" if e.path is not None else "kustomize replicas entry"
                        if e.field == "replicas" else "inline kustomize patch")
                diag = make(code, f"{what} stays as it is: {why}", Location(k.display, e.line))
                (p.reports if k.path in run._raw else p.run_reports).setdefault(k.path, []).append(diag)



def _left_with_their_file(run: KustomizeFiles, f: Path, raw: bytes, diags: list[Diagnostic]) -> list[Diagnostic]:
    """A refused file is left as it is, with every workload in it. When the refusals are about some of its GPU
    workloads (a patch of theirs), each other one gets its own diagnostic saying why it is left too (no workload
    stays on the device plugin unnamed); a refusal about the file (where its claims would go) covers them all."""
    said = " ".join(d.message for d in diags)
    labels: list[str] = []
    for o in run.originals(f):
        if might_need_migration(json.dumps(o, default=str).encode()):
            meta: dict[str, Any] = o["metadata"] if isinstance(o.get("metadata"), dict) else {}
            labels.append(f"{o.get('kind')} {meta.get('name')}")
    if not diags or not any(label in said for label in labels):
        return []
    first = diags[0].message.removeprefix("not migrated: ")
    return [refusal(run._display[f], raw, "DRA717", f"not migrated: {label} is left as is with its file, which "
                    f"holds a workload that cannot be migrated ({diags[0].code}: {first})")
            for label in labels if label not in said]
