"""Panels of curves drawn into a matplotlib Figure (Agg, no pyplot state) and saved as PNG, SVG or PDF."""

from __future__ import annotations

import dataclasses
import math
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.config import ConfigError
from grok_tui.axis import smooth
from grok_tui.figures import style
from grok_tui.figures.cells import Heat
from grok_tui.figures.data import Curve

FORMATS = ("png", "svg", "pdf")
INSTALL = "pip install 'grok-tui[figures]'"


def require() -> Any:
    """matplotlib on its Agg backend; a ConfigError saying how to install the extra when it is missing."""
    try:
        import matplotlib
    except ImportError:
        raise ConfigError(f"figures need matplotlib: {INSTALL}") from None
    matplotlib.use("Agg")  # files only, never a window, and safe off the main thread
    return matplotlib


@dataclass
class Panel:
    """One axes: its curves (a group cell's with a band), phase markers, and axis text."""

    title: str
    metrics: list[str]  # what the y axis holds: sets its label and scale
    curves: list[Curve] = field(default_factory=list)
    markers: list[tuple[float, str]] = field(default_factory=list)  # (x, "M" | "C" | "U" | "G")
    xlabel: str = "step"
    kind: str = "line"  # "line", "bar" (a spectrum), "scatter" or "dots" (one value per category, its range)
    log_x: bool | None = None  # None: the figure's setting
    ylabel: str = ""
    log_y: bool | None = None  # None: from the metrics (losses, curvatures, ratios)
    ylim: tuple[float, float] | None = None  # fixed y range (panels compared by height)
    xlim: tuple[float, float] | None = None  # fixed x range (panels compared along the same steps)
    xticks: list[tuple[float, str]] | None = None  # categorical x: (position, label) each
    hline: tuple[float, str] | None = None  # a level marked across the panel, named in the legend (the last step)
    share_x: bool = False  # one x range with the figure's other share_x panels (a claim's grid: equal steps)
    points: bool = False  # mark each point (a few swept values, not an evaluation every N steps)
    ticks_at_points: bool = True  # with points on a log axis: tick each point (False: decades and halves)
    heat: Heat | None = None  # kind "heat": steps to generalize per grid cell


