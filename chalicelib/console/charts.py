"""Chart geometry for the console's server-drawn SVG charts: scales, ticks, bar and path
coordinates from figures. Pure: no I/O, no templates; console/insights/charts.html draws it.

Every chart is laid out in a fixed viewBox (VIEW_WIDTH wide) that the page scales to its width,
so the same geometry reads on a 390 px phone and on a desk. Values are never negative.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

VIEW_WIDTH = 360.0  # about a phone's width in CSS pixels, so 12-unit text reads at 11-12 px there
PLOT_HEIGHT = 160.0
LEFT = 48.0  # room for the value axis' labels
TOP = 12.0
BOTTOM = 28.0  # room for the category labels under the plot
RIGHT = 8.0
ROW_HEIGHT = 26.0
ROW_LABEL_WIDTH = 112.0  # the name column of a row chart
ROW_VALUE_WIDTH = 36.0  # the total after each row's bar
MAX_X_LABELS = 6  # a phone has room for about six category labels under a chart
LABEL_CHARACTERS = 16

Format = Callable[[float], str]


def plain(value: float) -> str:
    """A count: 12, 1.2k, 3.4M (compact, so a huge outlier's ticks stay short)."""
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.1f}".rstrip("0").rstrip(".") + suffix
    return f"{value:g}" if value != int(value) else str(int(value))


def truncate(label: str, limit: int = LABEL_CHARACTERS) -> str:
    """The label cut to `limit` characters with an ellipsis (the full one is in the data table)."""
    return label if len(label) <= limit else label[: max(limit - 1, 0)].rstrip() + "…"


def nice_ticks(maximum: float, count: int = 4) -> list[float]:
    """0 and round steps (1, 2, 2.5 or 5 times a power of ten) up to at least `maximum`."""
    if maximum <= 0 or not math.isfinite(maximum):
        return [0.0, 1.0]
    rough = maximum / count
    power = 10 ** math.floor(math.log10(rough))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= rough)
    steps = math.ceil(maximum / step - 1e-9)
    return [round(step * i, 10) for i in range(steps + 1)]


@dataclass(frozen=True)
class Tick:
    value: float
    label: str
    y: float


@dataclass(frozen=True)
class XLabel:
    text: str
    x: float


@dataclass(frozen=True)
class Column:
    label: str
    value: float
    value_label: str
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Frame:
    """The plot's box inside the viewBox and its value axis."""

    width: float
    height: float
    left: float
    top: float
    right: float
    bottom: float
    ticks: list[Tick]
    x_labels: list[XLabel]


@dataclass(frozen=True)
class ColumnChart:
    frame: Frame
    columns: list[Column]
    empty: bool  # nothing to draw: every value zero or no bucket at all


def _frame(top_value: float, fmt: Format, labels: Sequence[str], centres: Sequence[float]) -> Frame:
    ticks_at = nice_ticks(top_value)
    bottom = TOP + PLOT_HEIGHT
    scale = PLOT_HEIGHT / ticks_at[-1]
    ticks = [Tick(value, fmt(value), round(bottom - value * scale, 2)) for value in ticks_at]
    return Frame(VIEW_WIDTH, bottom + BOTTOM, LEFT, TOP, VIEW_WIDTH - RIGHT, bottom, ticks, _x_labels(labels, centres))


def _x_labels(labels: Sequence[str], centres: Sequence[float]) -> list[XLabel]:
    """At most MAX_X_LABELS, evenly spread, the last one always shown."""
    if not labels:
        return []
    every = math.ceil(len(labels) / MAX_X_LABELS)
    shown = [i for i in range(len(labels)) if (len(labels) - 1 - i) % every == 0]
    return [XLabel(truncate(labels[i], 10), round(centres[i], 2)) for i in shown]


def _slots(count: int) -> tuple[float, list[float]]:
    """Each category's width and centre across the plot."""
    span = VIEW_WIDTH - RIGHT - LEFT
    width = span / count if count else span
    return width, [LEFT + width * (i + 0.5) for i in range(count)]


