"""The webhook-style channels on moto (Teams, Mattermost, ntfy, Discord, Google Chat): a method's
URL checked and sealed, verified by a code posted there, paged through a rule, retried, refused by
the outbound budget, and acted on from its page once, as its person."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.contact import service as contacts
from chalicelib.contact import verification as contact_verification
from chalicelib.contact.rules import Step
from chalicelib.contact.tables import ContactRecord, method_item_key, user_key
from chalicelib.delivery import targets
from chalicelib.delivery.http_post import Answer, from_response
from chalicelib.directory import users
from chalicelib.errors import Conflict, InvalidSignature, RateLimited, ValidationFailed
from chalicelib.escalation.steps import Level, Target
from chalicelib.incident import repository
from chalicelib.notification import email_links, hooks
from chalicelib.notification import verification as sender
from chalicelib.paging import escalation_runs, handlers, link_actions
from chalicelib.queue.messages import MAX_RECEIVE_COUNT, Message
from chalicelib.settings import Settings, get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.service.test_escalation_runtime import _UndelayedSqs, drain

TEAMS_URL = "https://acme.webhook.office.com/webhookb2/abc/IncomingWebhook/def/ghi-secret-tail"
NTFY_URL = "https://ntfy.sh/acme-pages-7Qx"


@dataclass
class FakeProviders:
    """Stands in for the network: every POST a hook channel makes, answered `status`."""

    posts: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200

    def __call__(self, url: str, body: bytes, headers: dict[str, str], allow_local: bool, settings: Settings) -> Answer:
        self.posts.append({"url": url, "body": json.loads(body), "headers": headers, "allow_local": allow_local})
        return from_response(self.status)


@pytest.fixture
def providers(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProviders]:
    fake = FakeProviders()
    monkeypatch.setattr(hooks, "poster", fake)
    monkeypatch.setattr(targets, "default_resolve", lambda host, port: ["93.184.216.34"])
    yield fake


@pytest.fixture
def sqs(aws_env: None) -> _UndelayedSqs:
    from chalicelib import aws
    from chalicelib.queue.messages import EVENTS_QUEUE

    aws.queue_url(EVENTS_QUEUE)
    undelayed = _UndelayedSqs(aws.client("sqs"))
    aws.set_client("sqs", undelayed)
    return undelayed


def _person(org: Org, role: str = "responder", email: str = "ada@acme.test") -> users.User:
    return users.create_user(organization_id=org.organization_id, name="Ada", email=email, role=role, now=NOW)


def _method(org: Org, user: users.User, kind: str, url: str, *, proven: bool = True, secret: str | None = None) -> Any:
    return contacts.create_method(
        organization_id=org.organization_id,
        user_id=user.user_id,
        method_type=kind,
        address=url,
        label=None,
        now=NOW,
        proven_elsewhere=proven,
        secret=secret,
        settings=get_settings(),
    )


# ------------------------------------------------------------------------------- the method


def test_a_webhook_method_is_sealed_hinted_and_unverified(org: Org, providers: FakeProviders) -> None:
    ada = _person(org)
    method = _method(org, ada, "teams", TEAMS_URL, proven=False)
    assert (method.type, method.verified, method.label) == ("teams", False, "Microsoft Teams")
    assert method.address == "https://acme.webhook.office.com/\u2026tail"
    stored = ContactRecord.get(
        user_key(org.organization_id, ada.user_id), method_item_key(method.contact_method_id), consistent_read=True
    )
    assert TEAMS_URL not in json.dumps(stored.attribute_values, default=str)  # sealed, never in clear
    assert method.destination(org.organization_id, ada.user_id, settings=get_settings()).url == TEAMS_URL
    with pytest.raises(Conflict):
        _method(org, ada, "teams", TEAMS_URL)
    # Same hint, another URL: not a duplicate (compared by the URL's HMAC).
    _method(org, ada, "teams", TEAMS_URL.replace("abc", "xyz"))


@pytest.mark.parametrize(
    ("kind", "url", "secret", "field_name", "words"),
    [
        ("teams", "http://acme.webhook.office.com/x", None, "address", "must use https"),
        ("discord", "https://discord.com:8443/api/webhooks/1/x", None, "address", "default https port"),
        ("mattermost", "https://user:pw@chat.acme.test/hooks/x", None, "address", "credentials"),
        ("ntfy", "https://ntfy.sh/bad topic!", None, "address", "URL characters"),
        ("ntfy", "https://ntfy.sh/topic?x=1", None, "address", "without a query"),
        ("ntfy", "https://ntfy.sh/" + "t" * 65, None, "address", "ntfy topic"),
        ("ntfy", NTFY_URL, "tok en", "secret", "access token"),
        ("google_chat", "https://chat.googleapis.com/v1/spaces/X/messages", "tk", "secret", "only ntfy"),
    ],
)
def test_bad_destinations_are_refused(
    org: Org, providers: FakeProviders, kind: str, url: str, secret: str | None, field_name: str, words: str
) -> None:
    with pytest.raises(ValidationFailed) as refused:
        _method(org, _person(org), kind, url, secret=secret)
    assert refused.value.details["fields"][0]["field"] == field_name
    assert words in refused.value.message


def test_a_private_address_is_refused(org: Org, providers: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(targets, "default_resolve", lambda host, port: ["10.0.0.7"])
    with pytest.raises(ValidationFailed) as refused:
        _method(org, _person(org), "mattermost", "https://chat.internal.test/hooks/abc")
    assert "not a public address" in refused.value.message


# ------------------------------------------------------------------------------- verification


def test_verification_posts_a_code_there_and_the_code_verifies(org: Org, providers: FakeProviders) -> None:
    ada = _person(org)
    drain()
    method = _method(org, ada, "ntfy", NTFY_URL, proven=False, secret="tk_secret")
    contact_verification.send_verification(
        organization_id=org.organization_id,
        user_id=ada.user_id,
        contact_method_id=method.contact_method_id,
        now=NOW,
        settings=get_settings(),
    )
    (message,) = [m for m in drain() if m.message_type == contact_verification.SEND_VERIFICATION]
    assert NTFY_URL not in json.dumps(message.payload) and "tk_secret" not in json.dumps(message.payload)
    with clock.frozen(NOW):
        sender.on_send_verification(message, get_settings())
    (post,) = providers.posts
    assert post["headers"][hooks.SENT_TO_HEADER] == "https://ntfy.sh"  # ntfy publishes at the server's root
    assert post["headers"]["Authorization"] == "Bearer tk_secret"
    assert post["body"]["topic"] == "acme-pages-7Qx"
    code = str(message.payload["code"])
    assert code in post["body"]["message"]
    verified = contact_verification.verify(
        organization_id=org.organization_id,
        user_id=ada.user_id,
        contact_method_id=method.contact_method_id,
        code=code,
        now=NOW + timedelta(seconds=30),
        settings=get_settings(),
    )
    assert verified.verified


def test_verification_codes_to_one_webhook_are_within_the_budget(org: Org, providers: FakeProviders) -> None:
    ada = _person(org)
    method = _method(org, ada, "discord", "https://discord.com/api/webhooks/1/tok", proven=False)
    for minute in range(3):
        contact_verification.send_verification(
            organization_id=org.organization_id,
            user_id=ada.user_id,
            contact_method_id=method.contact_method_id,
            now=NOW + timedelta(minutes=minute),
            settings=get_settings(),
        )
    with pytest.raises(RateLimited) as refused:
        contact_verification.send_verification(
            organization_id=org.organization_id,
            user_id=ada.user_id,
            contact_method_id=method.contact_method_id,
            now=NOW + timedelta(minutes=3),
            settings=get_settings(),
        )
    assert refused.value.details["limit"] == "verification_per_destination"


# ------------------------------------------------------------------------------- paging


@pytest.fixture
def paged(org: Org, providers: FakeProviders, sqs: _UndelayedSqs) -> dict[str, Any]:
    """Ada pages by ntfy and Teams at once for high urgency; level 1 of Checkout."""
    from chalicelib.catalog import service as services
    from chalicelib.escalation import service as policies

    ada = _person(org)
    ntfy = _method(org, ada, "ntfy", NTFY_URL)
    teams = _method(org, ada, "teams", TEAMS_URL)
    unverified = _method(org, ada, "discord", "https://discord.com/api/webhooks/9/x", proven=False)
    contacts.put_rules(
        organization_id=org.organization_id,
        user_id=ada.user_id,
        high=[Step(ntfy.contact_method_id, 0), Step(teams.contact_method_id, 0), Step(unverified.contact_method_id, 0)],
        low=[Step(teams.contact_method_id, 0)],
        now=NOW,
    )
    policy = policies.create_policy(
        organization_id=org.organization_id,
        name="Checkout",
        levels=[Level((Target("user", ada.user_id),), 30)],
        now=NOW,
    )
    service = services.create_service(
        organization_id=org.organization_id, name="Checkout", now=NOW, escalation_policy_id=policy.policy.policy_id
    )
    drain()
    return {"user": ada, "service": service, "providers": providers}


def _open(org: Org, setup: dict[str, Any], *, final: bool = True) -> tuple[str, list[Message]]:
    from chalicelib.incident import service

    with clock.frozen(NOW):
        record = service.create_incident(
            organization_id=org.organization_id,
            request=service.NewIncident(
                title="Checkout 500s", service_keys=[setup["service"].service_key], severity="SEV1"
            ),
            now=NOW,
            actor="tester",
            settings=get_settings(),
        )
        handlers.on_incident_created(next(m for m in drain() if m.message_type == "incident.created"), get_settings())
        pages = [m for m in drain() if m.message_type == escalation_runs.DELIVER_NOTIFICATION]
        for message in pages:
            count = MAX_RECEIVE_COUNT if final else 1
            handlers.on_deliver_notification(replace(message, receive_count=count), get_settings())
    return record.incident_number, pages


def _titles(org: Org, number: str) -> list[str]:
    return [str(e.title) for e in repository.get_with_timeline(org.organization_id, number).timeline]


def test_a_page_goes_out_by_ntfy_and_teams_with_signed_actions(org: Org, paged: dict[str, Any]) -> None:
    number, _ = _open(org, paged)
    posts = paged["providers"].posts
    assert [p["headers"][hooks.SENT_TO_HEADER] for p in posts] == ["https://ntfy.sh", TEAMS_URL]  # not the discord one
    assert all(
        p["allow_local"] and p["url"].endswith(("/local/channel-sink/ntfy", "/local/channel-sink/teams")) for p in posts
    )
    ntfy = posts[0]["body"]
    assert ntfy["priority"] == 5 and ntfy["topic"] == "acme-pages-7Qx" and number in ntfy["title"]
    taps = [a["url"] for a in ntfy["actions"] if a["action"] == "http"]
    assert len(taps) == 2 and all("/integrations/page-actions/c1." in url for url in taps)
    card = posts[1]["body"]["attachments"][0]["content"]
    assert card["type"] == "AdaptiveCard" and [a["title"] for a in card["actions"]][:3] == [
        "Acknowledge",
        "Resolve",
        "Escalate",
    ]
    assert any("Paged Ada by ntfy, Teams" in title for title in _titles(org, number))


def test_a_provider_failure_is_retried_then_recorded(org: Org, paged: dict[str, Any]) -> None:
    paged["providers"].status = 503
    with pytest.raises(Exception, match="retrying"):  # SQS delivers the page again
        _open(org, paged, final=False)
    assert len(paged["providers"].posts) == 2  # both tried; nothing recorded, the budget given back
    number, _ = _open(org, paged)  # a new incident, on its final receive: recorded as failed
    failed = [t for t in _titles(org, number) if "notification to Ada failed" in t]
    assert sorted(failed) == ["Teams notification to Ada failed", "ntfy notification to Ada failed"]
    descriptions = [
        str(e.description)
        for e in repository.get_with_timeline(org.organization_id, number).timeline
        if e.event_type == "notification_failed"
    ]
    assert all(d.startswith(("NTFY_UNAVAILABLE", "TEAMS_UNAVAILABLE")) and "HTTP 503" in d for d in descriptions)


def test_a_final_refusal_records_notification_failed_with_the_provider_answer(org: Org, paged: dict[str, Any]) -> None:
    paged["providers"].status = 404
    number, _ = _open(org, paged, final=False)  # a 404 is final: no retry
    failures = [
        e
        for e in repository.get_with_timeline(org.organization_id, number).timeline
        if e.event_type == "notification_failed"
    ]
    descriptions = sorted(str(e.description) for e in failures)
    assert descriptions[0].startswith("NTFY_REJECTED: ntfy refused it: HTTP 404")
    assert descriptions[1].startswith("TEAMS_REJECTED: Teams refused it: HTTP 404")
    assert all(TEAMS_URL not in d and NTFY_URL not in d for d in descriptions)


def test_past_the_page_burst_a_page_joins_the_digest(org: Org, paged: dict[str, Any]) -> None:
    reconfigure(BUDGET_PAGE_BURST_PER_PERSON="1")
    _open(org, paged)
    second, _ = _open(org, paged)
    assert len(paged["providers"].posts) == 2  # the second incident's page was not posted
    assert any("digest" in title for title in _titles(org, second))


# ------------------------------------------------------------------------------- acting


def _tap_link(paged: dict[str, Any], action: str) -> email_links.EmailLink:
    ntfy = paged["providers"].posts[0]["body"]
    url = next(a["url"] for a in ntfy["actions"] if a.get("label") == action)
    return link_actions.verify_link(
        url.rsplit("/", 1)[1], channels=link_actions.TAP_CHANNELS, now=NOW, settings=get_settings()
    )


def test_an_ntfy_tap_acknowledges_once_as_the_person(org: Org, paged: dict[str, Any]) -> None:
    number, _ = _open(org, paged)
    link = _tap_link(paged, "Acknowledge")
    outcome = link_actions.act(link, NOW + timedelta(minutes=1), settings=get_settings())
    assert outcome.done and outcome.message == f"{number} acknowledged by ada@acme.test."
    incident = repository.get_with_timeline(org.organization_id, number)
    assert incident.incident.acknowledged_by == "ada@acme.test"
    assert any(str(e.title).endswith("via ntfy") for e in incident.timeline)
    with pytest.raises(Conflict):
        link_actions.act(link, NOW + timedelta(minutes=2), settings=get_settings())


def test_a_viewer_is_told_they_cannot(org: Org, paged: dict[str, Any]) -> None:
    number, _ = _open(org, paged)
    link = _tap_link(paged, "Resolve")
    users.update_user(organization_id=org.organization_id, user_id=paged["user"].user_id, role="viewer", now=NOW)
    outcome = link_actions.act(link, NOW, settings=get_settings())
    assert not outcome.done and "can view incidents but not change them" in outcome.message
    after = repository.get_incident(org.organization_id, number)
    assert (after.status, after.resolved_at) == ("new", None)


def test_forged_expired_and_other_channel_links_are_refused(org: Org, paged: dict[str, Any]) -> None:
    _open(org, paged)
    url = next(a["url"] for a in paged["providers"].posts[0]["body"]["actions"] if a.get("label") == "Acknowledge")
    token = url.rsplit("/", 1)[1]
    with pytest.raises(InvalidSignature):
        link_actions.verify_link(
            token[:-2] + "xx", channels=link_actions.TAP_CHANNELS, now=NOW, settings=get_settings()
        )
    with pytest.raises(Exception, match="expired"):
        link_actions.verify_link(
            token, channels=link_actions.TAP_CHANNELS, now=NOW + timedelta(hours=25), settings=get_settings()
        )
    teams_url = paged["providers"].posts[1]["body"]["attachments"][0]["content"]["actions"][0]["url"]
    with pytest.raises(InvalidSignature):  # a Teams link acts only through its confirmation page
        link_actions.verify_link(
            teams_url.rsplit("/", 1)[1], channels=link_actions.TAP_CHANNELS, now=NOW, settings=get_settings()
        )


# ------------------------------------------------------------------------------- Pushover

PUSHOVER_KEY = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"


def test_a_pushover_emergency_keeps_its_receipt_and_its_callback_acknowledges_once(
    org: Org, providers: FakeProviders, sqs: _UndelayedSqs, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.catalog import service as services
    from chalicelib.escalation import service as policies

    def answer(url: str, body: bytes, headers: dict[str, str], allow_local: bool, settings: Settings) -> Answer:
        providers.posts.append({"url": url, "form": dict(urllib.parse.parse_qsl(body.decode())), "headers": headers})
        return from_response(200, "", b'{"status":1,"request":"r1","receipt":"rcpt-123"}')

    monkeypatch.setattr(hooks, "poster", answer)
    ada = _person(org)
    method = _method(org, ada, "pushover", PUSHOVER_KEY)
    assert method.address == "\u2026VRsG" and method.label == "Pushover"
    contacts.put_rules(
        organization_id=org.organization_id,
        user_id=ada.user_id,
        high=[Step(method.contact_method_id, 0)],
        low=[],
        now=NOW,
    )
    policy = policies.create_policy(
        organization_id=org.organization_id, name="P", levels=[Level((Target("user", ada.user_id),), 30)], now=NOW
    )
    service = services.create_service(
        organization_id=org.organization_id, name="Checkout", now=NOW, escalation_policy_id=policy.policy.policy_id
    )
    drain()
    number, _ = _open(org, {"service": service})
    (post,) = providers.posts
    form = post["form"]
    assert post["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    assert (form["user"], form["priority"], form["token"]) == (PUSHOVER_KEY, "2", "alocalpushoverapplicationtoken")
    token = form["callback"].rsplit("/", 1)[1]
    assert "/integrations/pushover/callback/c1." in form["callback"]
    with pytest.raises(InvalidSignature):
        link_actions.verify_pushover(token, {"receipt": "forged"}, now=NOW, settings=get_settings())
    link = link_actions.verify_pushover(
        token, {"receipt": "rcpt-123", "acknowledged": "1"}, now=NOW, settings=get_settings()
    )
    outcome = link_actions.act(link, NOW, settings=get_settings())
    assert outcome.done and outcome.message == f"{number} acknowledged by ada@acme.test."
    assert any(t.endswith("via Pushover") for t in _titles(org, number))
    assert any("Paged Ada by Pushover" in t for t in _titles(org, number))
    with pytest.raises(Conflict):
        link_actions.act(link, NOW, settings=get_settings())


def test_pushover_without_an_application_token_is_not_sent(org: Org, providers: FakeProviders) -> None:
    reconfigure(TOCSIN_STAGE="dev")
    try:
        result = hooks.HookChannel("pushover", settings=get_settings()).send_text(PUSHOVER_KEY, None, "t", "x")
    finally:
        reconfigure(TOCSIN_STAGE="test")
    assert (result.sent, result.error_code, result.provider_failure) == (False, "PUSHOVER_NOT_CONFIGURED", False)
    assert providers.posts == []


def test_a_refusal_carries_the_provider_s_own_words(providers: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> None:
    answer = from_response(400, "Bad Request", b'{"user":"invalid","errors":["user identifier is invalid"],"status":0}')
    result = hooks.result_of("pushover", answer)
    assert result.error_code == "PUSHOVER_REJECTED"
    assert result.message == (
        "Pushover refused it: HTTP 400 Bad Request (the receiver rejected the event): user identifier is invalid."
    )


# ------------------------------------------------------------------------------- notices, changes


def test_a_handoff_notice_reaches_a_webhook_method_by_its_id(org: Org, providers: FakeProviders) -> None:
    from chalicelib.notification.notices import Notice, send_notice

    ada = _person(org)
    method = _method(org, ada, "google_chat", "https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t")
    words = Notice(subject="You are on call", text="From Mon 09:00 to Mon 09:00 (UTC).", short_text="on call")
    result = send_notice(
        "google_chat",
        method.contact_method_id,
        words,
        organization_id=org.organization_id,
        user_id=ada.user_id,
        now=NOW,
        settings=get_settings(),
    )
    assert result.sent
    (post,) = providers.posts
    assert post["headers"][hooks.SENT_TO_HEADER].endswith("token=t")
    assert post["body"] == {"text": "*You are on call*\nFrom Mon 09:00 to Mon 09:00 (UTC)."}
    gone = send_notice(
        "google_chat",
        "no-such-method",
        words,
        organization_id=org.organization_id,
        user_id=ada.user_id,
        settings=get_settings(),
    )
    assert gone.missing_contact and len(providers.posts) == 1


def test_a_new_url_is_sealed_anew_and_unverified_again(org: Org, providers: FakeProviders) -> None:
    ada = _person(org)
    method = _method(org, ada, "mattermost", "https://chat.acme.test/hooks/first")
    assert method.verified
    relabelled = contacts.update_method(
        organization_id=org.organization_id,
        user_id=ada.user_id,
        contact_method_id=method.contact_method_id,
        now=NOW,
        label="Ops room",
        settings=get_settings(),
    )
    assert (relabelled.label, relabelled.verified) == ("Ops room", True)
    moved = contacts.update_method(
        organization_id=org.organization_id,
        user_id=ada.user_id,
        contact_method_id=method.contact_method_id,
        now=NOW,
        address="https://chat.acme.test/hooks/second",
        settings=get_settings(),
    )
    assert (moved.verified, moved.address) == (False, "https://chat.acme.test/\u2026cond")
    assert (
        moved.destination(org.organization_id, ada.user_id, settings=get_settings()).url
        == "https://chat.acme.test/hooks/second"
    )
    other = _method(org, ada, "mattermost", "https://chat.acme.test/hooks/third")
    with pytest.raises(Conflict):  # another method's URL: a duplicate
        contacts.update_method(
            organization_id=org.organization_id,
            user_id=ada.user_id,
            contact_method_id=other.contact_method_id,
            now=NOW,
            address="https://chat.acme.test/hooks/second",
            settings=get_settings(),
        )