def share_axes(panels: list[Panel], log_x: bool = True) -> None:
    """One x range and one y range for all `panels` (the data's, with a margin), so they compare by eye."""
    shown = [
        ys
        for p in panels
        for c in p.curves
        for x, ys in zip(c.x, zip(c.y, c.lo or c.y, c.hi or c.y, strict=True), strict=True)
        if math.isfinite(x) and (x > 0 or not log_x)  # step 0 is not on a log axis: nor its values
    ]
    ys = [y for t in shown for y in t if math.isfinite(y)]
    xlim = _x_range(panels, log_x)
    if xlim is None or not ys:
        return
    lo, hi = min(ys), max(ys)
    if lo > 0 and all(style.log_y(p.metrics) for p in panels):
        ylim = (lo / 1.3, hi * 1.3)  # log y: a margin by ratio
    else:
        ylim = (lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
    for p in panels:
        p.xlim, p.ylim = xlim, ylim


def _x_range(panels: list[Panel], log_x: bool) -> tuple[float, float] | None:
    """One x range for `panels`, the data's with a margin on a log axis; None when they have no point on it."""
    xs = [x for p in panels for c in p.curves for x in c.x if math.isfinite(x) and (x > 0 or not log_x)]
    if not xs:
        return None
    lo, hi = min(xs), max(xs)
    return (lo / 1.1, hi * 1.1) if log_x else (lo, hi)


def legend_label(c: Curve) -> str:
    return c.label + (f" (n={c.n})" if c.lo is not None else "")


def _draw_line_panel(ax: Any, p: Panel, log_x: bool, k: int, order: dict[str, int]) -> None:
    log_x = log_x and p.xticks is None
    if not p.curves:  # a cell of a claim's grid whose members have not run yet
        ax.text(0.5, 0.5, "not run yet", transform=ax.transAxes, ha="center", va="center", color="0.45")
        ax.set_xticks([])
        ax.set_yticks([])
        return
    for c in p.curves:
        keep = [j for j, x in enumerate(c.x) if (x > 0 or not log_x) and math.isfinite(x)]
        xs = [c.x[j] for j in keep]
        if not xs:
            continue
        label = legend_label(c)
        st = style.style(order[c.label])  # a series keeps its colour and dash in every panel
        if p.points or len(xs) == 1:  # a single evaluation is a point, not a line of no length
            st |= {"marker": style.MARKERS[order[c.label] % len(style.MARKERS)], "markersize": 3}
        ax.plot(xs, smooth([c.y[j] for j in keep], k), label=label, **st)
        if c.lo is not None and c.hi is not None and c.n > 1:
            lo, hi = smooth([c.lo[j] for j in keep], k), smooth([c.hi[j] for j in keep], k)
            band = ax.fill_between(xs, lo, hi, color=st["color"], alpha=style.BAND_ALPHA, linewidth=0)
            band.set_gid(f"band:{label}")
    if p.xticks is not None:
        ax.set_xticks([x for x, _ in p.xticks], [t for _, t in p.xticks])
        ax.set_xlim(p.xticks[0][0] - 0.3, p.xticks[-1][0] + 0.3)
    elif log_x:
        _log_axis(
            ax, list(p.xlim) if p.xlim else [x for c in p.curves for x in c.x if x > 0], p.points and p.ticks_at_points
        )
    if style.is_acc(p.metrics):
        ax.set_ylim(-0.02, 1.02)
    elif style.log_y(p.metrics) and all(v > 0 for c in p.curves for v in c.y if math.isfinite(v)):
        ax.set_yscale("log")
    for x, mark in p.markers:
        if log_x and x <= 0:
            continue
        color = style.MARKER_COLORS.get(mark, "0.3")
        ax.axvline(x, color=color, linewidth=0.7, linestyle=(0, (2, 2)), zorder=0)
        ax.text(x, 1.0, mark, transform=ax.get_xaxis_transform(), color=color, ha="center", va="bottom", fontsize=6)


def plain_log_labels(axis: Any, lo: float, hi: float) -> None:
    """A log axis labelled 0.1, 1, 10, 2k (as `grok plot` writes steps), not 10^k: at decades, or at
    1, 2, 5 per decade when the axis spans under two (a decade alone may hold one label or none)."""
    from matplotlib.ticker import LogLocator, NullFormatter

    if 0 < lo < hi and hi / lo < 100:
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(_plain())
    axis.set_minor_formatter(NullFormatter())


def _plain() -> Any:
    from matplotlib.ticker import FuncFormatter

    from grok_tui.axis import tick_label

    return FuncFormatter(lambda v, _: tick_label(v))


def _log_axis(ax: Any, xs: list[float], at_points: bool = False) -> None:
    """A log x axis with `grok plot`'s ticks: 1·10^k, or 1, 2, 5·10^k over a short range, as 200, 5k, 1M.

    `at_points`: a few swept values (c in Fig. 5) are ticked where they are.
    """
    from matplotlib.ticker import NullFormatter

    from grok_tui.axis import log_ticks, tick_label

    ax.set_xscale("log")
    if xs:
        ticks = sorted(set(xs)) if at_points else log_ticks(min(xs), max(xs))
        ax.set_xticks(ticks, [tick_label(t) for t in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())


def _draw_heat_panel(ax: Any, fig: Any, h: Heat) -> None:
    """Steps to generalize per cell in log colour (style.heat_cmap), the median and k/n written in."""
    import numpy as np
    from matplotlib.colors import LogNorm

    a = np.array(h.median, dtype=float)
    shown = np.ma.masked_invalid(np.where(np.isinf(a), np.nan, a))  # never generalized: no colour, its text says so
    finite = a[np.isfinite(a)]
    norm = LogNorm(finite.min(), max(finite.max(), finite.min() * 1.01)) if finite.size else None
    cmap = style.heat_cmap().with_extremes(bad=style.NO_VALUE)  # a cell with no median (>budget, or none ended)
    # quads, not an image: the cells stay vector in SVG and PDF; row 0 at the bottom, as on a plot
    rows, cols = np.arange(len(h.rows) + 1) - 0.5, np.arange(len(h.cols) + 1) - 0.5
    im = ax.pcolormesh(cols, rows, shown, cmap=cmap, norm=norm, edgecolors="white", linewidth=0.5)
    ax.set_facecolor(style.NO_VALUE)  # a masked cell draws nothing: this shows through
    from matplotlib.patches import Rectangle

    for i in range(len(h.rows)):
        for j in range(len(h.cols)):
            v = a[i, j]
            if not math.isfinite(v):  # hatched as well as grey: apart from the map's light end in greyscale
                box = Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor="0.65", linewidth=0)
                ax.add_patch(box)
            dark = norm is not None and math.isfinite(v) and norm(v) < 0.55
            ax.text(j, i, h.text(i, j), ha="center", va="center", fontsize=6, color="white" if dark else "black")
    ax.set_xticks(range(len(h.cols)), [f"{v:g}" if isinstance(v, float) else str(v) for v in h.cols])
    ax.set_yticks(range(len(h.rows)), [f"{v:g}" if isinstance(v, float) else str(v) for v in h.rows])
    ax.tick_params(length=0)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    if norm is not None:
        bar = fig.colorbar(im, ax=ax, shrink=0.9, pad=0.02)
        bar.set_label("steps (log)")
        bar.outline.set_linewidth(0.4)
        if bar.solids is not None:
            bar.solids.set_rasterized(False)  # matplotlib rasterizes a long colour bar: kept vector in SVG, PDF
        bar.ax.yaxis.set_major_formatter(_plain())
        bar.ax.yaxis.set_minor_formatter(_plain())


def _ylabel(metrics: list[str]) -> str:
    if len(metrics) > 1 and style.is_acc(metrics):
        return "accuracy"
    if len(metrics) > 1 and all(m.endswith("_loss") for m in metrics):
        return "loss"
    return " / ".join(style.label(m) for m in metrics)


def _draw_scatter_panel(ax: Any, p: Panel) -> None:
    """Points, one marker shape and colour per series (tokens: learned, and never learned on the budget line)."""
    for i, c in enumerate(p.curves):
        st = style.style(i)
        marker = style.MARKERS[i % len(style.MARKERS)] if i == 0 else "x"
        ax.plot(c.x, c.y, linestyle="none", marker=marker, markersize=2.5, alpha=0.7, color=st["color"], label=c.label)
    if all(y > 0 for c in p.curves for y in c.y):
        ax.set_yscale("log")  # learned steps span decades
    if p.hline is not None:
        y, text = p.hline
        ax.axhline(y, color="0.4", linewidth=0.7, linestyle=(0, (2, 2)), zorder=0, label=text)  # named in the legend


def _draw_dots_panel(ax: Any, p: Panel) -> None:
    """One point per category (p.xticks) with its seeds' range as an error bar, no line between categories."""
    for i, c in enumerate(p.curves):
        st = style.style(i)
        yerr = None
        if c.lo is not None and c.hi is not None:
            yerr = [
                [y - lo for y, lo in zip(c.y, c.lo, strict=True)],
                [hi - y for y, hi in zip(c.y, c.hi, strict=True)],
            ]
        ax.errorbar(c.x, c.y, yerr=yerr, linestyle="none", marker="o", markersize=3, capsize=2, color=st["color"],
                    label=legend_label(c))  # fmt: skip
    if p.xticks:
        ax.set_xticks([x for x, _ in p.xticks], [t for _, t in p.xticks], rotation=45, ha="right")
        ax.set_xlim(p.xticks[0][0] - 0.5, p.xticks[-1][0] + 0.5)


def _draw_bar_panel(ax: Any, p: Panel) -> None:
    for i, c in enumerate(p.curves):
        st = style.style(i)
        ax.bar(c.x, c.y, width=0.8, color=st["color"], label=c.label, linewidth=0)
    ax.set_xlim(0, max((max(c.x) for c in p.curves if c.x), default=1) + 1)


KINDS = {"bar": _draw_bar_panel, "scatter": _draw_scatter_panel, "dots": _draw_dots_panel}  # a panel kind's drawer


def draw(panels: list[Panel], log_x: bool = True, k: int = 1, legend: str = "each", ncols: int = 0) -> Any:
    """A Figure of `panels` in a grid sized for a paper column (one panel) or the page width (more).

    `legend`: "each" panel with more than one curve gets a legend; "first": one legend for the
    figure, above the panels (panels that share their series, as in a claim figure), so it covers no
    data, where a panel holds more than one series (one a panel is named by its title and y label).
    A series keeps its colour and line style in every panel.
    """
    require()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n = len(panels)
    grid = [p for p in panels if p.share_x and p.xlim is None and p.kind == "line"]  # a claim's grid
    shared = _x_range(grid, log_x) if len(grid) > 1 else None
    order: dict[str, int] = {}  # legend "first": a series' style is the figure's; "each": the panel's
    for p in panels:
        for c in p.curves:
            order.setdefault(c.label, len(order))  # by the series, whatever its seed count in a panel
    cols = ncols or min(n, style.MAX_COLS)
    rows = math.ceil(n / cols)
    width = style.COLUMN_W if cols == 1 else style.DOUBLE_W
    narrow = cols == 1
    with _rc():
        # a legend tells apart the series that share a panel; with one series a panel, its title and y label
        # already name it (the cure figure's metrics, fig11's seed)
        keyed = legend == "first" and n > 1 and any(len(p.curves) > 1 for p in panels)
        above = math.ceil(len(order) / legend_cols(len(order), narrow)) if keyed else 0
        fig = Figure(figsize=(width, style.PANEL_H * rows + LEGEND_ROW_H * above), layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(rows, cols, squeeze=False).ravel()
        for i, (ax, p) in enumerate(zip(axes, panels, strict=False)):
            lx = p.log_x if p.log_x is not None else log_x
            if shared is not None and p.share_x and p.xlim is None and lx == log_x:
                p = dataclasses.replace(p, xlim=shared)
            if p.kind in KINDS:
                KINDS[p.kind](ax, p)
            elif p.heat is not None:
                _draw_heat_panel(ax, fig, p.heat)
            else:
                own = {c.label: j for j, c in enumerate(p.curves)}
                _draw_line_panel(ax, p, lx, k, order if legend == "first" else own)
            if p.ylim is not None:
                ax.set_ylim(*p.ylim)
            if p.xlim is not None:
                ax.set_xlim(*p.xlim)
            chars = max(16, int(width / cols * 72 / (style.RC["axes.titlesize"] * 0.55)))  # what fits a panel
            lines = p.title.split("\n")  # a title's own line breaks are kept; each line wraps on its own
            title = "\n".join(textwrap.fill(ln, chars, break_long_words=False) for ln in lines)  # long cell labels
            ax.set_title(title, pad=9 if p.markers else None)  # room for the M/G letters above the axes
            ax.set_xlabel(p.xlabel + (" (log)" if lx and p.kind == "line" and p.xticks is None else ""))
            if p.log_y is not None and p.kind == "line":
                ax.set_yscale("log" if p.log_y else "linear")
            if p.kind in ("line", "scatter") and ax.get_yscale() == "log":
                plain_log_labels(ax.yaxis, *ax.get_ylim())
            ylabel = p.ylabel or _ylabel(p.metrics)
            left = i % cols == 0 or ylabel != (panels[i - 1].ylabel or _ylabel(panels[i - 1].metrics))
            ax.set_ylabel(ylabel if left or legend == "each" else "")  # a row of like panels: once, on the left
            if len(p.curves) > 1 and (legend == "each" or n == 1):
                ax.legend(ncol=2 if len(p.curves) > 4 else 1)
        for ax in axes[n:]:
            fig.delaxes(ax)
        if keyed:
            _figure_legend(fig, axes[:n], narrow)
    return fig


def legend_cols(n: int, narrow: bool = False) -> int:
    """Columns of a figure legend of n series: across the page one row up to 5, then 4 (or 3: long
    labels); 2 across one paper column."""
    if narrow:
        return min(n, 2)
    return n if n <= 5 else 4 if n <= 12 else 3


LEGEND_ROW_H = 0.14  # inches a row of a 6 pt legend takes


SEEDS = re.compile(r" \(n=(\d+)\)$")  # legend_label's seed count


def _figure_legend(fig: Any, axes: Any, narrow: bool) -> None:
    """One legend above the panels: every series once, in the order they were drawn, with its seed count,
    or the range of its counts where panels differ (a cell not yet run on every task: n=2-3)."""
    seen: dict[str, Any] = {}
    ns: dict[str, list[int]] = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            m = SEEDS.search(lab)
            base = lab[: m.start()] if m else lab
            seen.setdefault(base, h)
            if m:
                ns.setdefault(base, []).append(int(m.group(1)))
    texts = []
    for base in seen:
        n = ns.get(base)
        texts.append(base if not n else f"{base} (n={min(n)})" if min(n) == max(n) else f"{base} (n={min(n)}-{max(n)})")
    if seen:
        fig.legend(list(seen.values()), texts, loc="outside upper center", ncol=legend_cols(len(seen), narrow))


def save(fig: Any, out: str | Path) -> Path:
    """Write the figure; the format from the file's suffix (png, svg, pdf: the last two are vector)."""
    path = Path(out)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ConfigError(f"-o {out}: the file must end in .png, .svg or .pdf")
    meta = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    with _rc():
        try:
            if fmt == "png":
                _save_png(fig, path)
            else:
                fig.savefig(path, format=fmt, metadata=meta)
        except OSError as e:
            raise ConfigError(f"-o {out}: cannot write: {e.strerror or e}") from None
    return path


PNG_COLOURS = 256  # a palette PNG: about a third of the bytes of Agg's RGBA one, for a docs page or a slide


def _save_png(fig: Any, path: Path) -> None:
    """An opaque figure as a 256-colour palette PNG (median cut, no dither: the series' colours stay exact,
    only anti-aliased edges move); a figure with transparency as Agg's RGBA PNG."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    img = Image.open(buf)
    extrema: Any = img.getextrema()  # per band (lo, hi) for a multi-band image
    if img.mode == "RGBA" and extrema[3][0] < 255:
        path.write_bytes(buf.getvalue())
        return
    flat = img.convert("RGB").quantize(PNG_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    flat.save(path, format="PNG", optimize=True, dpi=img.info.get("dpi", (style.RC["savefig.dpi"],) * 2))


def _rc() -> Any:
    from matplotlib import rc_context

    rc: Any = style.RC  # matplotlib types its keys as literals; style.RC is a plain dict of them
    return rc_context(rc)
