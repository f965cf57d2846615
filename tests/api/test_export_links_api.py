"""Signed download links: the same export without a bearer key, for this organization only, until
they expire; a changed, expired or foreign link is refused in the envelope."""

from __future__ import annotations

import urllib.parse
from datetime import timedelta
from typing import Any

from chalicelib import clock, signed_tokens
from chalicelib.exports import links
from chalicelib.settings import get_settings
from tests.api.test_exports_api import RANGE, SINCE, all_pages, error, export_path, get, next_path
from tests.api.test_exports_api import frozen_clock as frozen_clock
from tests.conftest import NOW, Org
from tests.kit import factories
from tests.kit.api import call


def make_link(client: Any, org: Org, kind: str = "incidents", **body: Any) -> Any:
    answer = call(client, "POST", f"/api/v1/exports/{kind}/links", org.owner_key, {**RANGE, **body})
    assert answer.status == 201, answer.body
    return answer.data


def link_path(url: str) -> str:
    parsed = urllib.parse.urlsplit(url)
    return parsed.path + (f"?{parsed.query}" if parsed.query else "")


def test_a_link_downloads_the_same_export_without_a_key_page_by_page(client: Any, org: Org) -> None:
    web, pay = factories.service(org, "Web"), factories.service(org, "Pay")
    for n in range(5):
        factories.incident(org, web if n % 2 else pay, title=f"Incident {n}", now=SINCE + timedelta(hours=n))
    made = make_link(client, org, service=web.service_key, expires_in_minutes=10)
    assert clock.parse(made["expires_at"]) == NOW + timedelta(minutes=10)
    assert (made["kind"], made["format"]) == ("incidents", "csv")
    by_link, _ = all_pages(client, link_path(made["url"]) + "?limit=1", None)
    by_api, _ = all_pages(client, export_path("incidents", service=web.service_key), org.owner_key)
    assert by_link == by_api and [row["title"] for row in by_link] == ["Incident 1", "Incident 3"]
    first = get(client, link_path(made["url"]) + "?limit=1", None)
    following = next_path(first)
    assert following is not None and following.startswith(link_path(made["url"]) + "?cursor=")

    ndjson = make_link(client, org, "alerts", format="ndjson")
    answer = get(client, link_path(ndjson["url"]), None)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/x-ndjson")


def test_an_expired_link_is_refused(client: Any, org: Org) -> None:
    made = make_link(client, org, expires_in_minutes=5)
    with clock.frozen(NOW + timedelta(minutes=4, seconds=59)):
        assert get(client, link_path(made["url"]), None).status_code == 200
    with clock.frozen(NOW + timedelta(minutes=5)):
        expired = get(client, link_path(made["url"]), None)
    assert expired.status_code == 403 and error(expired)["code"] == "FORBIDDEN"


def test_a_changed_or_foreign_link_is_refused(client: Any, org: Org) -> None:
    other = factories.organization("Other")
    factories.incident(other, title="Theirs", now=NOW - timedelta(hours=1))
    factories.incident(org, title="Ours", now=NOW - timedelta(hours=1))
    made = make_link(client, org)
    token = link_path(made["url"]).rsplit("/", 1)[1]
    version, body, signature = token.split(".")
    fields = signed_tokens.unb64(body).decode().split("\n")
    assert fields[0] == org.organization_id

    # The same fields naming the other organization, a later expiry, or a longer range: the
    # signature no longer matches, so the link is unknown.
    changes = {0: other.organization_id, 5: str(int(fields[5]) + 3600), 2: clock.isoformat(SINCE - timedelta(days=300))}
    for position, value in changes.items():
        forged_fields = [value if n == position else field for n, field in enumerate(fields)]
        forged = f"{version}.{signed_tokens.b64(chr(10).join(forged_fields).encode())}.{signature}"
        refused = get(client, f"/exports/{forged}", None)
        assert refused.status_code == 404 and error(refused)["code"] == "NOT_FOUND", position
    for bad in ("nothing", token[:-3], "e1." + token[3:], "d1..", "x" * 2000):
        assert get(client, f"/exports/{bad}", None).status_code == 404, bad

    # A link the other organization made exports its rows, never ours.
    theirs, _ = all_pages(client, link_path(make_link(client, other)["url"]), None)
    ours, _ = all_pages(client, link_path(made["url"]), None)
    assert [row["title"] for row in theirs] == ["Theirs"] and [row["title"] for row in ours] == ["Ours"]
    # An email link's signature (another purpose) is no export link.
    email_key = signed_tokens.purpose_key(b"tocsin email action links", secret=get_settings().api_key_hmac_secret)
    cross = signed_tokens.sign(links.VERSION, fields, email_key)
    assert get(client, f"/exports/{cross}", None).status_code == 404


def test_link_requests_are_checked_like_exports(client: Any, org: Org) -> None:
    base = "/api/v1/exports/incidents/links"
    too_long = {"since": RANGE["since"], "until": clock.isoformat(SINCE + timedelta(days=400))}
    for body, status in (
        (too_long, 400),
        ({**RANGE, "expires_in_minutes": 61}, 400),
        ({**RANGE, "channel": "sms"}, 400),
        ({"until": RANGE["until"]}, 400),
    ):
        assert call(client, "POST", base, org.owner_key, body).status == status, body
    assert call(client, "POST", "/api/v1/exports/nope/links", org.owner_key, RANGE).status == 404
    assert call(client, "POST", base, factories.api_key(org, "incidents:read"), RANGE).status == 403
    assert get(client, link_path(make_link(client, org)["url"]) + "?since=x", None).status_code == 400
