"""The chart geometry (chalicelib/console/charts.py), as tables: empty ranges, one bucket, zero
values, a huge outlier, long labels; ticks, bars, paths and rows inside the viewBox."""

from __future__ import annotations

import pytest

from chalicelib.console import charts
from chalicelib.console.charts import LEFT, PLOT_HEIGHT, RIGHT, TOP, VIEW_WIDTH

BOTTOM_OF_PLOT = TOP + PLOT_HEIGHT


@pytest.mark.parametrize(
    ("maximum", "ticks"),
    [
        (0, [0.0, 1.0]),
        (-3, [0.0, 1.0]),
        (float("inf"), [0.0, 1.0]),
        (1, [0.0, 0.25, 0.5, 0.75, 1.0]),
        (3, [0.0, 1.0, 2.0, 3.0]),
        (7, [0.0, 2.0, 4.0, 6.0, 8.0]),
        (10, [0.0, 2.5, 5.0, 7.5, 10.0]),
        (100, [0.0, 25.0, 50.0, 75.0, 100.0]),
        (101, [0.0, 50.0, 100.0, 150.0]),
        (1_000_000, [0.0, 250_000.0, 500_000.0, 750_000.0, 1_000_000.0]),
    ],
)
def test_ticks_are_round_and_reach_the_maximum(maximum: float, ticks: list[float]) -> None:
    assert charts.nice_ticks(maximum) == ticks


@pytest.mark.parametrize(
    ("value", "text"),
    [(0, "0"), (7, "7"), (2.5, "2.5"), (999, "999"), (1000, "1k"), (1250, "1.2k"), (250_000, "250k"), (3.4e6, "3.4M")],
)
def test_counts_are_compact(value: float, text: str) -> None:
    assert charts.plain(value) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 s"), (45, "45 s"), (60, "1 min"), (90, "1.5 min"), (600, "10 min"), (2100, "35 min"),
     (3600, "1 h"), (5400, "1.5 h"), (172_800, "2 d"), (190_080, "2.2 d")],
)  # fmt: skip
def test_durations_read_in_the_largest_readable_unit(seconds: float, text: str) -> None:
    assert charts.duration(seconds) == text


@pytest.mark.parametrize(
    ("label", "limit", "shown"),
    [("db", 16, "db"), ("exactly-sixteen!", 16, "exactly-sixteen!"),
     ("prometheus-alertmanager-eu", 16, "prometheus-aler…"), ("ends in a space x", 10, "ends in a…"), ("", 16, "")],
)  # fmt: skip
def test_long_labels_are_cut_with_an_ellipsis(label: str, limit: int, shown: str) -> None:
    assert charts.truncate(label, limit) == shown
    assert len(charts.truncate(label, limit)) <= limit


@pytest.mark.parametrize(
    ("values", "heights", "empty"),
    [
        ([], [], True),
        ([0.0], [0.0], True),
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], True),
        ([4.0], [PLOT_HEIGHT], False),
        ([2.0, 0.0, 1.0], [PLOT_HEIGHT, 0.0, PLOT_HEIGHT / 2], False),
        ([1_000_000.0, 1.0, 0.0], [PLOT_HEIGHT, 1.0, 0.0], False),  # the small bar still shows beside the outlier
    ],
)
def test_column_heights_follow_the_values(values: list[float], heights: list[float], empty: bool) -> None:
    chart = charts.column_chart([f"d{i}" for i in range(len(values))], values)
    assert [column.height for column in chart.columns] == pytest.approx(heights)
    assert chart.empty is empty
    for column in chart.columns:
        assert column.y + column.height == pytest.approx(BOTTOM_OF_PLOT)
        assert column.x >= LEFT and column.x + column.width <= VIEW_WIDTH - RIGHT
    assert chart.frame.ticks[0].y == BOTTOM_OF_PLOT and chart.frame.ticks[-1].y == TOP


