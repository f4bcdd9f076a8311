"""The kustomize edits that keep each build right, planned from what is (or will be) migrated:

- `configurations: [dra-nameref.yaml]` and that file, in every kustomization listing a workload with claims;
- new claims files (--claims-out, JSON siblings) in the `resources:` of the kustomizations of their workloads;
- carried-over overlay patches: their GPU keys removed, and a JSON 6902 patch of the claim template beside them.

The same plan is made twice: before translation from the compiler's answers on each file (every edit is tried
on the text, and a workload whose build needs an edit that cannot be made is refused), and after it from the
run's results (the edits are made).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.emit import render
from dra_migrate.emit.claims_file import claims_target
from dra_migrate.emit.style import Style
from dra_migrate.emit.writer import write_atomic
from dra_migrate.pipeline import FileResult
from dra_migrate.plan import Append, DeleteItem, DeleteKey, DocPath, Op, ReplaceValue, apply_ops, walk
from dra_migrate.run.integrations.kustomize_edit import (
    DocumentEdits,
    EditError,
    append_ops,
    deletion_ops,
    edit_file,
    text_after,
)
from dra_migrate.run.integrations.kustomize_facts import name_reference_config
from dra_migrate.run.integrations.kustomize_files import (
    NAMEREF_FILE,
    PATCH_HEADER,
    KustomizeFiles,
    Prepared,
    display_of,
    gpu_line,
    parse_docs,
    resolved,
)
from dra_migrate.run.integrations.kustomize_model import PatchDoc
from dra_migrate.run.integrations.kustomize_patches import ClaimPatch, claim_refs
from dra_migrate.run.writes import in_output_dir, unified_diff, write_problem
from dra_migrate.source.helm import gpu_key_lines

Need = tuple[Path, str, str]  # (workload file that needs the edit, code if it cannot be made, what it is)


@dataclass(slots=True)
class Pending:
    """Everything to change in one existing file."""

    edits: DocumentEdits = field(default_factory=DocumentEdits)
    additions: dict[str, list[Any]] = field(default_factory=dict)  # kustomization lists to append to
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Plan:
    pending: dict[Path, Pending] = field(default_factory=dict)
    created: dict[Path, bytes] = field(default_factory=dict)
    diags: list[Diagnostic] = field(default_factory=list)
    needs: dict[Path, list[Need]] = field(default_factory=dict)  # edited or created file → who needs it
    problems: dict[Path, str] = field(default_factory=dict)  # file → why it cannot be edited (or created)

    def at(self, path: Path, need: Need) -> Pending:
        self.needs.setdefault(path, []).append(need)
        return self.pending.setdefault(path, Pending())

    def create(self, path: Path, data: bytes, need: Need) -> None:
        self.needs.setdefault(path, []).append(need)
        existing = _existing(path)
        if existing == data:
            return
        if existing is not None and not existing.startswith(PATCH_HEADER.encode()):
            self.problems[path] = f"{path.name} already exists there and was not written by dra-migrate"
            return
        self.created[path] = data


def plan(run: KustomizeFiles, p: Prepared, migrated: set[Path], finals: dict[Path, list[dict[str, Any]]],
         sources: dict[Path, set[Path]], predicting: bool = False) -> Plan:
    """The edits for `migrated` (files whose workloads are migrated), `finals` (their objects after the
    migration) and `sources` (each new claims file and the files whose objects go there). `predicting`: before
    translation, when the objects of most migrated files are not known yet (the edits are the same; only the
    name-reference file's content differs)."""
    d = p.decisions
    out = Plan()
    inline: dict[tuple[Path, DocPath], dict[int, set[DocPath]]] = {}
    for key, paths in sorted(d.deletions.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        pd = d.patch_docs[key]
        insts = d.carried.get(key, [])
        if not all(i.file in migrated for i in insts):
            continue
        need = (insts[0].file, "DRA716", f"the patch listed at {pd.entry.where(pd.k.display)} edited (its GPU keys "
                "removed)")
        if not _editable(p, pd.k):
            out.problems[pd.k.path] = _outside(pd.k.display)
            out.needs.setdefault(pd.k.path, []).extend((i.file, need[1], need[2]) for i in insts)
            continue
        ops = deletion_ops(pd.data, paths, pd.json6902)
        if pd.json6902 and apply_ops(pd.data, ops) == []:  # kustomize refuses an empty JSON 6902 patch
            for i in insts:
                out.at(pd.k.path, (i.file, need[1], need[2])).edits.ops.setdefault(0, []).append(
                    DeleteItem((pd.entry.field, pd.entry.index)))
            out.diags.append(_carried(pd, insts, True, run._display))
        elif pd.entry.path is not None:
            for i in insts:
                out.at(pd.entry.path, (i.file, need[1], need[2])).edits.ops.setdefault(pd.doc, []).extend(
                    op for op in ops if op not in out.pending.get(pd.entry.path, Pending()).edits.ops.get(pd.doc, []))
            out.diags.append(_carried(pd, insts, False, run._display))
        else:
            inline.setdefault((pd.k.path, pd.entry.doc_path), {})[pd.doc] = paths
            for i in insts:
                out.at(pd.k.path, (i.file, need[1], need[2]))
            out.diags.append(_carried(pd, insts, False, run._display))
    for (kpath, doc_path), docs in inline.items():
        pd = d.patch_docs[next(k for k in d.patch_docs if k[0] == kpath and d.patch_docs[k].entry.doc_path == doc_path)]
        assert pd.entry.text is not None
        docs_ops = {doc: deletion_ops(d.patch_docs[(kpath, pd.entry.field, pd.entry.index, doc)].data, paths,
                                      pd.json6902) for doc, paths in docs.items()}
        try:
            out.pending[kpath].edits.inline[doc_path] = text_after(pd.entry.text, docs_ops)
        except EditError as exc:
            out.problems[kpath] = f"its inline patch at line {pd.entry.line} cannot be edited: {exc}"
    for c in d.claim_patches:
        if c.inst.file not in migrated:
            continue
        name = _claim_name(finals.get(c.inst.file, []), c)
        if name is None:
            continue
        need = (c.inst.file, "DRA716", f"the claim patch {c.file_name} in {c.k.display}")
        if not _editable(p, c.k):
            out.problems[c.k.path] = _outside(c.k.display)
            out.needs.setdefault(c.k.path, []).append(need)
            continue
        out.create(c.k.dir / c.file_name, claim_patch_text(c, name).encode(), need)
        entry = {"path": c.file_name, "target": {"group": "resource.k8s.io", "kind": c.kind, "name": name}}
        out.at(c.k.path, need).additions.setdefault("patches", []).append(entry)
    assert run._rules is not None

    for k in p.index.by_dir.values():
        files = p.index.files_of(k)
        mine = [f for f in files if f in migrated]
        if mine or ((k.dir / NAMEREF_FILE).exists() and k.path in p.editable):
            objects = [o for f in files for o in (finals[f] if f in finals else _disk_objects(run, f))]
            with_refs = [o for o in objects if claim_refs(o)]
            if with_refs or (predicting and mine):
                needs = [(f, "DRA719", f"`configurations: [{NAMEREF_FILE}]` in {k.display}") for f in mine]
                if not _editable(p, k):
                    out.problems[k.path] = _outside(k.display)
                    out.needs.setdefault(k.path, []).extend(needs)
                else:
                    text = name_reference_config(with_refs, run._rules).encode()
                    for n in needs or [(k.path, "DRA719", "")]:
                        out.create(k.dir / NAMEREF_FILE, text, n)
                        out.at(k.path, n).additions.setdefault("configurations", []).append(NAMEREF_FILE)
        for new_file, srcs in sources.items():
            listed = [s for s in srcs if s in files]
            if listed:
                rel = os.path.relpath(new_file, k.dir).replace(os.sep, "/")
                needs = [(s, "DRA718", f"{rel} in the resources of {k.display}") for s in listed]
                if not _editable(p, k):
                    out.problems[k.path] = _outside(k.display)
                    out.needs.setdefault(k.path, []).extend(needs)
                    continue
                for n in needs:
                    out.at(k.path, n).additions.setdefault("resources", []).append(rel)
    return out


def render_plan(run: KustomizeFiles, p: Prepared, pl: Plan) -> dict[Path, tuple[bytes, bytes] | str]:
    """(old, new) bytes of every file the plan edits, or why it cannot be edited."""
    out: dict[Path, tuple[bytes, bytes] | str] = {path: why for path, why in pl.problems.items()}
    displays = {k.path: k.display for k in p.index.by_dir.values()}
    for path, work in sorted(pl.pending.items()):
        if path in out:
            continue
        display = displays.get(path) or run._display.get(path) or display_of(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            out[path] = f"it cannot be read ({exc.strerror})"
            continue
        edits = DocumentEdits({d: list(ops) for d, ops in work.edits.ops.items()}, dict(work.edits.inline))
        try:
            docs = parse_docs(raw, path.suffix == ".json")
        except ValueError:
            out[path] = "it does not parse"
            continue
        if work.additions:
            ops = append_ops(docs[0] if docs and isinstance(docs[0], dict) else {}, _dedup(work.additions))
            if isinstance(ops, str):
                out[path] = ops
                continue
            edits.ops.setdefault(0, []).extend(ops)
        edits.ops = {d: _combine(ops, docs[d] if d < len(docs) else None) for d, ops in edits.ops.items()}
        new = edit_file(raw, display, edits)
        out[path] = new if isinstance(new, str) else (raw, new)
    return out


def _combine(ops: list[Op], data: Any) -> list[Op]:
    """Entries deleted from a list and entries appended to it become replacements (the patcher keeps a block
    list non-empty); a list left with no entry loses its key."""
    deletes: dict[DocPath, set[int]] = {}
    appends: dict[DocPath, list[Any]] = {}
    others: list[Op] = []
    for op in ops:
        if isinstance(op, DeleteItem) and isinstance(op.path[-1], int):
            deletes.setdefault(op.path[:-1], set()).add(op.path[-1])
        elif isinstance(op, Append):
            appends.setdefault(op.path, []).extend(op.items)
        else:
            others.append(op)
    rest: list[Op] = []  # list edits first: at the end of a file an item must come before a new key
    for lst, items in appends.items():
        idx = sorted(deletes.pop(lst, set()))
        rest.extend(ReplaceValue((*lst, i), item) for i, item in zip(idx, items, strict=False))
        rest.extend(DeleteItem((*lst, i)) for i in idx[len(items):])
        if len(items) > len(idx):
            rest.append(Append(lst, tuple(items[len(idx):])))
    for lst, gone in deletes.items():
        try:
            current = walk(data, lst)
        except (KeyError, IndexError, TypeError):
            current = None
        if lst and isinstance(current, list) and len(gone) == len(current):
            rest.append(DeleteKey(lst))
        else:
            rest.extend(DeleteItem((*lst, i)) for i in sorted(gone))
    return rest + others


def finish(run: KustomizeFiles, p: Prepared, cfg: Any, result: Any) -> None:
    """The edits, made from the run's results."""
    by_real = {resolved(fr.path): fr for fr in result.files if fr.path != "<stdin>"}
    migrated = {real for real, fr in by_real.items() if fr.changed and not fr.failed}
    finals = {real: [dict(o.obj) for o in fr.objects if not o.emitted] for real, fr in by_real.items()}
    pl = plan(run, p, migrated, finals, _new_file_sources(cfg, result))
    rendered = render_plan(run, p, pl)
    displays = {k.path: k.display for k in p.index.by_dir.values()}
    diags = list(pl.diags)
    for path, outcome in sorted(rendered.items()):
        display = displays.get(path) or run._display.get(path) or display_of(path)
        if isinstance(outcome, str):
            diags.append(make("DRA708", f"not updated: {outcome}", Location(display)))
            continue
        old, new = outcome
        if old == new:
            continue
        result.files.append(FileResult(display, old, new))
        _emit(cfg, result, path, display, old, new)
        added = _added(old, pl.pending[path].additions) if path in pl.pending else []
        if added:
            diags.append(make("DRA703", "added " + "; ".join(added), Location(display)))
    for path, data in sorted(pl.created.items()):
        if isinstance(rendered.get(path), str):
            continue
        display = display_of(path)
        result.new_files[display] = data
        _emit(cfg, result, path, display, _existing(path) or b"", data)
    result.diagnostics.extend(diags)
    result.diagnostics.extend(d for ds in p.run_reports.values() for d in ds)


def _added(old: bytes, additions: dict[str, list[Any]]) -> list[str]:
    try:
        data = parse_docs(old, False)[0]
    except (ValueError, IndexError):
        data = {}
    out: list[str] = []
    for key, entries in _dedup(additions).items():
        current = data.get(key) if isinstance(data, dict) else None
        out.extend(f"{e if isinstance(e, str) else e.get('path')} to {key}" for e in entries
                   if not (isinstance(current, list) and e in current))
    return out


def _editable(p: Prepared, k: Any) -> bool:
    return k.path in p.editable


def _outside(display: str) -> str:
    return f"{display} is outside the paths this run was given (run it on the repository, or on both)"


def _carried(pd: PatchDoc, insts: Iterable[Any], removed: bool, displays: dict[Path, str]) -> Diagnostic:
    objs = ", ".join(sorted({f"{i.describe()} ({i.file.name})" for i in insts}))
    what = ("the patch has no operation left, so its entry is removed (the file, if any, is no longer used)"
            if removed else "its GPU keys are removed")
    line, col = pd.entry.line, 1
    display = pd.k.display
    if pd.entry.path is not None and not removed:
        display = displays.get(pd.entry.path) or display_of(pd.entry.path)
        try:
            line, col = gpu_line(pd.entry.path.read_bytes())
        except OSError:
            line, col = 0, 0
    return make("DRA715", f"kustomize patch {pd.entry.where(pd.k.display)} carried over to DRA for {objs}: {what}; "
                "what it asked of the GPUs is now a patch of the claim template", Location(display, line, col))


def claim_patch_text(c: ClaimPatch, name: str) -> str:
    """The patch file, written in c.k's directory. It names its sources relative to that directory, so its text
    does not depend on where dra-migrate was run from."""
    here = c.k.dir
    sources = ", ".join(sorted({s.entry.where(_beside(s.k.path, here)) for s in c.sources}, key=_line_key))
    lines = [f"{PATCH_HEADER}the GPU request of {sources}, for {c.inst.describe()},",
             f"# as a JSON 6902 patch of {c.kind} {name}. kustomize cannot strategic-merge resource.k8s.io lists",
             "# (it would replace them whole): operations by index, each request checked by name first."]
    lines.extend(f"# {where} said: {text}" for where, text in _gpu_comments(c.sources, here))
    for op in c.ops:
        lines.extend(render.block_item(op, 0, Style()))
    return "\n".join(lines) + "\n"


def _beside(path: Path, here: Path) -> str:
    """`path` as seen from the directory `here` (POSIX separators)."""
    return Path(os.path.relpath(path, here)).as_posix()


def _gpu_comments(sources: Iterable[PatchDoc], here: Path) -> list[tuple[str, str]]:
    """The removed GPU lines of the patches that carry a comment (the comment says why the count is what it is),
    with where they were, relative to `here`."""
    out: list[tuple[str, str]] = []
    seen: set[tuple[str, int]] = set()
    for s in sources:
        if s.entry.path is not None:
            display, first = _beside(s.entry.path, here), 0
            try:
                text = s.entry.path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
        else:
            display, first, text = _beside(s.k.path, here), s.entry.line, s.entry.text or ""
        lines = text.splitlines()
        for line, _col, _key in gpu_key_lines(text):
            body = lines[line - 1]
            if " #" in body and (display, line) not in seen:
                seen.add((display, line))
                out.append((f"{display}:{first or line}", body.strip()))
    return out


def _line_key(where: str) -> tuple[str, int]:
    file, _sep, line = where.rpartition(":")
    return (file, int(line)) if line.isdigit() else (where, 0)


def _claim_name(objects: list[dict[str, Any]], c: ClaimPatch) -> str | None:
    meta = c.inst.original.get("metadata") or {}
    for o in objects:
        m = o.get("metadata") or {}
        if o.get("kind") == c.inst.kind and m.get("name") == meta.get("name") and m.get("namespace") == meta.get(
                "namespace"):
            ref = claim_refs(o).get(c.ref)
            return ref[1] if ref is not None else None
    return None


def _existing(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _disk_objects(run: KustomizeFiles, path: Path) -> list[dict[str, Any]]:
    """The objects of a file the run did not translate, when they may reference claims (a file migrated before)."""
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    if b"resourceClaim" not in raw:
        return []
    out: list[dict[str, Any]] = []
    for d in run.docs(path) or []:
        if isinstance(d, dict) and isinstance(d.get("items"), list):
            out.extend(i for i in d["items"] if isinstance(i, dict))
        elif isinstance(d, dict):
            out.append(d)
    return out


def _new_file_sources(cfg: Any, result: Any) -> dict[Path, set[Path]]:
    """Each new claims file of the run, and the files whose objects went there."""
    out: dict[Path, set[Path]] = {}
    for fr in result.files:
        if fr.new_documents and fr.path != "<stdin>":
            out.setdefault(resolved(str(claims_target(cfg.claims_out, fr.path))), set()).add(resolved(fr.path))
    return out


def _dedup(additions: dict[str, list[Any]]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for key, entries in additions.items():
        for e in entries:
            if e not in out.setdefault(key, []):
                out[key].append(e)
    return out


def _emit(cfg: Any, result: Any, path: Path, display: str, old: bytes, new: bytes) -> None:
    if cfg.mode == "diff":
        result.diffs.append(unified_diff(display, old, new))
    elif cfg.mode == "write":
        _store(cfg, result, path, display, new)


def _store(cfg: Any, result: Any, path: Path, display: str, data: bytes) -> None:
    dest = path
    if cfg.output_dir is not None:
        inside = in_output_dir(cfg.paths, cfg.output_dir, path)
        if inside is None:
            result.diagnostics.append(make("DRA708", "not written to --output-dir: it is outside the paths given",
                                           Location(display)))
            return
        dest = inside
        dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_atomic(dest, data)
    except OSError as exc:
        result.diagnostics.append(write_problem(display, exc))
