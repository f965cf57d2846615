"""The escalation policy pages: every role reads them; owners and admins edit a policy with the
version they read, checked through the API."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.directory.users import create_user
from chalicelib.escalation import service as policies
from chalicelib.escalation.steps import Level, Target
from tests.conftest import NOW, Org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, Person, action_forms
from tests.console.routing_world import World, build_world


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


def _policy(org: Org, client: Any, policy_id: str) -> dict[str, Any]:
    answer = client.http.get(
        f"/api/v1/escalation-policies/{policy_id}", headers={"Authorization": f"Bearer {org.owner_key}"}
    )
    assert answer.status_code == 200
    return dict(json.loads(answer.body)["data"])


def _edit(world: World, people: dict[str, Person], **changes: Any) -> list[tuple[str, str]]:
    """The edit form as the page fills it (two levels and a blank row), with changes."""
    fields: dict[str, Any] = {
        "version": "1",
        "rows": "3",
        "name": "Payments escalation",
        "repeat_count": "1",
        "level_1_targets": [f"schedule:{world.schedule_id}"],
        "level_1_delay": "5",
        "level_2_targets": [f"user:{people['owner'].user_id}"],
        "level_2_delay": "15",
        "level_3_targets": [],
        "level_3_delay": "15",
    }
    fields.update(changes)
    items: list[tuple[str, str]] = []
    for name, value in fields.items():
        items.extend((name, v) for v in value) if isinstance(value, list) else items.append((name, value))
    return items


@pytest.mark.parametrize("role", ROLES)
def test_every_policy_page_renders_for_every_role(
    role: str, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in(role)
    listing = browser.get("/app/escalation-policies")
    page = browser.get(f"/app/escalation-policies/{world.policy_id}")
    assert listing.status == page.status == 200
    assert action_forms(listing) == []
    assert len(page.dom().find_all("h1")) == 1
    policy = f"/app/escalation-policies/{world.policy_id}"
    expected = [f"{policy}/delete", policy] if role in ("owner", "admin") else []
    assert action_forms(page) == expected
    new = browser.get("/app/escalation-policies/new")
    if role in ("owner", "admin"):
        assert new.status == 200
        assert action_forms(new) == ["/app/escalation-policies"]
        assert len(new.dom().find_all("h1")) == 1
        assert listing.dom().find_all("a", href="/app/escalation-policies/new")
    else:
        assert new.status == 403
        assert not listing.dom().find_all("a", href="/app/escalation-policies/new")


def test_a_policy_reads_level_by_level(world: World, signed_in: Callable[[str], ConsoleClient]) -> None:
    browser = signed_in("viewer")
    row = browser.get("/app/escalation-policies").dom().find("tbody").find("tr")
    assert row.find("td", **{"data-label": "Level 1 pages"}).text() == "Payments primary (schedule)"
    page = browser.get(f"/app/escalation-policies/{world.policy_id}").dom()
    levels = page.find("ol", cls="levels").find_all("li", cls="card")
    text = [" ".join(level.text().split()) for level in levels]
    assert text == [
        "Level 1 Whoever is on call in Payments primary Then level 2, 5 minutes later.",
        "Level 2 Owner Person Then, 15 minutes later, the policy starts over.",
    ]
    assert "starts over at level 1, 1 more time." in page.text()
    assert "Services using it Payments API" in " ".join(page.text().split())


def test_an_unknown_policy_is_a_404(world: World, signed_in: Callable[[str], ConsoleClient]) -> None:
    assert signed_in("viewer").get("/app/escalation-policies/pol_nope").status == 404


def test_an_admin_edits_levels_delays_and_repeats(
    org: Org, client: Any, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("admin")
    form = browser.get(f"/app/escalation-policies/{world.policy_id}").dom()
    assert form.find("input", name="rows").attrs.get("value") == "3"
    assert "selected" in form.find("option", value=f"schedule:{world.schedule_id}").attrs
    answer = browser.post(
        f"/app/escalation-policies/{world.policy_id}",
        _edit(
            world,
            people,
            name="Payments, louder",
            repeat_count="2",
            level_1_delay="10",
            level_2_targets=[],  # cleared: the level goes
            level_3_targets=[f"user:{people['owner'].user_id}", f"user:{people['admin'].user_id}"],
            level_3_delay="30",
        ),
    )
    assert answer.status == 303, answer.body[:800]
    assert "Escalation policy saved." in browser.follow(answer).text()
    saved = _policy(org, client, world.policy_id)
    assert (saved["name"], saved["repeat_count"], saved["version"]) == ("Payments, louder", 2, 2)
    assert saved["levels"] == [
        {"level": 1, "targets": [{"kind": "schedule", "id": world.schedule_id}], "delay_minutes": 10},
        {
            "level": 2,
            "targets": [
                {"kind": "user", "id": people["owner"].user_id},
                {"kind": "user", "id": people["admin"].user_id},
            ],
            "delay_minutes": 30,
        },
    ]


def test_a_policy_changed_since_the_page_was_read_is_a_409(
    org: Org, client: Any, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("owner")
    browser.get(f"/app/escalation-policies/{world.policy_id}")
    policies.update_policy(organization_id=org.organization_id, policy_id=world.policy_id, now=NOW, repeat_count=3)
    answer = browser.post(f"/app/escalation-policies/{world.policy_id}", _edit(world, people, name="Mine"))
    assert answer.status == 409
    assert _policy(org, client, world.policy_id)["name"] == "Payments escalation"
    assert answer.dom().find("input", name="name").attrs.get("value") == "Mine"


@pytest.mark.parametrize(
    ("changes", "message", "field"),
    [
        ({"level_1_delay": "0"}, "greater than or equal to 1", "level_1_delay"),
        ({"level_2_delay": "soon"}, "valid integer", "level_2_delay"),
        ({"repeat_count": "10"}, "less than or equal to 9", "repeat_count"),
        ({"name": ""}, "at least 1 character", "name"),
        ({"level_1_targets": [], "level_2_targets": []}, "at least 1 item", None),
        ({"level_2_targets": ["user:usr_nobody"]}, "", None),
        ({"level_2_targets": ["team:x"]}, "", "level_2_targets"),
    ],
)
def test_a_bad_edit_reshows_the_form_and_changes_nothing(
    changes: dict[str, Any],
    message: str,
    field: str | None,
    org: Org,
    client: Any,
    people: dict[str, Person],
    world: World,
    signed_in: Callable[[str], ConsoleClient],
) -> None:
    browser = signed_in("owner")
    browser.get(f"/app/escalation-policies/{world.policy_id}")
    answer = browser.post(f"/app/escalation-policies/{world.policy_id}", _edit(world, people, **changes))
    assert answer.status == 400, answer.body[:800]
    assert message in answer.text()
    if field is not None:
        assert answer.dom().find(id=f"f-{field}").attrs.get("aria-invalid") == "true"
    assert _policy(org, client, world.policy_id)["version"] == 1


@pytest.mark.parametrize("role", ["viewer", "responder"])
def test_a_forged_edit_without_oncall_write_is_refused(
    role: str, org: Org, client: Any, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in(role)
    browser.get(f"/app/escalation-policies/{world.policy_id}")
    answer = browser.post(f"/app/escalation-policies/{world.policy_id}", _edit(world, people, name="Hacked"))
    assert answer.status == 403
    assert _policy(org, client, world.policy_id)["version"] == 1


def test_the_edit_refuses_a_missing_or_wrong_csrf_token(
    org: Org, client: Any, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("owner")
    browser.get(f"/app/escalation-policies/{world.policy_id}")
    path = f"/app/escalation-policies/{world.policy_id}"
    assert browser.post(path, _edit(world, people, name="X"), csrf="-").status == 403
    assert browser.post(path, _edit(world, people, name="X"), csrf="bad").status == 403
    assert _policy(org, client, world.policy_id)["version"] == 1


def _new(people: dict[str, Person], world: World, **changes: Any) -> list[tuple[str, str]]:
    """The new-policy form as the page fills it (three blank rows), with two levels chosen."""
    fields: dict[str, Any] = {
        "rows": "3",
        "name": "Checkout escalation",
        "repeat_count": "0",
        "level_1_targets": [f"schedule:{world.schedule_id}"],
        "level_1_delay": "10",
        "level_2_targets": [f"user:{people['admin'].user_id}"],
        "level_2_delay": "20",
        "level_3_targets": [],
        "level_3_delay": "15",
    }
    fields.update(changes)
    items: list[tuple[str, str]] = []
    for name, value in fields.items():
        items.extend((name, v) for v in value) if isinstance(value, list) else items.append((name, value))
    return items


def test_the_new_policy_form_offers_schedules_and_only_people_who_can_respond(
    people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    form = signed_in("admin").get("/app/escalation-policies/new").dom()
    offered = {
        str(option.attrs.get("value")) for option in form.find("select", name="level_1_targets").find_all("option")
    }
    assert f"schedule:{world.schedule_id}" in offered
    assert {f"user:{people[role].user_id}" for role in ("owner", "admin", "responder")} <= offered
    assert f"user:{people['viewer'].user_id}" not in offered
    assert [fieldset.find("legend").text() for fieldset in form.find_all("fieldset")] == [
        "Level 1",
        "Level 2",
        "Level 3",
    ]


@pytest.mark.parametrize("role", ["owner", "admin"])
def test_owners_and_admins_create_a_policy(
    role: str, org: Org, client: Any, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in(role)
    browser.get("/app/escalation-policies/new")
    answer = browser.post("/app/escalation-policies", _new(people, world))
    assert answer.status == 303, answer.body[:800]
    shown = browser.follow(answer)
    assert "Escalation policy created." in shown.text()
    policy_id = answer.location.split("?")[0].rsplit("/", 1)[-1]
    saved = _policy(org, client, policy_id)
    assert (saved["name"], saved["repeat_count"], saved["version"]) == ("Checkout escalation", 0, 1)
    assert saved["levels"] == [
        {"level": 1, "targets": [{"kind": "schedule", "id": world.schedule_id}], "delay_minutes": 10},
        {"level": 2, "targets": [{"kind": "user", "id": people["admin"].user_id}], "delay_minutes": 20},
    ]


@pytest.mark.parametrize(
    ("changes", "field", "label"),
    [
        ({"name": ""}, "name", "Name"),
        ({"level_2_delay": "0"}, "level_2_delay", "Level 2: Minutes before the next level"),
        ({"level_2_targets": ["VIEWER"]}, "level_2_targets", "Level 2: Page"),
        ({"repeat_count": "12"}, "repeat_count", "Times to start over after the last level"),
    ],
)
def test_a_bad_new_policy_keeps_the_form_and_names_the_field_as_labelled(
    changes: dict[str, Any],
    field: str,
    label: str,
    org: Org,
    client: Any,
    people: dict[str, Person],
    world: World,
    signed_in: Callable[[str], ConsoleClient],
) -> None:
    browser = signed_in("owner")
    browser.get("/app/escalation-policies/new")
    sent = {k: ([f"user:{people['viewer'].user_id}"] if v == ["VIEWER"] else v) for k, v in changes.items()}
    answer = browser.post("/app/escalation-policies", _new(people, world, **sent))
    assert answer.status == 400, answer.body[:800]
    page = answer.dom()
    assert page.find(id=f"f-{field}").attrs.get("aria-invalid") == "true"
    # The label the error details carry (the layout lists problems by it) is the input's own label.
    assert page.find("label", **{"for": f"f-{field}"}).text() == label.split(": ")[-1]
    assert page.find_all("p", cls="field-error")
    assert "levels." not in page.text()  # no internal paths
    assert page.find("input", name="name").attrs.get("value") == sent.get("name", "Checkout escalation")
    assert [p.policy_id for p in policies.list_policies(organization_id=org.organization_id)] == [world.policy_id]


@pytest.mark.parametrize("role", ["viewer", "responder"])
def test_a_forged_create_or_delete_without_oncall_write_is_refused(
    role: str, org: Org, people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in(role)
    browser.get("/app/escalation-policies")
    assert browser.post("/app/escalation-policies", _new(people, world)).status == 403
    spare = policies.create_policy(
        organization_id=org.organization_id,
        name="Spare",
        levels=[Level((Target("schedule", world.schedule_id),), 5)],
        repeat_count=0,
        now=NOW,
    )
    assert browser.post(f"/app/escalation-policies/{spare.policy_id}/delete", CONFIRMED).status == 403
    assert len(policies.list_policies(organization_id=org.organization_id)) == 2


def test_deleting_a_policy_in_use_is_refused_naming_the_services(
    org: Org, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("admin")
    browser.get(f"/app/escalation-policies/{world.policy_id}")
    answer = browser.post(f"/app/escalation-policies/{world.policy_id}/delete", CONFIRMED)
    assert answer.status == 409, answer.body[:800]
    assert "Payments API" in answer.text()
    assert policies.get_policy(organization_id=org.organization_id, policy_id=world.policy_id).version == 1


def test_deleting_an_unused_policy_asks_first_then_deletes_it(
    org: Org, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    spare = policies.create_policy(
        organization_id=org.organization_id,
        name="Spare",
        levels=[Level((Target("schedule", world.schedule_id),), 5)],
        repeat_count=0,
        now=NOW,
    )
    browser = signed_in("owner")
    browser.get(f"/app/escalation-policies/{spare.policy_id}")
    asked = browser.post(f"/app/escalation-policies/{spare.policy_id}/delete")
    assert asked.status == 200
    assert "Delete this escalation policy?" in asked.text()
    assert len(policies.list_policies(organization_id=org.organization_id)) == 2
    answer = browser.post(f"/app/escalation-policies/{spare.policy_id}/delete", CONFIRMED)
    assert answer.status == 303
    assert "Escalation policy deleted." in browser.follow(answer).text()
    assert [p.policy_id for p in policies.list_policies(organization_id=org.organization_id)] == [world.policy_id]


def test_another_organizations_policy_is_404(
    people: dict[str, Person], world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    from tests.conftest import make_org

    other = make_org("Other")
    their_responder = create_user(
        organization_id=other.organization_id, name="Theirs", email="theirs@example.org", now=NOW, role="responder"
    )
    theirs = policies.create_policy(
        organization_id=other.organization_id,
        name="Theirs",
        levels=[Level((Target("user", their_responder.user_id),), 5)],
        repeat_count=0,
        now=NOW,
    )
    browser = signed_in("owner")
    assert browser.get(f"/app/escalation-policies/{theirs.policy_id}").status == 404
    browser.get("/app/escalation-policies")
    assert browser.post(f"/app/escalation-policies/{theirs.policy_id}/delete", CONFIRMED).status == 404
    assert policies.get_policy(organization_id=other.organization_id, policy_id=theirs.policy_id).version == 1
