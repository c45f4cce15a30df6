"""The run-directory modules are the only code that reads or writes the files of a run directory or a group.

The rule, checked on the source (ast) of every module of engine/ and grok_tui/ but the run directory's own
(the package engine/rundir/, OWNER): no call that opens, loads, saves,
writes, renames or deletes a file.
That is the builtin `open`, `os.open`/`io.open`, `torch.save`/`torch.load`, `json.dump`/`json.load`
(the string forms `dumps`/`loads` are fine), `csv.reader`/`csv.writer`/`csv.DictReader`/`csv.DictWriter`,
`os.replace`/`os.rename`/`os.remove`/`os.unlink`/`os.makedirs`/`os.fsync`, shutil's copies, moves and
`rmtree`, and the
pathlib methods `open`, `read_text`, `write_text`, `read_bytes`, `write_bytes`, `unlink`, `mkdir`, `rmdir`,
`touch`, `rename` and `replace` on a path (`str.replace(old, new)` and `dataclasses.replace` are not).
Listing a directory (`iterdir`, `glob`, `is_dir`) reads no file and is allowed.

The few modules that do file I/O outside run directories are allowed by name below, each with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OWNER = "engine/rundir/"  # the run directory package: the only code that touches run and group files

# (module, call) -> why that module may do this file I/O: none of it touches a run directory.
ALLOWED = {
    ("engine/config/presets.py", "open"): "reads a preset's TOML file (presets/, or a --config file the user names)",
    ("engine/config/doc.py", "read_text"): "reads engine/config/fields.py's own source to document the fields",
    ("engine/records/export.py", "open"): "writes the export file the user names (grok export -o FILE)",
    ("engine/records/export.py", "mkdir"): "makes the parent directory of the export file the user names",
    ("engine/records/export.py", "unlink"): "removes a half-written export file the user named after a failure",
    ("engine/sweep/report/tables.py", "open"): "writes the report CSV the user names (grok report --csv FILE)",
    ("engine/sweep/report/tables.py", "csv.DictWriter"): "the report CSV the user names, into that open file",
    ("engine/records/export.py", "csv.writer"): "the export file the user names, into that open file",
    ("engine/records/export.py", "csv.DictWriter"): "the export file the user names, into that open file",
    ("grok_tui/commands/figure.py", "mkdir"): "makes the output directory the user names (grok figure --paper -o DIR)",
    (
        "grok_tui/figures/view.py",
        "mkdir",
    ): "makes the runs folder the compare view reads (the `e` key writes its figure there, beside the runs)",
    ("engine/claims/docs.py", "read_text"): "reads the Markdown pages whose generated regions it checks",
    ("engine/claims/docs.py", "write_text"): "rewrites the generated regions of the Markdown pages",
    ("grok_tui/cli.py", "open"): "opens /dev/null to silence stdout once its reader closed the pipe",
    ("grok_tui/figures/draw.py", "write_bytes"): "writes the figure file the user names (grok figure -o FILE)",
}

MODULE_CALLS = {
    "os": {"open", "replace", "rename", "remove", "unlink", "makedirs", "fsync"},
    "io": {"open"},
    "torch": {"save", "load"},
    "json": {"dump", "load"},
    "csv": {"reader", "writer", "DictReader", "DictWriter"},
}
SHUTIL = {"copy", "copy2", "copyfile", "copytree", "move", "rmtree"}
PATH_METHODS = {
    "open",
    "read_text",
    "write_text",
    "read_bytes",
    "write_bytes",
    "unlink",
    "mkdir",
    "rmdir",
    "touch",
    "rename",
    "replace",
}


def _file_io(call: ast.Call) -> str | None:
    """The name of the file operation this call is, or None."""
    f = call.func
    if isinstance(f, ast.Name) and f.id == "open":
        return "open"
    if not isinstance(f, ast.Attribute):
        return None
    if isinstance(f.value, ast.Name):
        mod = f.value.id
        if mod == "shutil" and f.attr in SHUTIL:
            return f"shutil.{f.attr}"
        if mod == "dataclasses":  # dataclasses.replace builds a new object
            return None
        if f.attr in MODULE_CALLS.get(mod, set()):
            return f"{mod}.{f.attr}" if mod in ("csv", "torch", "json") else f.attr
        if mod[:1].isupper():  # a class's own method (Group.open), not a path's
            return None
    if f.attr in PATH_METHODS:
        if f.attr == "replace" and call.args and all(isinstance(a, ast.Constant) for a in call.args):
            return None  # str.replace("a", "b")
        if f.attr == "replace" and len(call.args) == 2:
            return None  # str.replace(old, new); a path's replace takes one target
        return f.attr
    return None


def _violations() -> list[str]:
    out = []
    for pkg in ("engine", "grok_tui"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(OWNER):
                continue
            tree = ast.parse(path.read_text(), rel)
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    op = _file_io(node)
                    if op is not None and (rel, op) not in ALLOWED:
                        out.append(f"{rel}:{node.lineno}: {op}(...)")
    return out


def test_only_rundir_does_file_io() -> None:
    found = _violations()
    why = "file I/O outside the run-directory modules (move it there, or allow it with a reason):\n"
    assert not found, why + "\n".join(found)


def test_every_allowance_is_still_needed() -> None:
    """An allowance whose call is gone must go too, or it would let a new one in unseen."""
    used = set()
    for rel, op in ALLOWED:
        tree = ast.parse((ROOT / rel).read_text(), rel)
        if any(isinstance(n, ast.Call) and _file_io(n) == op for n in ast.walk(tree)):
            used.add((rel, op))
    assert used == set(ALLOWED), sorted(set(ALLOWED) - used)


def test_the_rule_sees_each_kind_of_file_io() -> None:
    src = """