def test_one_bucket_is_one_centred_bar_with_its_label() -> None:
    chart = charts.column_chart(["16 Nov"], [3.0])
    [column] = chart.columns
    assert column.x + column.width / 2 == pytest.approx((LEFT + VIEW_WIDTH - RIGHT) / 2)
    centre = column.x + column.width / 2
    assert [(label.text, label.x) for label in chart.frame.x_labels] == [("16 Nov", pytest.approx(centre))]
    assert [tick.label for tick in chart.frame.ticks] == ["0", "1", "2", "3"]


@pytest.mark.parametrize(("count", "shown"), [(1, 1), (6, 6), (7, 4), (30, 6), (90, 6)])
def test_at_most_six_category_labels_the_last_always_among_them(count: int, shown: int) -> None:
    labels = [f"d{i}" for i in range(count)]
    chart = charts.column_chart(labels, [1.0] * count)
    assert len(chart.frame.x_labels) == shown
    assert chart.frame.x_labels[-1].text == labels[-1]


@pytest.mark.parametrize(
    ("values", "path"),
    [
        ([None, None], ""),
        ([60.0], "M200 12"),
        ([60.0, None, 30.0], "M98.67 12 M301.33 92"),  # the bucket without a measure breaks the line
        ([0.0, 60.0], "M124 172 L276 12"),
    ],
)
def test_lines_join_measured_buckets_and_break_at_gaps(values: list[float | None], path: str) -> None:
    chart = charts.line_chart([f"d{i}" for i in range(len(values))], [("Mean", values)])
    [series] = chart.series
    assert series.path == path
    assert len(series.points) == sum(value is not None for value in values)
    assert chart.empty is all(value is None for value in values)


def test_two_series_share_one_scale_and_keep_their_style() -> None:
    chart = charts.line_chart(["a", "b"], [("Mean", [10.0, 20.0]), ("Median", [5.0, 40.0])], charts.minutes)
    assert [(s.name, s.style) for s in chart.series] == [("Mean", 0), ("Median", 1)]
    assert chart.frame.ticks[-1].label == "40 min"
    assert chart.series[1].points[1].y == TOP


@pytest.mark.parametrize(
    ("rows", "widths"),
    [
        ([], []),
        ([("Ana", [0.0, 0.0, 0.0])], [[0.0, 0.0, 0.0]]),
        ([("Ana", [2.0, 1.0, 1.0]), ("Bo", [0.0, 0.0, 2.0])], [[106.0, 53.0, 53.0], [0.0, 0.0, 106.0]]),
        ([("Ana", [10_000.0, 0.0, 1.0])], [[211.98, 0.0, 1.0]]),  # one night page beside ten thousand still shows
    ],
)
def test_row_segments_stack_in_proportion(rows: list[tuple[str, list[float]]], widths: list[list[float]]) -> None:
    chart = charts.row_chart(rows, ["Working hours", "Evening", "Sleep hours"])
    assert [[segment.width for segment in row.segments] for row in chart.rows] == [
        [pytest.approx(w, abs=0.02) for w in row] for row in widths
    ]
    for row in chart.rows:
        assert row.segments[0].x == chart.bar_left
        for before, after in zip(row.segments, row.segments[1:], strict=False):
            assert after.x == pytest.approx(before.x + before.width)
        assert row.segments[-1].x + row.segments[-1].width <= chart.bar_right + 1.0
    assert chart.empty is (sum(sum(values) for _, values in rows) == 0)
    assert chart.height == max(len(rows), 1) * charts.ROW_HEIGHT + 8


def test_row_labels_are_cut_and_keep_the_full_name() -> None:
    chart = charts.row_chart([("Maximiliana Oppenheimer-Castellanos", [3.0])], ["Alerts"])
    [row] = chart.rows
    assert (row.label, row.full_label, row.total_label) == (
        "Maximiliana Opp…", "Maximiliana Oppenheimer-Castellanos", "3",
    )  # fmt: skip
