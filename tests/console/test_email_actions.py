"""One-click links in a page email: opening one changes nothing; its form acts once, as the
recipient, for that incident only, within 24 hours; forged links are refused."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest

from chalicelib import clock
from chalicelib.incident import repository
from chalicelib.notification import email_links
from chalicelib.notification.channels import Recipient
from chalicelib.notification.email_ses import render
from chalicelib.notification.service import build_notification
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.console.conftest import ConsoleClient, Person
from tests.console.incident_data import World, incident_via_api, seed


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    clock.freeze(NOW)
    return seed(org, people)


def email_links_for(org: Org, person: Person, number: str) -> dict[str, str]:
    """The page email as SES would send it to `person`: its action links, by button label."""
    incident = repository.get_incident(org.organization_id, number)
    recipient = Recipient(person.user_id, person.name, person.email, None)
    email = render(
        build_notification(incident, "Look now", NOW, settings=get_settings()), recipient, NOW, settings=get_settings()
    )
    html_links = dict(re.findall(r'<a href="([^"]+/email-actions/[^"]+)"[^>]*>(\w+)</a>', email.html))
    by_label = {label: url for url, label in html_links.items()}
    assert f"Acknowledge: {by_label['Acknowledge']}" in email.text
    assert f"Resolve: {by_label['Resolve']}" in email.text
    return {label: urlsplit(url).path for label, url in by_label.items()}


def link_path(org: Org, person: Person, number: str, action: str, *, now: Any = NOW) -> str:
    link = email_links.new_link(
        organization_id=org.organization_id, user_id=person.user_id, incident_number=number, action=action, now=now
    )
    return "/app/email-actions/" + email_links.sign(link, settings=get_settings())


def titles(org: Org, number: str) -> list[str]:
    return [entry.title or "" for entry in repository.get_with_timeline(org.organization_id, number).timeline]


def test_opening_a_link_changes_nothing_its_form_acts_and_says_what_happened(
    client: Any, org: Org, people: dict[str, Person], world: World
) -> None:
    number = world.checkout_down
    links = email_links_for(org, people["responder"], number)
    browser = ConsoleClient(client.http)
    before = titles(org, number)
    for _ in range(3):  # a mail scanner, a link preview, the person
        shown = browser.get(links["Acknowledge"])
        assert shown.status == 200
    assert shown.dom().find("h1").text() == f"Acknowledge {number}?"
    assert "Checkout down" in shown.text() and "responder@acme.test" in shown.text()
    assert incident_via_api(client, org, number)["status"] == "new" and titles(org, number) == before

    acted = browser.post(links["Acknowledge"])
    assert acted.status == 303
    assert acted.location == f"{links['Acknowledge']}?done=email_acknowledge"  # the link's page, now its outcome
    outcome = browser.follow(acted)
    assert outcome.status == 200
    assert outcome.dom().find("h1").text() == f"{number} acknowledged"
    assert f"{number} acknowledged by Responder Person at" in outcome.text()
    assert "already been used" not in outcome.text()
    incident = incident_via_api(client, org, number)
    assert incident["acknowledged_at"] is not None and incident["assigned_to"]["email"] == "responder@acme.test"
    assert "Acknowledged by responder@acme.test via an email link" in " ".join(titles(org, number))

    resolved = browser.post(links["Resolve"])  # the other link of the same email still works once
    assert resolved.status == 303 and resolved.location.endswith("done=email_resolve")
    assert incident_via_api(client, org, number)["status"] == "resolved"


def test_a_link_works_once(client: Any, org: Org, people: dict[str, Person], world: World) -> None:
    path = link_path(org, people["responder"], world.checkout_down, "acknowledge")
    browser = ConsoleClient(client.http)
    browser.get(path)
    assert browser.post(path).status == 303
    after = titles(org, world.checkout_down)
    again = browser.post(path)
    assert again.status == 409 and "already been used" in again.text()
    reopened = browser.get(path)  # a spent link's page says what happened, and that it was used
    assert reopened.status == 200 and "already been used" in reopened.text()
    assert reopened.dom().find("h1").text() == f"{world.checkout_down} acknowledged"
    assert [form for form in reopened.dom().find_all("form") if form.attrs.get("method") == "post"] == []
    assert titles(org, world.checkout_down) == after


def test_an_expired_link_shows_and_does_nothing(client: Any, org: Org, people: dict[str, Person], world: World) -> None:
    path = link_path(org, people["responder"], world.checkout_down, "resolve", now=NOW - timedelta(hours=24))
    browser = ConsoleClient(client.http)
    shown = browser.get(path)
    assert shown.status == 409 and "expired" in shown.text()
    browser.get("/app/sign-in")  # the refusal page has no form: take a CSRF token from another
    acted = browser.post(path)
    assert acted.status == 409 and "expired" in acted.text()
    assert incident_via_api(client, org, world.checkout_down)["status"] == "new"


def test_a_link_acts_only_on_its_own_incident_and_cannot_be_rebound(
    client: Any, org: Org, people: dict[str, Person], world: World
) -> None:
    path = link_path(org, people["responder"], world.search_slow, "resolve")
    version, body, signature = path.rsplit("/", 1)[1].split(".")
    other = link_path(org, people["responder"], world.checkout_down, "resolve")
    _, other_body, _ = other.rsplit("/", 1)[1].split(".")
    browser = ConsoleClient(client.http)
    browser.get("/app/sign-in")  # a pre-session and its CSRF token, as a forger would have
    for forged in (f"{version}.{other_body}.{signature}", f"{version}.{body}.{signature[:-2]}xx", "e1.x.y"):
        assert browser.get("/app/email-actions/" + forged).status == 404
        refused = browser.post("/app/email-actions/" + forged)
        assert refused.status == 404 and "not valid" in refused.text()
    assert incident_via_api(client, org, world.checkout_down)["status"] == "new"
    assert incident_via_api(client, org, world.search_slow)["status"] == "new"

    browser.get(path)
    assert browser.post(path).status == 303
    assert incident_via_api(client, org, world.search_slow)["status"] == "resolved"
    assert incident_via_api(client, org, world.checkout_down)["status"] == "new"


def test_the_form_needs_its_csrf_token_and_a_refused_post_spends_nothing(
    client: Any, org: Org, people: dict[str, Person], world: World
) -> None:
    path = link_path(org, people["responder"], world.checkout_down, "acknowledge")
    browser = ConsoleClient(client.http)
    browser.get(path)
    assert browser.post(path, csrf="-").status == 403
    assert browser.post(path, csrf="wrong").status == 403
    assert incident_via_api(client, org, world.checkout_down)["status"] == "new"
    assert browser.post(path).status == 303


def test_a_viewer_link_is_refused_with_the_reason(
    client: Any, org: Org, people: dict[str, Person], world: World
) -> None:
    path = link_path(org, people["viewer"], world.checkout_down, "acknowledge")
    browser = ConsoleClient(client.http)
    browser.get(path)
    answer = browser.post(path)
    assert answer.status == 409 and "can view incidents but not change them" in answer.text()
    assert incident_via_api(client, org, world.checkout_down)["status"] == "new"


def test_a_link_of_someone_removed_from_the_directory_is_refused(
    client: Any, org: Org, people: dict[str, Person], world: World
) -> None:
    ghost = Person("usr_gone", "gone@acme.test", "responder", "Gone")
    path = link_path(org, ghost, world.checkout_down, "acknowledge")
    browser = ConsoleClient(client.http)
    shown = browser.get(path)
    assert shown.status == 409 and "no longer in the organization" in shown.text()
    browser.get("/app/sign-in")
    assert browser.post(path).status == 409
    assert incident_via_api(client, org, world.checkout_down)["status"] == "new"


def test_racing_claims_have_one_winner(org: Org, people: dict[str, Person], world: World) -> None:
    link = email_links.new_link(
        organization_id=org.organization_id,
        user_id=people["responder"].user_id,
        incident_number=world.checkout_down,
        action="acknowledge",
        now=NOW,
    )
    assert not email_links.is_claimed(link)
    assert [email_links.claim(link) for _ in range(3)] == [True, False, False]
    assert email_links.is_claimed(link)


def test_the_pages_have_the_structure_assistive_technology_needs(
    client: Any, org: Org, people: dict[str, Person], world: World
) -> None:
    from tests.console.test_accessibility import _problems

    path = link_path(org, people["responder"], world.checkout_down, "acknowledge")
    browser = ConsoleClient(client.http)
    confirm = browser.get(path)
    browser.post(path)
    for answer in (confirm, browser.get(path), browser.get("/app/email-actions/e1.x.y")):
        assert [p for p in _problems(answer.dom()) if p != "no <nav>"] == []  # no menu: not signed in


def test_a_failure_while_acting_gives_the_link_back(
    client: Any, org: Org, people: dict[str, Person], world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.console.pages import email_actions

    def broken(**_: Any) -> Any:
        raise RuntimeError("the store went away")

    path = link_path(org, people["responder"], world.checkout_down, "acknowledge")
    browser = ConsoleClient(client.http)
    browser.get(path)
    with monkeypatch.context() as patched:
        patched.setattr(email_actions, "respond", broken)
        assert browser.post(path).status == 500
    assert incident_via_api(client, org, world.checkout_down)["acknowledged_at"] is None
    assert browser.get(path).status == 200  # not spent
    assert browser.post(path).status == 303
    assert incident_via_api(client, org, world.checkout_down)["acknowledged_at"] is not None


def test_the_outcome_page_needs_no_sign_in_and_shows_the_recipients_time(
    client: Any, org: Org, people: dict[str, Person], world: World
) -> None:
    from chalicelib.directory.users import update_user

    update_user(
        organization_id=org.organization_id, user_id=people["responder"].user_id, now=NOW, time_zone="Europe/Berlin"
    )
    number = world.checkout_down
    path = link_path(org, people["responder"], number, "acknowledge")
    browser = ConsoleClient(client.http)  # signed out, as on a phone at 3 am
    browser.get(path)
    outcome = browser.follow(browser.post(path))
    assert outcome.status == 200 and outcome.dom().find("h1").text() == f"{number} acknowledged"
    # NOW is 12:00 UTC: 13:00 in Berlin, the recipient's zone, named.
    assert f"{number} acknowledged by Responder Person at 22 Nov 2026, 13:00 CET." in outcome.text()
    assert "Acknowledged from your email link." in outcome.text()
    (onward,) = [a for a in outcome.dom().find("main").find_all("a") if "Sign in to open" in a.text()]
    assert onward.attrs["href"] == f"/app/sign-in?next=%2Fapp%2Fincidents%2F{number}"
    assert [f for f in outcome.dom().find_all("form") if f.attrs.get("method") == "post"] == []


def test_a_signed_in_browser_is_sent_straight_to_the_incident(
    signed_in: Any, org: Org, people: dict[str, Person], world: World
) -> None:
    number = world.search_slow
    path = link_path(org, people["responder"], number, "resolve")
    browser = signed_in("responder")
    browser.get(path)
    outcome = browser.follow(browser.post(path))
    assert outcome.dom().find("h1").text() == f"{number} resolved"
    assert "resolved by Responder Person at" in outcome.text()
    (onward,) = [a for a in outcome.dom().find("main").find_all("a") if a.text() == f"Open {number}"]
    assert onward.attrs["href"] == f"/app/incidents/{number}"


def test_a_refused_link_says_nothing_changed_and_how_the_incident_stands(
    client: Any, org: Org, people: dict[str, Person], world: World
) -> None:
    path = link_path(org, people["viewer"], world.checkout_down, "acknowledge")
    browser = ConsoleClient(client.http)
    browser.get(path)
    answer = browser.post(path)
    assert answer.status == 409 and answer.dom().find("h1").text() == "Nothing changed"
    assert f"{world.checkout_down} is new." in answer.text()
    later = browser.get(path)
    assert later.status == 200 and later.dom().find("h1").text() == f"{world.checkout_down} is new"
    assert "already been used" in later.text()