open(p)
torch.save(x, p)
torch.load(p)
json.dump(x, fh)
csv.DictReader(fh)
os.replace(a, b)
(d / "x").write_text("s")
p.read_bytes()
f.unlink()
shutil.rmtree(d)
Group.open(d)
dataclasses.replace(cfg, seed=1)
shutil.which("git")
"a".replace("a", "b")
json.dumps(x)
"""
    ops = [_file_io(n) for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call)]
    found = [o for o in ops if o is not None]
    assert found == [
        "open",
        "torch.save",
        "torch.load",
        "json.dump",
        "csv.DictReader",
        "replace",
        "write_text",
        "read_bytes",
        "unlink",
        "shutil.rmtree",
    ]


# --- the faces read a run or a group through the records only ----------------------------------------
# The run-directory modules, and the few names the faces (grok_tui/) may take from them: the predicates,
# the text cleaner, the lock (for a writer, and as a liveness probe) and the ended statuses. Everything a
# face reads of a run or a group comes from engine/records/run.py's RunRecord and engine/records/group.py's
# GroupRecord, so no face knows a file's name or layout.
RUN_DIR_MODULES = {
    "engine.rundir.dirs",
    "engine.rundir.files",
    "engine.rundir.atomic",
    "engine.rundir.csvlog",
    "engine.rundir.writer",
    "engine.rundir.summary",
    "engine.rundir.probe_logs",
    "engine.rundir.lock",
    "engine.rundir.safetext",
    "engine.rundir.schema",
    "engine.rundir.checkpoints",
    "engine.rundir.lineage",
}
FACE_API = {
    "is_run_dir",
    "is_group",
    "is_paper_dir",
    "short_name",
    "clean_text",
    "clean_block",
    "lock_holder",
    "RunLock",
}
FACE_API |= {"ENDED"}


def _reader_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each import of a run-directory module's name outside FACE_API."""
    from engine.rundir import _HOME  # the facade's names and the module of each

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "engine.rundir":  # the facade: each name's module
            homes = [(a.name, f"engine.rundir.{_HOME.get(a.name, a.name)}") for a in node.names]
            out += [(node.lineno, f"engine.rundir.{n}") for n, m in homes if m in RUN_DIR_MODULES and n not in FACE_API]
        elif isinstance(node, ast.ImportFrom) and node.module in RUN_DIR_MODULES:
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names if a.name not in FACE_API]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name in RUN_DIR_MODULES]
    return out


def test_the_faces_read_runs_and_groups_only_through_the_records() -> None:
    found = []
    for path in sorted((ROOT / "grok_tui").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        found += [f"{rel}:{line}: {what}" for line, what in _reader_imports(ast.parse(path.read_text(), rel))]
    assert not found, (
        "read it through RunRecord or GroupRecord (engine/records/run.py, group_record.py):\n" + "\n".join(found)
    )


def test_the_boundary_sees_a_reader_import() -> None:
    src = """
from engine.rundir.dirs import short_name, read_results
from engine.rundir.csvlog import read_csv
import engine.rundir.summary
from engine.records.run import read_run
from engine.rundir.safetext import clean_text
from engine.rundir import lock_holder, read_config, check_file
"""
    assert [w for _, w in _reader_imports(ast.parse(src))] == [
        "engine.rundir.dirs.read_results",
        "engine.rundir.csvlog.read_csv",
        "engine.rundir.summary",
        "engine.rundir.read_config",
    ]
