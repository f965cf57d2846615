"""The schedule editor: owners and admins create a schedule and edit its layers (members in
order, rotation, hand-off, start, restrictions), preview the next two weeks before saving, save
with the version they read; the shifts read back through the API. Everyone else is refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.directory.users import create_user
from chalicelib.oncall import service as schedules
from chalicelib.oncall.schedule import Layer
from tests.conftest import NOW, Org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, Person, action_forms
from tests.console.routing_world import World, build_world


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


def _items(fields: dict[str, Any]) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = []
    for name, value in fields.items():
        items.extend((name, v) for v in value) if isinstance(value, list) else items.append((name, value))
    return items


def _form(people: dict[str, Person], op: str = "save", **changes: Any) -> list[tuple[str, str]]:
    """A new schedule as the editor posts it: a weekly rotation of the responder then the admin,
    and a daily layer of the owner restricted to 09:00-17:00 (plus each layer's blank rows)."""
    fields: dict[str, Any] = {
        "version": "",
        "layers": "2",
        "name": "Checkout",
        "time_zone": "Europe/Berlin",
        "team_id": "",
        "lead": "0",
        "layer1_id": "",
        "layer1_name": "Weekly",
        "layer1_member": [people["responder"].user_id, people["admin"].user_id, ""],
        "layer1_rotation": "weekly",
        "layer1_hours": "",
        "layer1_handoff": "09:00",
        "layer1_start": "2026-11-23T09:00",
        "layer1_end": "",
        "layer1_rkind": [""],
        "layer1_rstartday": ["0"],
        "layer1_rstart": ["09:00"],
        "layer1_rendday": ["4"],
        "layer1_rend": ["17:00"],
        "layer2_id": "",
        "layer2_name": "Business hours",
        "layer2_member": [people["owner"].user_id, ""],
        "layer2_rotation": "daily",
        "layer2_hours": "",
        "layer2_handoff": "09:00",
        "layer2_start": "2026-11-23T00:00",
        "layer2_end": "",
        "layer2_rkind": ["daily", ""],
        "layer2_rstartday": ["0", "0"],
        "layer2_rstart": ["09:00", "09:00"],
        "layer2_rendday": ["4", "4"],
        "layer2_rend": ["17:00", "17:00"],
        "op": op,
    }
    fields.update(changes)
    return _items(fields)


def _shifts(org: Org, client: Any, schedule_id: str, window: str) -> list[tuple[str, str, str]]:
    answer = client.http.get(
        f"/api/v1/schedules/{schedule_id}/shifts?{window}", headers={"Authorization": f"Bearer {org.owner_key}"}
    )
    assert answer.status_code == 200, answer.body
    return [(s["user"]["name"], s["start"], s["end"]) for s in json.loads(answer.body)["data"]["shifts"]]


def _count(org: Org) -> int:
    return len(schedules.list_schedules(organization_id=org.organization_id))


MONDAY = "since=2026-11-23T08:00:00Z&until=2026-11-24T08:00:00Z"  # Monday 09:00 to Tuesday 09:00 in Berlin


@pytest.mark.parametrize("role", ROLES)
def test_the_editor_is_for_owners_and_admins(
    role: str, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in(role)
    listing = browser.get("/app/schedules")
    page = browser.get(f"/app/schedules/{world.schedule_id}")
    new = browser.get("/app/schedules/new")
    edit = browser.get(f"/app/schedules/{world.schedule_id}/edit")
    if role in ("owner", "admin"):
        assert (new.status, edit.status) == (200, 200)
        assert action_forms(new) == ["/app/schedules/new"]
        assert action_forms(edit) == [f"/app/schedules/{world.schedule_id}/edit"]
        assert len(edit.dom().find_all("h1")) == 1
        assert listing.dom().find_all("a", href="/app/schedules/new")
        assert page.dom().find_all("a", href=f"/app/schedules/{world.schedule_id}/edit")
        assert f"/app/schedules/{world.schedule_id}/delete" in action_forms(page)
    else:
        assert (new.status, edit.status) == (403, 403)
        assert not listing.dom().find_all("a", href="/app/schedules/new")
        assert not page.dom().find_all("a", href=f"/app/schedules/{world.schedule_id}/edit")
        assert f"/app/schedules/{world.schedule_id}/delete" not in action_forms(page)


def test_the_edit_form_shows_the_layers_as_stored(
    people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    form = signed_in("admin").get(f"/app/schedules/{world.schedule_id}/edit").dom()
    assert form.find("input", name="name").attrs.get("value") == "Payments primary"
    assert form.find("input", name="version").attrs.get("value") == "2"  # created, then the override
    assert form.find("input", name="layer1_start").attrs.get("value") == "2026-11-16T09:00"  # in Berlin
    chosen = [
        next((str(o.attrs.get("value")) for o in select.find_all("option") if "selected" in o.attrs), "")
        for select in form.find_all("select", name="layer1_member")
    ]
    assert chosen == [people["responder"].user_id, people["admin"].user_id, ""]  # in order, then a blank one
    offered = {str(o.attrs.get("value")) for o in form.find("select", name="layer1_member").find_all("option")}
    assert people["viewer"].user_id not in offered  # a viewer cannot be on call


@pytest.mark.parametrize("role", ["owner", "admin"])
def test_a_schedule_with_two_layers_and_a_restriction_is_created_and_its_shifts_read_back(
    role: str, org: Org, client: Any, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in(role)
    browser.get("/app/schedules/new")
    answer = browser.post("/app/schedules/new", _form(people))
    assert answer.status == 303, answer.body[:800]
    shown = browser.follow(answer)
    assert "Schedule created." in shown.text()
    schedule_id = answer.location.split("?")[0].rsplit("/", 1)[-1]
    stored = schedules.get_schedule(organization_id=org.organization_id, schedule_id=schedule_id).schedule
    assert (stored.name, stored.time_zone, [layer.name for layer in stored.layers]) == (
        "Checkout",
        "Europe/Berlin",
        ["Weekly", "Business hours"],
    )
    assert _shifts(org, client, schedule_id, MONDAY) == [
        ("Owner Person", "2026-11-23T08:00:00Z", "2026-11-23T16:00:00Z"),  # the restricted layer wins 09-17
        ("Responder Person", "2026-11-23T16:00:00Z", "2026-11-24T08:00:00Z"),
    ]


def test_preview_shows_the_two_weeks_to_come_and_saves_nothing(
    org: Org, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("owner")
    browser.get("/app/schedules/new")
    before = _count(org)
    answer = browser.post("/app/schedules/new", _form(people, op="preview"))
    assert answer.status == 200, answer.body[:800]
    page = answer.dom()
    preview = page.find("section", cls="preview")
    rows = preview.find("table", cls="shifts").find("tbody").find_all("tr")
    assert len(rows) == 14
    monday = " ".join(rows[1].text().replace("\N{EN DASH}", "-").split())  # the first row is today, Sunday
    assert "09:00-17:00 Owner Person Business hours" in monday
    assert "17:00-24:00 Responder Person Weekly" in monday
    assert "Nobody on call" in " ".join(rows[0].text().split())  # nobody before Monday 09:00: a gap
    assert preview.find_all("div", cls="coverage-gaps")
    assert page.find("input", name="name").attrs.get("value") == "Checkout"  # the form is kept
    assert _count(org) == before


def test_layers_are_added_moved_and_removed_before_saving(
    org: Org, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("owner")
    browser.get("/app/schedules/new")
    before = _count(org)

    def names(answer: Any) -> list[str]:
        assert answer.status == 200, answer.body[:800]
        inputs = answer.dom().find_all("input")
        return [str(i.attrs.get("value")) for i in inputs if str(i.attrs.get("name", "")).endswith("_name")]

    assert names(browser.post("/app/schedules/new", _form(people, op="add_layer"))) == [
        "Weekly",
        "Business hours",
        "Layer 3",
    ]
    assert names(browser.post("/app/schedules/new", _form(people, op="layer_down:1"))) == ["Business hours", "Weekly"]
    assert names(browser.post("/app/schedules/new", _form(people, op="layer_up:2"))) == ["Business hours", "Weekly"]
    assert names(browser.post("/app/schedules/new", _form(people, op="remove_layer:1"))) == ["Business hours"]
    assert _count(org) == before


def test_an_admin_edits_a_schedule_with_the_version_read(
    org: Org, client: Any, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("admin")
    browser.get(f"/app/schedules/{world.schedule_id}/edit")
    sent = _form(
        people,
        version="2",
        layers="1",
        name="Payments, renamed",
        layer1_id="lyr_weekly",
        layer1_member=[people["admin"].user_id, people["responder"].user_id, people["owner"].user_id],
        layer1_start="2026-11-16T09:00",
    )
    answer = browser.post(f"/app/schedules/{world.schedule_id}/edit", sent)
    assert answer.status == 303, answer.body[:800]
    assert "Schedule saved." in browser.follow(answer).text()
    stored = schedules.get_schedule(organization_id=org.organization_id, schedule_id=world.schedule_id)
    assert (stored.schedule.name, stored.version) == ("Payments, renamed", 3)
    layer = stored.schedule.layers[0]
    assert (layer.layer_id, layer.members) == (
        "lyr_weekly",
        (people["admin"].user_id, people["responder"].user_id, people["owner"].user_id),
    )
    assert [o.override_id for o in stored.schedule.overrides] == [world.override_id]  # overrides stay


def test_a_schedule_saved_by_someone_else_since_is_a_409_with_the_form_kept(
    org: Org, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("owner")
    browser.get(f"/app/schedules/{world.schedule_id}/edit")
    schedules.update_schedule(
        organization_id=org.organization_id, schedule_id=world.schedule_id, now=NOW, name="Theirs"
    )
    sent = _form(people, version="2", layers="1", name="Mine", layer1_id="lyr_weekly")
    answer = browser.post(f"/app/schedules/{world.schedule_id}/edit", sent)
    assert answer.status == 409, answer.body[:800]
    assert "Someone saved this schedule after you opened it" in answer.text()
    page = answer.dom()
    assert page.find("input", name="name").attrs.get("value") == "Mine"
    assert page.find("input", name="version").attrs.get("value") == "3"  # the next save replaces theirs
    stored = schedules.get_schedule(organization_id=org.organization_id, schedule_id=world.schedule_id)
    assert stored.schedule.name == "Theirs"
    again = browser.post(
        f"/app/schedules/{world.schedule_id}/edit", _form(people, version="3", layers="1", name="Mine")
    )
    assert again.status == 303, again.body[:800]
    assert schedules.get_schedule(organization_id=org.organization_id, schedule_id=world.schedule_id).schedule.name == (
        "Mine"
    )


@pytest.mark.parametrize(
    ("changes", "element", "message"),
    [
        ({"name": ""}, "f-name", "must "),
        ({"layer1_start": "tomorrow"}, "f-layer1_start", "must be a date and time"),
        ({"layer1_rotation": "custom", "layer1_hours": ""}, "f-layer1_hours", "a whole number of hours"),
        ({"layer1_member": ["VIEWER"]}, "f-layer1_member-1", "who can respond"),
        ({"layer1_handoff": "25:00"}, "f-layer1_handoff", ""),
        ({"layer2_rend": ["26:00", "17:00"]}, "f-layer2_r1-kind", ""),
        ({"lead": "soon"}, "f-lead", "a whole number of minutes"),
        ({"lead": "2000"}, "f-lead", ""),
        ({"time_zone": "Mars/Olympus"}, "f-time_zone", ""),
    ],
)
def test_a_bad_schedule_keeps_the_form_names_the_input_and_saves_nothing(
    changes: dict[str, Any],
    element: str,
    message: str,
    org: Org,
    people: dict[str, Person],
    world: World,
    signed_in: Callable[[str], ConsoleClient],
) -> None:
    browser = signed_in("owner")
    browser.get("/app/schedules/new")
    before = _count(org)
    sent = {k: ([people["viewer"].user_id] if v == ["VIEWER"] else v) for k, v in changes.items()}
    for op in ("save", "preview"):
        answer = browser.post("/app/schedules/new", _form(people, op=op, **sent))
        assert answer.status == 400, (op, answer.body[:800])
        page = answer.dom()
        assert page.find(id=element).attrs.get("aria-invalid") == "true", op
        assert message in page.text()
        assert page.find("main").text().count(": must not be empty") <= 1  # said once (and not as a path)
        assert "layers." not in page.text()  # no internal paths
        assert page.find("input", name="layer1_name").attrs.get("value") == "Weekly"  # the form is kept
    assert _count(org) == before


@pytest.mark.parametrize("role", ["viewer", "responder"])
def test_forged_editor_posts_without_oncall_write_are_refused(
    role: str, org: Org, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in(role)
    browser.get(f"/app/schedules/{world.schedule_id}")
    before = _count(org)
    assert browser.post("/app/schedules/new", _form(people)).status == 403
    edit = _form(people, version="2", layers="1", name="Hacked", layer1_id="lyr_weekly")
    assert browser.post(f"/app/schedules/{world.schedule_id}/edit", edit).status == 403
    assert browser.post(f"/app/schedules/{world.schedule_id}/delete", CONFIRMED).status == 403
    assert _count(org) == before
    assert schedules.get_schedule(organization_id=org.organization_id, schedule_id=world.schedule_id).version == 2


def test_editor_posts_refuse_a_missing_or_wrong_csrf_token(
    org: Org, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("owner")
    browser.get("/app/schedules/new")
    before = _count(org)
    assert browser.post("/app/schedules/new", _form(people), csrf="-").status == 403
    assert browser.post("/app/schedules/new", _form(people), csrf="bad").status == 403
    assert browser.post(f"/app/schedules/{world.schedule_id}/delete", CONFIRMED, csrf="bad").status == 403
    assert _count(org) == before


def test_deleting_a_schedule_a_policy_pages_is_refused_naming_the_policy(
    org: Org, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("admin")
    browser.get(f"/app/schedules/{world.schedule_id}")
    answer = browser.post(f"/app/schedules/{world.schedule_id}/delete", CONFIRMED)
    assert answer.status == 409, answer.body[:800]
    assert "Payments escalation" in answer.text()
    assert schedules.get_schedule(organization_id=org.organization_id, schedule_id=world.schedule_id).version == 2


def test_deleting_an_unused_schedule_asks_first(
    org: Org, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("owner")
    browser.get("/app/schedules/new")
    created = browser.post("/app/schedules/new", _form(people))
    schedule_id = created.location.split("?")[0].rsplit("/", 1)[-1]
    browser.get(f"/app/schedules/{schedule_id}")
    asked = browser.post(f"/app/schedules/{schedule_id}/delete")
    assert asked.status == 200
    assert "Delete this schedule?" in asked.text()
    assert _count(org) == 2
    answer = browser.post(f"/app/schedules/{schedule_id}/delete", CONFIRMED)
    assert answer.status == 303
    assert "Schedule deleted." in browser.follow(answer).text()
    assert [s.schedule_id for s in schedules.list_schedules(organization_id=org.organization_id)] == [world.schedule_id]


def test_another_organizations_schedule_is_404(
    people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    from tests.conftest import make_org

    other = make_org("Other")
    theirs_person = create_user(
        organization_id=other.organization_id, name="Theirs", email="theirs@example.org", now=NOW, role="responder"
    )
    layer = Layer(
        layer_id="lyr_theirs",
        name="Theirs",
        members=(theirs_person.user_id,),
        rotation="weekly",
        handoff_time="09:00",
        start=NOW,
    )
    theirs = schedules.create_schedule(
        organization_id=other.organization_id, name="Theirs", time_zone="UTC", layers=[layer], now=NOW
    )
    browser = signed_in("owner")
    assert browser.get(f"/app/schedules/{theirs.schedule_id}/edit").status == 404
    browser.get("/app/schedules/new")
    edit = _form(people, version="2", layers="1", name="Mine now")
    assert browser.post(f"/app/schedules/{theirs.schedule_id}/edit", edit).status == 404
    assert browser.post(f"/app/schedules/{theirs.schedule_id}/delete", CONFIRMED).status == 404
    assert schedules.get_schedule(organization_id=other.organization_id, schedule_id=theirs.schedule_id).version == 1
