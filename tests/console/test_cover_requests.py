"""Cover requests on a schedule's page: the person on call asks for cover for a span of their
shift, another member of the rotation takes it (an override), the requester withdraws it until
then. Viewers, people outside the rotation, forged posts and other organizations are refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.oncall import swaps
from tests.conftest import NOW, Org
from tests.console.conftest import CONFIRMED, ConsoleClient, Person, action_forms
from tests.console.routing_world import World, build_world

# The responder is on call this week until Monday 09:00 in Berlin; the page's times are Berlin's.
ASK = {"cover_start": "2026-11-22T18:00", "cover_end": "2026-11-22T22:00", "cover_note": "Dinner"}


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


def _asked(org: Org, world: World) -> list[swaps.SwapRequest]:
    return swaps.list_swap_requests(organization_id=org.organization_id, schedule_id=world.schedule_id, now=NOW)


def _ask(signed_in: Callable[[str], ConsoleClient], world: World) -> str:
    browser = signed_in("responder")
    browser.get(f"/app/schedules/{world.schedule_id}")
    answer = browser.post(f"/app/schedules/{world.schedule_id}/swap-requests", ASK)
    assert answer.status == 303, answer.body[:800]
    return answer.location


def _overrides(org: Org, client: Any, world: World) -> list[tuple[str, str, str]]:
    answer = client.http.get(
        f"/api/v1/schedules/{world.schedule_id}", headers={"Authorization": f"Bearer {org.owner_key}"}
    )
    return [(o["user_id"], o["start"], o["end"]) for o in json.loads(answer.body)["data"]["overrides"]]


def test_the_person_on_call_sees_the_ask_form_filled_with_their_shift(
    world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    page = signed_in("responder").get(f"/app/schedules/{world.schedule_id}").dom()
    form = page.find("form", action=f"/app/schedules/{world.schedule_id}/swap-requests")
    assert form.find("input", name="cover_start").attrs.get("value") == "2026-11-22T13:00"  # now, in Berlin
    assert form.find("input", name="cover_end").attrs.get("value") == "2026-11-23T09:00"  # the hand-off
    admin = signed_in("admin").get(f"/app/schedules/{world.schedule_id}").dom()  # on call from Monday
    mine = admin.find("form", action=f"/app/schedules/{world.schedule_id}/swap-requests")
    assert mine.find("input", name="cover_start").attrs.get("value") == "2026-11-23T09:00"
    assert mine.find("input", name="cover_end").attrs.get("value") == "2026-11-23T18:00"  # the owner's override
    viewer = signed_in("viewer").get(f"/app/schedules/{world.schedule_id}").dom()
    assert not viewer.find_all("form", action=f"/app/schedules/{world.schedule_id}/swap-requests")


def test_asking_for_cover_shows_the_request_to_each_role_with_what_they_may_do(
    org: Org, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    location = _ask(signed_in, world)
    assert location.endswith("?done=cover_asked#swaps")  # back to the requests, the notice kept
    [request] = _asked(org, world)
    assert (request.requester_id, request.note, request.status) == (people["responder"].user_id, "Dinner", "open")
    take = f"/app/schedules/{world.schedule_id}/swap-requests/{request.swap_id}/take"
    withdraw = f"/app/schedules/{world.schedule_id}/swap-requests/{request.swap_id}/withdraw"
    expected = {
        "responder": ([withdraw], [take]),  # the requester withdraws
        "admin": ([take, withdraw], []),  # in the rotation: takes; oncall:write: may withdraw for them
        "owner": ([withdraw], [take]),  # not in the rotation: cannot take
        "viewer": ([], [take, withdraw]),
    }
    for role, (offered, refused) in expected.items():
        answer = signed_in(role).get(f"/app/schedules/{world.schedule_id}")
        forms = action_forms(answer)
        assert all(path in forms for path in offered), (role, forms)
        assert not any(path in forms for path in refused), (role, forms)
        swaps_table = answer.dom().find("h2", id="swaps")  # the section is there for everyone
        assert swaps_table.text() == "Cover requests"
        assert "Responder Person · Dinner" in " ".join(answer.text().split())


def test_a_member_takes_the_request_and_it_becomes_an_override(
    org: Org, client: Any, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    _ask(signed_in, world)
    [request] = _asked(org, world)
    browser = signed_in("admin")
    path = f"/app/schedules/{world.schedule_id}/swap-requests/{request.swap_id}/take"
    browser.get(f"/app/schedules/{world.schedule_id}")
    asked = browser.post(path)
    assert asked.status == 200 and "Take this shift?" in asked.text()  # asks first
    assert _asked(org, world)[0].status == "open"
    answer = browser.post(path, CONFIRMED)
    assert answer.status == 303, answer.body[:800]
    shown = browser.follow(answer)
    assert "You took the shift" in shown.text()
    assert "taken by Admin Person" in " ".join(shown.text().split())
    assert (people["admin"].user_id, "2026-11-22T17:00:00Z", "2026-11-22T21:00:00Z") in _overrides(org, client, world)
    again = signed_in("admin")
    again.get(f"/app/schedules/{world.schedule_id}")
    assert again.post(path, CONFIRMED).status == 409  # taken once


def test_the_requester_withdraws_and_nobody_can_take_it_then(
    org: Org, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    _ask(signed_in, world)
    [request] = _asked(org, world)
    browser = signed_in("responder")
    browser.get(f"/app/schedules/{world.schedule_id}")
    answer = browser.post(f"/app/schedules/{world.schedule_id}/swap-requests/{request.swap_id}/withdraw")
    assert answer.status == 303, answer.body[:800]
    assert "Cover request withdrawn." in browser.follow(answer).text()
    assert _asked(org, world)[0].status == "withdrawn"
    admin = signed_in("admin")
    admin.get(f"/app/schedules/{world.schedule_id}")
    taken = admin.post(f"/app/schedules/{world.schedule_id}/swap-requests/{request.swap_id}/take", CONFIRMED)
    assert taken.status == 409
    assert "withdrawn" in taken.text()


@pytest.mark.parametrize(
    ("fields", "element", "message"),
    [
        ({"cover_start": "2026-11-23T10:00", "cover_end": "2026-11-23T12:00"}, "f-cover_start", "not on call"),
        ({"cover_start": "2026-11-22T18:00", "cover_end": "2026-11-22T17:00"}, "f-cover_end", "after the start"),
        ({"cover_start": "soon", "cover_end": "2026-11-22T17:00"}, "f-cover_start", "must be a date and time"),
        ({"cover_start": "2026-11-21T18:00", "cover_end": "2026-11-22T17:00"}, "f-cover_start", "in the past"),
    ],
)
def test_a_bad_ask_keeps_the_form_and_names_the_input(
    fields: dict[str, str],
    element: str,
    message: str,
    org: Org,
    world: World,
    signed_in: Callable[[str], ConsoleClient],
) -> None:
    browser = signed_in("responder")
    browser.get(f"/app/schedules/{world.schedule_id}")
    answer = browser.post(f"/app/schedules/{world.schedule_id}/swap-requests", {**fields, "cover_note": "x"})
    assert answer.status == 400, answer.body[:800]
    page = answer.dom()
    assert page.find(id=element).attrs.get("aria-invalid") == "true"
    assert message in page.text()
    assert page.find("input", name="cover_start").attrs.get("value") == fields["cover_start"]
    assert _asked(org, world) == []


@pytest.mark.parametrize("role", ["viewer", "owner"])
def test_people_who_cannot_take_part_are_refused(
    role: str, org: Org, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    _ask(signed_in, world)
    [request] = _asked(org, world)
    browser = signed_in(role)
    browser.get(f"/app/schedules/{world.schedule_id}")
    take = f"/app/schedules/{world.schedule_id}/swap-requests/{request.swap_id}/take"
    assert browser.post(take, CONFIRMED).status == 403  # a viewer; the owner is outside the rotation
    if role == "viewer":
        assert browser.post(f"/app/schedules/{world.schedule_id}/swap-requests", ASK).status == 403
        withdraw = f"/app/schedules/{world.schedule_id}/swap-requests/{request.swap_id}/withdraw"
        assert browser.post(withdraw).status == 403
    assert [r.status for r in _asked(org, world)] == ["open"]


def test_cover_posts_refuse_a_missing_or_wrong_csrf_token(
    org: Org, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("responder")
    browser.get(f"/app/schedules/{world.schedule_id}")
    path = f"/app/schedules/{world.schedule_id}/swap-requests"
    assert browser.post(path, ASK, csrf="-").status == 403
    assert browser.post(path, ASK, csrf="bad").status == 403
    assert _asked(org, world) == []


def test_another_organizations_schedule_and_unknown_requests_are_404(
    world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    from chalicelib.directory.users import create_user
    from chalicelib.oncall import service as schedules
    from chalicelib.oncall.schedule import Layer
    from tests.conftest import make_org

    other = make_org("Other")
    person = create_user(organization_id=other.organization_id, name="T", email="t@example.org", now=NOW)
    layer = Layer("lyr_t", "T", (person.user_id,), "weekly", "09:00", NOW)
    theirs = schedules.create_schedule(
        organization_id=other.organization_id, name="Theirs", time_zone="UTC", layers=[layer], now=NOW
    )
    request = swaps.request_cover(
        organization_id=other.organization_id,
        schedule_id=theirs.schedule_id,
        requester_id=person.user_id,
        start=NOW,
        end=NOW.replace(hour=18),
        now=NOW,
    )
    browser = signed_in("responder")
    browser.get(f"/app/schedules/{world.schedule_id}")
    assert browser.post(f"/app/schedules/{theirs.schedule_id}/swap-requests", ASK).status == 404
    take = f"/app/schedules/{theirs.schedule_id}/swap-requests/{request.swap_id}/take"
    assert browser.post(take, CONFIRMED).status == 404
    missing = f"/app/schedules/{world.schedule_id}/swap-requests/{request.swap_id}/take"
    assert browser.post(missing, CONFIRMED).status == 404
    theirs_now = swaps.list_swap_requests(
        organization_id=other.organization_id, schedule_id=theirs.schedule_id, now=NOW
    )
    assert [r.status for r in theirs_now] == ["open"]