def column_chart(labels: Sequence[str], values: Sequence[float], fmt: Format = plain) -> ColumnChart:
    """Vertical bars, one per category (a bucket of time). A non-zero value is at least a pixel
    high, so a small bucket beside a huge outlier still shows."""
    slot, centres = _slots(len(values))
    frame = _frame(max(values, default=0.0), fmt, labels, centres)
    scale = PLOT_HEIGHT / frame.ticks[-1].value
    width = round(max(slot * 0.7, 1.0), 2)
    columns = []
    for label, value, centre in zip(labels, values, centres, strict=True):
        height = round(max(value * scale, 1.0) if value > 0 else 0.0, 2)
        columns.append(
            Column(
                label, value, fmt(value), round(centre - width / 2, 2), round(frame.bottom - height, 2), width, height
            )
        )
    return ColumnChart(frame, columns, empty=not any(value > 0 for value in values))


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    value: float
    label: str


@dataclass(frozen=True)
class Series:
    name: str
    path: str  # SVG path data; a missing value breaks the line (a new "M")
    points: list[Point]
    style: int  # 0, 1...: each series' stroke and marker, so colour is not the only difference


@dataclass(frozen=True)
class LineChart:
    frame: Frame
    series: list[Series]
    empty: bool


def line_chart(
    labels: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]], fmt: Format = plain
) -> LineChart:
    """Lines over the categories; None (nothing measured in that bucket) leaves a gap."""
    _, centres = _slots(len(labels))
    known = [value for _, values in series for value in values if value is not None]
    frame = _frame(max(known, default=0.0), fmt, labels, centres)
    scale = PLOT_HEIGHT / frame.ticks[-1].value
    drawn = []
    for style, (name, values) in enumerate(series):
        points: list[Point] = []
        commands: list[str] = []
        previous_missing = True
        for label, value, centre in zip(labels, values, centres, strict=True):
            if value is None:
                previous_missing = True
                continue
            point = Point(round(centre, 2), round(frame.bottom - value * scale, 2), value, label)
            commands.append(f"{'M' if previous_missing else 'L'}{point.x:g} {point.y:g}")
            points.append(point)
            previous_missing = False
        drawn.append(Series(name, " ".join(commands), points, style))
    return LineChart(frame, drawn, empty=not known)


@dataclass(frozen=True)
class Segment:
    name: str
    value: float
    x: float
    width: float
    style: int


@dataclass(frozen=True)
class Row:
    label: str  # truncated to fit the name column
    full_label: str
    total: float
    total_label: str
    y: float
    segments: list[Segment]


@dataclass(frozen=True)
class RowChart:
    width: float
    height: float
    bar_left: float
    bar_right: float
    bar_height: float
    rows: list[Row]
    parts: list[str]  # the names of each row's segments, in order (the legend)
    empty: bool


def row_chart(
    rows: Sequence[tuple[str, Sequence[float]]],
    parts: Sequence[str],
    fmt: Format = plain,
    value_width: float = ROW_VALUE_WIDTH,
) -> RowChart:
    """Horizontal bars, one row per name, each split into `parts` (stacked, left to right). The
    longest row spans the bar area; a non-zero part is at least a pixel wide. `value_width`: room
    after the longest bar for its label."""
    bar_left = ROW_LABEL_WIDTH
    bar_right = VIEW_WIDTH - value_width
    top = max((sum(values) for _, values in rows), default=0.0)
    scale = (bar_right - bar_left) / top if top > 0 else 0.0
    laid = []
    for index, (label, values) in enumerate(rows):
        x = bar_left
        segments = []
        for style, (name, value) in enumerate(zip(parts, values, strict=True)):
            width = round(max(value * scale, 1.0) if value > 0 else 0.0, 2)
            segments.append(Segment(name, value, round(x, 2), width, style))
            x += width
        total = sum(values)
        laid.append(Row(truncate(label), label, total, fmt(total), round(index * ROW_HEIGHT + 4, 2), segments))
    height = max(len(rows), 1) * ROW_HEIGHT + 8
    return RowChart(VIEW_WIDTH, height, bar_left, bar_right, ROW_HEIGHT - 8, laid, list(parts), empty=top <= 0)


def duration(seconds: float) -> str:
    """A duration in the largest unit that keeps it readable: 45 s, 12 min, 3.5 h, 2.1 d."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min" if seconds >= 600 else f"{seconds / 60:.1f}".rstrip("0").rstrip(".") + " min"
    if seconds < 86400 * 2:
        return f"{seconds / 3600:.1f}".rstrip("0").rstrip(".") + " h"
    return f"{seconds / 86400:.1f}".rstrip("0").rstrip(".") + " d"


def minutes(value: float) -> str:
    """An axis of minutes."""
    return plain(value) + " min"
