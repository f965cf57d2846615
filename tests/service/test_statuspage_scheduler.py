"""The maintenance scheduler on moto, with time passed in: due windows move once, others stay."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.settings import get_settings
from chalicelib.statuspage import pages, public, scheduled_maintenance, structure
from chalicelib.statuspage.tables import StatusPageItem
from tests.conftest import NOW


@pytest.fixture
def page(org):
    created = pages.create_page(organization_id=org.organization_id, name="Acme", slug="acme", now=NOW)
    section = structure.create_section(page_id=created.page_id, name="Core", now=NOW)
    section_id = section.item_key.rsplit("#", 1)[-1]
    component = structure.create_component(
        page_id=created.page_id, section_id=section_id, group_id=None, name="API", status="operational", now=NOW
    )
    return created.page_id, component.item_key.rsplit("#", 1)[-1]


def window(page_id, component_id, start_in, end_in, title="Upgrade"):
    created = scheduled_maintenance.create_window(
        page_id=page_id,
        title=title,
        scheduled_start=NOW + start_in,
        scheduled_end=NOW + end_in,
        component_ids=[component_id],
        now=NOW,
        settings=get_settings(),
    )
    return created.item_key.rsplit("#", 1)[-1]


def status_of(page_id, maintenance_id):
    return scheduled_maintenance.get_window(page_id=page_id, maintenance_id=maintenance_id).status


def component_status(page_id):
    view = public.load_view("acme")
    assert view is not None and view.page_id == page_id
    [component] = view.components().values()
    return component.status


def test_windows_start_and_complete_on_their_times(page):
    page_id, component_id = page
    soon = window(page_id, component_id, timedelta(hours=1), timedelta(hours=2))
    later = window(page_id, component_id, timedelta(days=1), timedelta(days=1, hours=1))

    assert scheduled_maintenance.run_scheduler(
        now=NOW + timedelta(minutes=59), settings=get_settings()
    ) == scheduled_maintenance.SchedulerRun(0, 0, 0)
    assert status_of(page_id, soon) == "scheduled"

    assert scheduled_maintenance.run_scheduler(
        now=NOW + timedelta(hours=1), settings=get_settings()
    ) == scheduled_maintenance.SchedulerRun(1, 0, 0)
    assert (status_of(page_id, soon), status_of(page_id, later)) == ("in_progress", "scheduled")
    assert component_status(page_id) == "under_maintenance"
    assert public.summary(public.load_view("acme"), settings=get_settings())["active_maintenance_count"] == 1  # type: ignore[arg-type]

    # A second, overlapping run finds nothing more to do.
    assert scheduled_maintenance.run_scheduler(
        now=NOW + timedelta(hours=1), settings=get_settings()
    ) == scheduled_maintenance.SchedulerRun(0, 0, 0)

    assert scheduled_maintenance.run_scheduler(
        now=NOW + timedelta(hours=2), settings=get_settings()
    ) == scheduled_maintenance.SchedulerRun(0, 1, 0)
    assert status_of(page_id, soon) == "completed"
    assert component_status(page_id) == "operational"
    completed = scheduled_maintenance.get_window(page_id=page_id, maintenance_id=soon)
    assert (completed.due_at, completed.active_key, completed.updated_at) == (None, None, NOW + timedelta(hours=2))


def test_a_window_missed_entirely_completes_in_one_move(page):
    page_id, component_id = page
    missed = window(page_id, component_id, timedelta(hours=1), timedelta(hours=2))
    assert scheduled_maintenance.run_scheduler(
        now=NOW + timedelta(hours=3), settings=get_settings()
    ) == scheduled_maintenance.SchedulerRun(0, 1, 0)
    assert status_of(page_id, missed) == "completed"


def test_cancelled_and_rescheduled_windows_are_left_alone(page):
    page_id, component_id = page
    cancelled = window(page_id, component_id, timedelta(hours=1), timedelta(hours=2))
    moved = window(page_id, component_id, timedelta(hours=1), timedelta(hours=2))
    scheduled_maintenance.update_window(
        page_id=page_id, maintenance_id=cancelled, now=NOW, status="cancelled", settings=get_settings()
    )
    scheduled_maintenance.update_window(
        page_id=page_id,
        maintenance_id=moved,
        now=NOW,
        scheduled_start=NOW + timedelta(days=2),
        scheduled_end=NOW + timedelta(days=2, hours=1),
        settings=get_settings(),
    )
    assert scheduled_maintenance.run_scheduler(
        now=NOW + timedelta(hours=1), settings=get_settings()
    ) == scheduled_maintenance.SchedulerRun(0, 0, 0)
    assert (status_of(page_id, cancelled), status_of(page_id, moved)) == ("cancelled", "scheduled")
    assert scheduled_maintenance.run_scheduler(
        now=NOW + timedelta(days=2), settings=get_settings()
    ) == scheduled_maintenance.SchedulerRun(1, 0, 0)


def test_a_run_racing_another_writer_moves_the_window_once(page, monkeypatch):
    page_id, component_id = page
    raced = window(page_id, component_id, timedelta(hours=1), timedelta(hours=2))
    original_get = StatusPageItem.get

    def get_then_cancel(*args, **kwargs):
        item = original_get(*args, **kwargs)
        monkeypatch.setattr(StatusPageItem, "get", original_get)
        # Someone cancels between the scheduler's read and its write.
        scheduled_maintenance.update_window(
            page_id=page_id, maintenance_id=raced, now=NOW, status="cancelled", settings=get_settings()
        )
        return item

    monkeypatch.setattr(StatusPageItem, "get", get_then_cancel)
    assert scheduled_maintenance.run_scheduler(
        now=NOW + timedelta(hours=1), settings=get_settings()
    ) == scheduled_maintenance.SchedulerRun(0, 0, 1)
    assert status_of(page_id, raced) == "cancelled"


def test_windows_of_a_deleted_page_are_skipped(org, page):
    page_id, component_id = page
    window(page_id, component_id, timedelta(hours=1), timedelta(hours=2))
    pages.delete_page(organization_id=org.organization_id, page_id=page_id)
    run = scheduled_maintenance.run_scheduler(now=NOW + timedelta(hours=1), settings=get_settings())
    assert (run.started, run.completed) == (0, 0)


def test_a_window_created_after_its_start_begins_at_once(page):
    page_id, component_id = page
    started = window(page_id, component_id, -timedelta(minutes=5), timedelta(hours=1))
    assert status_of(page_id, started) == "in_progress"
    assert component_status(page_id) == "under_maintenance"
