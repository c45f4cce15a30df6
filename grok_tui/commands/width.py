"""Output that fits an 80-column terminal: long values cut with …, wide tables folded into blocks.

Every command's default output stays within COLUMNS characters per line, so it reads in an SSH window
or an 80×24 terminal; `--wide` (or `--json`, where a command has it) gives every value in full.
"""

from __future__ import annotations

import math

COLUMNS = 80
ELLIPSIS = "…"
BLANK = "–"  # a value that was not measured (a probe that did not run), in place of "nan"


def fit(line: str, width: int = COLUMNS) -> str:
    """The line, cut to `width` characters with … at the end when longer."""
    line = line.rstrip()
    return line if len(line) <= width else line[: width - 1].rstrip() + ELLIPSIS


def num(v: float, spec: str = ".4g") -> str:
    """A number as `format(v, spec)`, or BLANK where it is NaN or missing."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return BLANK
    return format(v, spec)


def fold(rows: list[list[str]], width: int = COLUMNS, keep: int = 1, gap: int = 2) -> str:
    """A table (header row first) laid out in blocks of columns that each fit `width`: every block repeats
    the first `keep` columns (the row's name), blocks are separated by a blank line. A single column wider
    than what is left is cut with …."""
    if not rows:
        return ""
    n = len(rows[0])
    widths = [max(len(r[i]) for r in rows) for i in range(n)]
    key_w = sum(widths[:keep]) + gap * keep
    blocks: list[list[int]] = []
    cur: list[int] = []
    used = key_w
    for i in range(keep, n):
        need = widths[i] + gap
        if cur and used + need > width + gap:
            blocks.append(cur)
            cur, used = [], key_w
        cur.append(i)
        used += need
    if cur or not blocks:
        blocks.append(cur)
    out = []
    for block in blocks:
        cols = list(range(keep)) + block
        lines = [(" " * gap).join(r[i].ljust(widths[i]) for i in cols) for r in rows]
        out.append("\n".join(fit(ln, width) for ln in lines))
    return "\n\n".join(out)


def wrap(text: str, width: int = COLUMNS, indent: int = 2) -> str:
    """Prose lines longer than `width` folded at spaces, the continuation lines indented by `indent`
    (a word longer than a line is cut with …)."""
    import textwrap

    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        lead = len(line) - len(line.lstrip(" "))
        parts = textwrap.wrap(
            line.strip(),
            width,
            initial_indent=" " * lead,
            subsequent_indent=" " * (lead + indent),
            break_long_words=False,
            break_on_hyphens=False,
        )
        out += [fit(p, width) for p in parts]
    return "\n".join(out)


def echo(text: str = "", wide: bool = False) -> None:
    """typer.echo of prose, wrapped to COLUMNS unless `wide`."""
    import typer

    typer.echo(text if wide else wrap(text))
