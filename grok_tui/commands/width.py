"""Output that fits the terminal: long values cut with …, prose folded at spaces, wide tables in blocks.

Every command's default output stays within the terminal's width (COLUMNS, or the tty's size), and
within 80 columns where neither says (a pipe, a file): it reads in an SSH window or an 80×24 terminal.
`--wide` (or `--json`, where a command has it) gives every value in full.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import sys

COLUMNS = 80  # the width where nothing says otherwise


def columns() -> int:
    """The width to fit: $COLUMNS when set, else the terminal's, else COLUMNS; never below 40."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return max(int(env), 40)
    if sys.stdout.isatty():
        return max(shutil.get_terminal_size((COLUMNS, 24)).columns, 40)
    return COLUMNS


ELLIPSIS = "…"
BLANK = "–"  # a value that was not measured (a probe that did not run), in place of "nan"


def fit(line: str, width: int | None = None) -> str:
    """The line, cut to `width` characters with … at the end when longer."""
    width = width or columns()
    line = line.rstrip()
    return line if len(line) <= width else line[: width - 1].rstrip() + ELLIPSIS


def path_line(label: str, path: object, width: int | None = None) -> str:
    """`label: PATH` on one line where it fits, else the path alone on the next line, indented: a path is
    copied, so it is moved, never cut or broken."""
    width = width or columns()
    line = f"{label}: {path}"
    return line if len(line) <= width else f"{label}:\n  {path}"


def num(v: float, spec: str = ".4g") -> str:
    """A number as `format(v, spec)`, or BLANK where it is NaN or missing."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return BLANK
    return format(v, spec)


def fold(rows: list[list[str]], width: int | None = None, keep: int = 1, gap: int = 2, rule: bool = False) -> str:
    """A table (header row first) laid out in blocks of columns that each fit `width`: every block repeats
    the first `keep` columns (the row's name), blocks are separated by a blank line; with `rule`, a row of
    dashes under each block's header. A single column wider than what is left is cut with …."""
    if not rows:
        return ""
    width = width or columns()
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
        if rule:
            lines.insert(1, (" " * gap).join("-" * widths[i] for i in cols))
        out.append("\n".join(fit(ln, width) for ln in lines))
    return "\n\n".join(out)


def table(rows: list[list[str]]) -> str:
    """Rows of cells (header first) in left-aligned columns two spaces apart, as `grok ls` and `grok circuit`
    print them unfolded."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def wrap(text: str, width: int | None = None, indent: int = 2) -> str:
    """Prose lines longer than `width` folded at spaces, the continuation lines indented by `indent`; a word
    longer than a line (a path a user copies into the next command) goes on a line of its own, whole: cut
    with …, it would name no file."""
    import textwrap

    width = width or columns()
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
        out += parts  # textwrap keeps every line within `width` but the one of a word that is longer
    return "\n".join(out)


def echo(text: str = "", wide: bool = False) -> None:
    """typer.echo of prose, wrapped to COLUMNS unless `wide`."""
    import typer

    typer.echo(text if wide else wrap(text))


_RULE = re.compile(r"-+(?:  +-+)*")


def fold_text(text: str, width: int | None = None) -> str:
    """A rendered report fitted to `width`: each text table (a header, a rule of dashes under every column,
    rows until a blank line) is folded into blocks of columns, the rule giving each column's span; every
    other line is prose, folded at spaces."""
    width = width or columns()
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i].strip() and _RULE.fullmatch(lines[i + 1]):
            end = i + 2
            while end < len(lines) and lines[end].strip():
                end += 1
            block = [lines[i], *lines[i + 2 : end]]
            if max(len(ln) for ln in block) <= width:
                out += lines[i:end]
            else:
                starts = [m.start() for m in re.finditer(r"-+", lines[i + 1])]
                cuts = list(zip(starts, [*starts[1:], None], strict=True))
                rows = [[ln[a:b].strip() for a, b in cuts] for ln in block]
                out.append(fold(rows, width, keep=_labels(rows), rule=True))
            i = end
        else:
            out.append(wrap(lines[i], width))
            i += 1
    return "\n".join(out)


def _labels(rows: list[list[str]]) -> int:
    """How many leading columns name a row (an arm, a swept config key such as `data.op`, or words with
    no number in them): each folded block repeats them."""
    k = 0
    for i, head in enumerate(rows[0][:-1]):
        named = head == "arm" or "." in head or not any(ch.isdigit() for r in rows[1:] for ch in r[i])
        if not named:
            break
        k += 1
    return max(k, 1)
