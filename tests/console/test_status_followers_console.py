"""The console's followers page of a status page: counts, the list (email or webhook, what each
follows, status, since when), filters, paging, and Remove; per role, read back through the API."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.settings import get_settings
from chalicelib.subscriber.tables import CONFIRMED, EMAIL, PENDING, WEBHOOK, SubscriberItem, subscriber_key
from tests.conftest import NOW, Org
from tests.console.conftest import CONFIRMED as SURE
from tests.console.conftest import ROLES, ConsoleClient, action_forms
from tests.console.test_status_pages import StatusPage, api, status_page  # noqa: F401


def follower(
    org: Org,
    page: StatusPage,
    number: int,
    *,
    url: str | None = None,
    components: list[str] | None = None,
    status: str = CONFIRMED,
) -> str:
    """A subscriber as the subscribe flow leaves it (its guard is the flow's business, not this page's)."""
    subscriber_id = f"sub_{number:024x}"
    SubscriberItem(
        page.page_id,
        subscriber_key(subscriber_id),
        subscriber_id=subscriber_id,
        organization_id=org.organization_id,
        kind=WEBHOOK if url else EMAIL,
        email=f"person{number}@example.com",
        url=url,
        component_ids=components or [],
        status=status,
        created_at=NOW - timedelta(days=2),
        confirmed_at=NOW - timedelta(days=1) if status == CONFIRMED else None,
        expires_at=NOW + timedelta(days=1) if status == PENDING else None,
    ).save()
    return subscriber_id


@pytest.fixture
def followers(org: Org, status_page: StatusPage) -> list[str]:  # noqa: F811
    return [
        follower(org, status_page, 1),
        follower(org, status_page, 2, components=[status_page.api_id], status=PENDING),
        follower(org, status_page, 3, url="https://hooks.example.com/acme", components=[status_page.web_id]),
    ]


def listed(client: Any, org: Org, page: StatusPage) -> list[str]:
    return [s["id"] for s in api(client, org, f"/api/v1/status-pages/{page.page_id}/subscribers")["items"]]


@pytest.mark.parametrize("role", ROLES)
def test_the_followers_page_renders_for_every_role(
    role: str,
    signed_in: Callable[[str], ConsoleClient],
    status_page: StatusPage,  # noqa: F811
    followers: list[str],
) -> None:
    browser = signed_in(role)
    answer = browser.get(f"{status_page.path}/subscribers")
    assert answer.status == 200
    dom = answer.dom()
    assert dom.find("h1").text() == "Followers"
    counts = dict(zip([d.text() for d in dom.find_all("dt")], [d.text() for d in dom.find_all("dd")], strict=True))
    assert counts["Confirmed"] == "2" and counts["Pending"].startswith("1 ")
    assert (counts["By email"], counts["By webhook"]) == ("2", "1")
    rows = [[td.text() for td in tr.find_all("td")][:4] for tr in dom.find("tbody").find_all("tr")]
    assert rows[0] == ["person1@example.com", "The whole page", "confirmed", "21 Nov 2026, 12:00 UTC"]
    assert rows[1] == ["person2@example.com", "API", "pending", "20 Nov 2026, 12:00 UTC"]
    assert rows[2][0] == "Webhook https://hooks.example.com/acme · failures told to person3@example.com"
    assert rows[2][1] == "Web"
    assert "Showing 1\u20133 of 3, oldest first." in answer.text()
    forms = action_forms(answer)
    if role == "viewer":
        assert forms == []
    else:
        assert forms == [f"{status_page.path}/subscribers/{s}/remove" for s in followers]
    page = browser.get(status_page.path).dom()
    link = page.find("a", href=f"{status_page.path}/subscribers")
    assert link.text() == "Followers (2 confirmed, 1 pending)"


def test_filters_narrow_the_list(as_owner: ConsoleClient, status_page: StatusPage, followers: list[str]) -> None:  # noqa: F811
    def shown(query: str) -> list[str]:
        dom = as_owner.get(f"{status_page.path}/subscribers{query}").dom()
        return [tr.find_all("td")[0].text() for tr in dom.find_all("tr") if tr.find_all("td")]

    assert shown("?status=pending") == ["person2@example.com"]
    assert len(shown("?kind=webhook")) == 1 and shown("?kind=webhook")[0].startswith("Webhook ")
    assert shown("?status=confirmed&kind=email") == ["person1@example.com"]
    assert len(shown("?status=nonsense&offset=x")) == 3  # an unknown filter is no filter
    empty = as_owner.get(f"{status_page.path}/subscribers?status=pending&kind=webhook")
    assert "No followers match these filters." in empty.text()


def test_many_followers_are_shown_a_hundred_at_a_time(
    as_owner: ConsoleClient,
    org: Org,
    status_page: StatusPage,  # noqa: F811
) -> None:
    for number in range(1, 131):
        follower(org, status_page, number)
    first = as_owner.get(f"{status_page.path}/subscribers")
    assert "Showing 1\u2013100 of 130" in first.text()
    assert len(first.dom().find("tbody").find_all("tr")) == 100
    pager = first.dom().find("nav", cls="pager")
    next_link = pager.find("a").attrs.get("href")
    assert next_link == f"{status_page.path}/subscribers?offset=100"
    second = as_owner.get(str(next_link))
    assert "Showing 101\u2013130 of 130" in second.text()
    assert [a.text() for a in second.dom().find("nav", cls="pager").find_all("a")] == ["Previous"]


def test_an_empty_followers_page_points_to_the_public_page(
    as_owner: ConsoleClient,
    status_page: StatusPage,  # noqa: F811
) -> None:
    from chalicelib.statuspage.pages import public_url

    answer = as_owner.get(f"{status_page.path}/subscribers")
    assert "No one follows this page yet. People subscribe on the public page:" in answer.text()
    assert answer.dom().find("main").find("a", href=public_url("acme", settings=get_settings())).text() == public_url(
        "acme", settings=get_settings()
    )
    assert answer.dom().find_all("form", method="get") == []  # nothing to filter


def test_a_responder_removes_a_follower_after_confirming(
    signed_in: Callable[[str], ConsoleClient],
    client: Any,
    org: Org,
    status_page: StatusPage,  # noqa: F811
    followers: list[str],
) -> None:
    browser = signed_in("responder")
    browser.get(f"{status_page.path}/subscribers")
    path = f"{status_page.path}/subscribers/{followers[0]}/remove"
    asked = browser.post(path)
    assert asked.status == 200 and "Remove this follower?" in asked.text()
    assert followers[0] in listed(client, org, status_page)
    removed = browser.post(path, SURE)
    assert removed.status == 303
    assert "Follower removed." in browser.follow(removed).text()
    assert listed(client, org, status_page) == followers[1:]
    again = browser.post(path, SURE)
    assert again.status == 404 and "Subscriber not found." in again.text()
    assert browser.post(f"{status_page.path}/subscribers/nonsense/remove", SURE).status == 404


def test_a_viewers_forged_removal_and_a_bad_csrf_token_change_nothing(
    signed_in: Callable[[str], ConsoleClient],
    client: Any,
    org: Org,
    status_page: StatusPage,  # noqa: F811
    followers: list[str],
) -> None:
    viewer = signed_in("viewer")
    viewer.get(f"{status_page.path}/subscribers")
    path = f"{status_page.path}/subscribers/{followers[0]}/remove"
    assert viewer.post(path, SURE).status == 403
    owner = signed_in("owner")
    owner.get(f"{status_page.path}/subscribers")
    assert owner.post(path, SURE, csrf="-").status == 403
    assert owner.post(path, SURE, csrf="bad").status == 403
    assert listed(client, org, status_page) == followers


def test_another_organizations_followers_are_404(
    signed_in: Callable[[str], ConsoleClient],
    client: Any,
    org: Org,
    status_page: StatusPage,  # noqa: F811
    followers: list[str],
) -> None:
    from chalicelib.statuspage import pages
    from tests.conftest import make_org

    other = pages.create_page(organization_id=make_org("Other").organization_id, name="Theirs", slug="theirs", now=NOW)
    owner = signed_in("owner")
    assert owner.get(f"/app/status-pages/{other.page_id}/subscribers").status == 404
    owner.get(f"{status_page.path}/subscribers")
    assert owner.post(f"/app/status-pages/{other.page_id}/subscribers/{followers[0]}/remove", SURE).status == 404
    assert listed(client, org, status_page) == followers
