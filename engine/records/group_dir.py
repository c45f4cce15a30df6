"""A sweep's group directory: its [sweep] table (`SweepSpec`), its members, group.json and results.csv, and the
members' run directories (`Group`). The sweep writes it (engine/sweep/), the group records read it
(engine/records/group.py); engine/sweep/spec.py parses and expands the table. Torch-free.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.config import ConfigError, RunConfig, apply_overrides, from_dict
from engine.records.paper import source_commit
from engine.records.results import ENDED, RESULTS_FIELDS, ResultsRow
from engine.rundir import (
    GROUP_FILE,
    read_group_doc,
    read_results,
    unique_dir,
    write_json_atomic,
    write_results,
)
from engine.rundir.destination import GROUP, check_root
from engine.rundir.files import RESULTS
from engine.rundir.pack import PACK, unpacked

MAX_DIR_NAME = 120  # characters of a member directory's name; the id prefix keeps a cut name unique


@dataclass(frozen=True)
class SweepSpec:
    """The [sweep] table, checked: seeds, the baseline arm, keys to tune, the grid and the arms."""

    seeds: tuple[int, ...] = (0,)
    compare: str = ""
    tune: tuple[str, ...] = ()
    grid: dict[str, list[Any]] = field(default_factory=dict)
    arms: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Sweeps of forks (docs/FORK.md): each fork arm forks every member of its `from` arm (every member
    # when `from` is "") at fork_at, with its settings and `intervene` list, once that member has ended.
    # `from = "*"` forks every arm's members as an arm of its own per parent arm: PARENT_NAME.
    fork_at: str = ""  # memorized | generalized | a step
    forks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The table as group.json stores it."""
        out = {
            "seeds": list(self.seeds),
            "compare": self.compare,
            "tune": list(self.tune),
            "grid": self.grid,
            "arms": self.arms,
        }
        return {**out, "fork_at": self.fork_at, "forks": self.forks} if self.forks else out

    def fork_arms(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(arm, from arm, fork table) of every fork arm, `from = "*"` expanded to one arm per parent arm."""
        out: list[tuple[str, str, dict[str, Any]]] = []
        for name, f in self.forks.items():
            if f.get("from") == "*":
                out += [(f"{a}_{name}", a, f) for a in self.arms]
            else:
                out.append((name, str(f.get("from", "")), f))
        return out

    def fork_table(self, arm: str) -> dict[str, Any]:
        """The [sweep.forks.NAME] table behind fork arm `arm` (KeyError for an arm that is not a fork's)."""
        return {name: f for name, _, f in self.fork_arms()}[arm]

    @property
    def swept(self) -> list[str]:
        """Every key that varies between members (arm keys first, then grid keys), seed aside."""
        keys: list[str] = []
        for over in [*self.arms.values(), *(fork_settings(f) for f in self.forks.values())]:
            keys += [k for k in over if k not in keys]
        return keys + [k for k in self.grid if k not in keys]


FORK_KEYS = ("from", "intervene", "window")  # a [sweep.forks.NAME] table's keys that are not config keys


def fork_settings(fork: dict[str, Any]) -> dict[str, Any]:
    """A fork arm's config keys (its `from`, `intervene` and `window` aside)."""
    return {k: v for k, v in fork.items() if k not in FORK_KEYS}


def fork_window(fork: dict[str, Any]) -> int:
    """A fork arm's `window`: the steps it trains after its fork step, wherever that falls (a phase differs by
    seed); 0 where the arm sets train.max_steps instead."""
    return int(fork.get("window", 0))


@dataclass(frozen=True)
class Member:
    """One run of the sweep: an arm, one grid point and a seed."""

    id: str
    arm: str
    values: dict[str, Any]  # grid key -> value
    seed: int
    overrides: dict[str, Any]  # everything applied to the base config (arm, grid, train.seed)
    fork_of: str = ""  # a fork member: the id of the member it forks (docs/FORK.md)
    intervene: tuple[str, ...] = ()  # and its interventions at the fork

    def label(self) -> str:
        """`adamlr op=mul s0`: the arm, the grid cell and the seed, for progress lines."""
        parts = [self.arm] if self.arm else []
        parts += [f"{k.split('.')[-1]}={v}" for k, v in self.values.items()]
        return " ".join([*parts, f"s{self.seed}"])

    def dir_name(self) -> str:
        """`m003-adamlr-op=mul-s0`: the member's run directory inside its group.

        The id makes it unique and sorts members in order; the arm, grid cell and seed make it
        readable. Characters a file system or a shell could trip on become `_`. Group.create
        stores the name in group.json, so it stays the same for the group's whole life.
        """
        parts = [self.id] + ([_safe(self.arm)] if self.arm else [])
        parts += [f"{_safe(k.split('.')[-1])}={_safe(_text(v))}" for k, v in self.values.items()]
        name = "-".join([*parts, f"s{self.seed}"])
        return name if len(name) <= MAX_DIR_NAME else name[:MAX_DIR_NAME]


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"  # as TOML writes it
    return repr(v) if isinstance(v, float) else str(v)


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]", "_", s) or "_"


def new_group_dir(root: Path, preset: str) -> Path:
    """<out>/<YYYYmmdd-HHMMSS>-<preset>-sweep/, with a -N suffix if taken; never inside a run or a group
    (engine/rundir/destination.py; a paper directory holds its groups)."""
    check_root(root, GROUP)
    try:
        return unique_dir(root, f"{time.strftime('%Y%m%d-%H%M%S')}-{preset or 'custom'}-sweep")
    except OSError as e:
        raise ConfigError(f"cannot create sweep directory under {root}: {e.strerror or e}") from None


class Group:
    """A sweep's group directory: group.json, results.csv and the members' run directories."""

    def __init__(self, path: Path, doc: dict[str, Any]) -> None:
        self.dir = path
        self.doc = doc
        self.base = from_dict(doc["base"], str(path / GROUP_FILE))
        self.spec = SweepSpec(**{**doc["sweep"], "seeds": tuple(doc["sweep"]["seeds"])})
        fields = ("id", "arm", "values", "seed", "overrides")
        self.members = [
            Member(
                **{k: m[k] for k in fields}, fork_of=str(m.get("fork_of", "")), intervene=tuple(m.get("intervene", ()))
            )
            for m in doc["members"]
        ]
        # A group made before member directories had planned names gets them now.
        self._dirs = {
            m.id: str(d.get("dir") or m.dir_name()) for m, d in zip(self.members, doc["members"], strict=True)
        }
        # a kept group's members are packed (engine/rundir/pack.py): read from where they are unpacked
        self._members_root = unpacked(path) if (path / PACK).is_file() else path
        self._cells: dict[str, dict[str, Any]] | None = None  # results.csv's rows as written (text)
        self._results: dict[str, ResultsRow] | None = None

    @classmethod
    def create(cls, out: str | Path, preset: str, base: RunConfig, spec: SweepSpec, members: list[Member]) -> Group:
        """Make the group directory and write group.json; no member has run yet."""
        path = new_group_dir(Path(out), preset)
        doc = {
            "preset": preset,
            "description": base.description,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "commit": source_commit(),  # the code the sweep runs (a resume from another checkout is not recorded)
            "argv": sys.argv,
            "base": base.to_dict(),
            "sweep": spec.to_dict(),
            "swept": spec.swept,
            # `dir`: the run directory the member trains in; `run_dir`: set once its row is recorded
            "members": [{**dataclasses.asdict(m), "dir": m.dir_name(), "run_dir": ""} for m in members],
        }
        write_json_atomic(path / GROUP_FILE, doc)
        return cls(path, doc)

    @classmethod
    def open(cls, path: str | Path) -> Group:
        """Read a group directory back; ConfigError naming the file if it is not one."""
        p = Path(path)
        doc = read_group_doc(p)  # every field a reader uses checked, named with the file
        try:
            return cls(p, doc)
        except ConfigError:  # a kept group's members that do not unpack: named by engine/rundir/pack.py
            raise
        except (ValueError, KeyError, TypeError) as e:
            raise ConfigError(f"{p / GROUP_FILE}: unreadable group file: {e}") from None

    @property
    def preset(self) -> str:
        """The preset the group was made from ('' for a --config file without one)."""
        return str(self.doc.get("preset", ""))

    @property
    def columns(self) -> list[str]:
        """results.csv's fixed columns; probe columns (first_<col>, final_<col>) follow them."""
        return ["member", "arm", *self.spec.swept, "seed", *RESULTS_FIELDS, "error", "run_dir"]

    def config(self, m: Member) -> RunConfig:
        """The member's config: the group's base with the member's overrides, checked again."""
        return apply_overrides(self.base, m.overrides, f"{self.dir / GROUP_FILE} ({m.id})")

    def member_dir(self, m: Member) -> Path:
        """The member's run directory: the one its recorded row names, else its planned one."""
        recorded = self._rows().get(m.id, {}).get("run_dir")
        return self._members_root / (recorded or self._dirs[m.id])

    def _rows(self) -> dict[str, dict[str, Any]]:
        """results.csv's rows as written: {member id: {column: text}} ('' = none)."""
        if self._cells is None:
            ids = {m.id for m in self.members}  # a view on some seeds (`with_seeds`) reads only their rows
            self._cells = {r["member"]: r for r in read_results(self.dir) if r.get("member") in ids}
        return self._cells

    def results(self) -> dict[str, ResultsRow]:
        """results.csv as {member id: its typed row} (engine/records/results.py ResultsRow, None for an empty cell);
        ConfigError naming the file for a cell the sweep does not write."""
        if self._results is None:
            where = str(self.dir / RESULTS)
            self._results = {k: ResultsRow.of(r, self.spec.swept, where) for k, r in self._rows().items()}
        return self._results

    def with_seeds(self, seeds: set[int]) -> Group:
        """A read-only view of the group on these seeds: their members and results rows only (`grok report
        --seeds`: the seeds a sweep still running has finished, each a paired comparison of every cell)."""
        view = copy.copy(self)
        view.members = [m for m in self.members if m.seed in seeds]
        view._cells = view._results = None
        return view

    def pending(self) -> list[Member]:
        """Members missing from results.csv or whose status is not final (interrupted, failed), seed by seed:
        every cell's first seed before any cell's second, so a sweep stopped early leaves whole seeds, each
        a paired comparison of every cell, rather than whole arms."""
        res = self._rows()
        rank = {s: i for i, s in enumerate(self.spec.seeds)}
        todo = [m for m in self.members if res.get(m.id, {}).get("status") not in ENDED]
        return sorted(todo, key=lambda m: rank.get(m.seed, len(rank)))

    def ready(self, m: Member) -> bool:
        """Whether a member can start: any member but a fork, and a fork once the member it forks has ended."""
        return not m.fork_of or self._rows().get(m.fork_of, {}).get("status") in ENDED

    def member(self, member_id: str) -> Member:
        return next(m for m in self.members if m.id == member_id)

    def swept_values(self, m: Member) -> dict[str, Any]:
        """The member's value of every swept key (its override, else the base config's)."""
        return {k: m.overrides.get(k, _base_value(self.base, k)) for k in self.spec.swept}

    def record(self, row: dict[str, Any]) -> None:
        """Add or replace one member's row; results.csv is rewritten atomically, in member order."""
        m = self.member(row["member"])
        full = {"member": m.id, "arm": m.arm, "seed": m.seed, **self.swept_values(m)}
        full.update({k: _cell(v) for k, v in row.items() if k != "member"})
        res = self._rows()
        res[m.id] = {k: _cell(v) for k, v in full.items()}
        self._results = None  # read again from the rows as written
        extra = sorted({k for r in res.values() for k in r} - set(self.columns))  # probe columns
        cols = self.columns + extra
        write_results(self.dir, cols, [{c: res[mm.id].get(c, "") for c in cols} for mm in self.members if mm.id in res])
        for d in self.doc["members"]:
            if d["id"] == m.id and row.get("run_dir"):
                d["run_dir"] = Path(str(row["run_dir"])).name
                write_json_atomic(self.dir / GROUP_FILE, self.doc)


def member_fields(group_dir: str | Path) -> dict[Path, dict[str, Any]]:
    """Each member's run directory -> `group`, `arm`, `member` and its value of every swept key.

    The swept keys are the grid's and the arms' (`Group.columns` order, as in results.csv), so
    arms and grid cells can be told apart without joining results.csv by hand. Members whose
    directory does not exist yet are left out.
    """
    g = Group.open(group_dir)
    out: dict[Path, dict[str, Any]] = {}
    for m in g.members:
        d = g.member_dir(m)
        if d.is_dir():
            out[d] = {"group": g.dir.name, "arm": m.arm, "member": m.id, **g.swept_values(m)}
    return out


def _base_value(cfg: RunConfig, key: str) -> Any:
    group, _, name = key.partition(".")
    return getattr(getattr(cfg, group), name)


def _cell(v: Any) -> Any:
    return "" if v is None or (isinstance(v, float) and v != v) else v
