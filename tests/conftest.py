"""Shared fixtures: tiny configs that train in well under a second on the CPU."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import torch

from engine.config import RunConfig, apply_overrides

# Tests train tiny models on one thread (the OpenMP environment is set in tests/__init__.py).
torch.set_num_threads(1)

TINY = {
    "data.p": 11,
    "model.d_embed": 8,
    "train.batch_size": 16,
    "train.max_steps": 60,
    "train.eval_every": 20,
    "train.device": "cpu",
    "train.checkpoint_every": 20,
}


def tiny_config(**over: object) -> RunConfig:
    sets = dict(TINY)
    sets.update({k.replace("__", "."): v for k, v in over.items()})
    return apply_overrides(RunConfig(preset="tiny"), sets)


@pytest.fixture
def tiny() -> RunConfig:
    return tiny_config()


# --- a run directory's logs, as the determinism promises compare them -------------------------------


def logged_rows(d: Path) -> list[dict[str, str]]:
    """metrics.csv's rows as written, less wall_s: the one column a bit-for-bit rerun, resume or fork may change."""
    with open(d / "metrics.csv") as fh:
        return [{k: v for k, v in r.items() if k != "wall_s"} for r in csv.DictReader(fh)]


def logged_tokens(d: Path) -> list[list[str]]:
    """tokens.csv's lines as written."""
    with open(d / "tokens.csv") as fh:
        return list(csv.reader(fh))


# --- the `grok` command line -----------------------------------------------------------------------

CLI_ENV: dict[str, str | None] = {"COLUMNS": "200", "NO_COLOR": "1"}


def grok(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str | None] | None = None,
    timeout: float = 120,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`grok ARGS` with its exit code, stdout and stderr.

    In this process (typer's CliRunner: no interpreter start, no torch import per call) unless `process`:
    then in a subprocess as a user runs it, for what only a real process shows (signals, the console
    script, the interpreter's exit, a pipe's width). `env` adds to COLUMNS=200 and NO_COLOR=1; a None
    value unsets that variable. An exception that escapes the command is written to stderr with exit
    code 1, as the interpreter would, so `"Traceback" not in stderr` means the same both ways.
    """
    full_env: dict[str, str | None] = {**CLI_ENV, **(env or {})}
    if process:
        return subprocess.run(
            [sys.executable, "-m", "grok_tui", *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=timeout,
            env={k: v for k, v in {**os.environ, **full_env}.items() if v is not None},
        )
    from typer.testing import CliRunner

    from grok_tui.cli import app
    from grok_tui.errors import one_line_usage_errors

    threads = torch.get_num_threads()
    here = os.getcwd()
    code: int = 0
    error: BaseException | None = None
    try:
        if cwd is not None:
            os.chdir(cwd)
        with CliRunner().isolation(env=full_env) as streams:
            try:  # as main() runs it: click's usage errors become the one `error:` line
                one_line_usage_errors(lambda **kw: app(args=list(args), prog_name="grok", **kw))
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except Exception as e:  # noqa: BLE001 - the interpreter would print it and exit 1
                error, code = e, 1
            sys.stdout.flush()  # the isolation's text wrappers buffer what the command printed
            sys.stderr.flush()
            out, err = streams[0].getvalue().decode(), streams[1].getvalue().decode()
    finally:
        os.chdir(here)
        torch.set_num_threads(threads)  # a command's train.threads must not change later tests
    if error is not None:
        err += "".join(traceback.format_exception(error))
    return subprocess.CompletedProcess(["grok", *args], code, out, err)


# --- parallel workers (pytest-xdist, `make test`) -----------------------------------------------------

SHARED_SCOPES = ("class", "module", "package")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that share a fixture wider than one test (a module's trained run or sweep) go to one xdist
    worker together (`--dist loadgroup`), so that fixture is built once rather than once per worker."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if any(d.scope in SHARED_SCOPES for chain in defs for d in chain):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


# --- nothing outlives its test --------------------------------------------------------------------
# A thread or a child process left running by a test can hang the whole run at exit (asyncio.run and
# the interpreter both wait on non-daemon threads) or burn a core under every later test. Each test
# gets OUTLIVE_S to let what it started end; whatever is still alive then fails that test by name,
# and children are killed so that they cannot hang or slow the rest of the run.

OUTLIVE_S = 10.0
# Linux lists each thread's children there (CONFIG_PROC_CHILDREN); without it every pid is checked.
_HAS_CHILDREN_FILE = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _child_pids() -> list[int]:
    """Candidate child pids of this process: what its threads list in /proc/self/task/*/children (a few
    small reads per test), or, where the kernel has no such file, every pid in /proc (a scan of them all)."""
    if not _HAS_CHILDREN_FILE:
        return [int(e.name) for e in os.scandir("/proc") if e.name.isdigit()]
    pids: list[int] = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as fh:
                pids += [int(p) for p in fh.read().split()]
        except OSError:  # the thread ended since the listing
            continue
    return pids


def _children() -> dict[int, str]:
    """Live (not zombie) child processes of this process: pid -> command name, from /proc."""
    out: dict[int, str] = {}
    me = os.getpid()
    for pid in _child_pids():
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        name, _, rest = stat.rpartition(")")
        fields = rest.split()
        if len(fields) > 1 and int(fields[1]) == me and fields[0] != "Z" and not _shared_helper(str(pid)):
            out[pid] = name.partition("(")[2]
    return out


def _shared_helper(pid: str) -> bool:
    """multiprocessing's resource tracker and forkserver serve the whole session by design."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read()
    except OSError:
        return False
    return b"resource_tracker" in cmd or b"forkserver" in cmd


def _stray_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon]


@pytest.fixture(autouse=True)
def _nothing_outlives_its_test() -> Iterator[None]:
    threads = set(threading.enumerate())
    children = set(_children()) if os.path.isdir("/proc") else set()
    yield
    deadline = time.monotonic() + OUTLIVE_S
    for t in _stray_threads(threads):
        t.join(timeout=max(deadline - time.monotonic(), 0.0))
    stray = _stray_threads(threads)
    left: dict[int, str] = {}
    if os.path.isdir("/proc"):
        while (left := {p: n for p, n in _children().items() if p not in children}) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ChildProcessError, ProcessLookupError):
                pass
    problems = [f"thread {t.name!r} ({t.__class__.__name__})" for t in stray]
    problems += [f"child process {pid} ({name}), killed" for pid, name in left.items()]
    if problems:
        pytest.fail(f"outlived the test by {OUTLIVE_S:.0f} s: {'; '.join(problems)}", pytrace=False)


def pytest_unconfigure(config: pytest.Config) -> None:
    """A non-daemon thread still running at the very end would hang the interpreter's exit: say which, and leave."""
    stray = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if stray:
        names = ", ".join(repr(t.name) for t in stray)
        sys.stderr.write(f"\nerror: non-daemon thread(s) still running after the session: {names}; exiting\n")
        sys.stderr.flush()
        os._exit(1)
