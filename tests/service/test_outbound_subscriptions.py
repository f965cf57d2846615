"""Webhook subscriptions on moto: create (secret sealed, shown once), validation that writes nothing,
the SSRF check with the stage's settings, updates without lost writes, rotation, deletion,
disabling after failed deliveries, and the delivery listing's cursor."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.delivery import targets
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.integration import admin
from chalicelib.outbound import subscriptions
from chalicelib.outbound.events import EVENT_TYPES
from chalicelib.outbound.subscriptions import (
    create_subscription,
    decode_cursor,
    disable_for_failures,
    encode_cursor,
    get_secret,
    list_deliveries,
    normalize_event_types,
    update_subscription,
)
from chalicelib.outbound.tables import WebhookDeliveryRecord, WebhookSubscriptionRecord
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org, reconfigure

URL = "https://93.184.216.34/hooks/tocsin"  # a public IP literal: no DNS in tests
LATER = NOW + timedelta(minutes=5)


def create(org: Org, **fields: Any) -> subscriptions.CreatedSubscription:
    values: dict[str, Any] = {"url": URL, "event_types": ["incident.triggered"], **fields}
    return create_subscription(organization_id=org.organization_id, now=NOW, **values, settings=get_settings())


def stored(org: Org, subscription_id: str) -> WebhookSubscriptionRecord:
    return WebhookSubscriptionRecord.get(org.organization_id, subscription_id, consistent_read=True)


def field_problems(error: pytest.ExceptionInfo[ValidationFailed]) -> list[tuple[str, str]]:
    return [(f["field"], f["message"]) for f in error.value.details["fields"]]  # type: ignore[index]


def resolving_to(*addresses: str) -> targets.Resolver:
    def resolve(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolve


# --- pure rules ------------------------------------------------------------------------------------


def test_event_types_are_known_names_deduplicated_in_canonical_order_or_the_wildcard() -> None:
    assert normalize_event_types(["incident.resolved", "incident.triggered", "incident.resolved"]) == [
        "incident.triggered",
        "incident.resolved",
    ]
    assert normalize_event_types(["*"]) == ["*"]
    assert normalize_event_types(["*", "*"]) == ["*"]
    assert normalize_event_types(list(reversed(EVENT_TYPES))) == list(EVENT_TYPES)


@pytest.mark.parametrize(
    ("values", "fields"),
    [
        ([], ["event_types"]),
        (["incident.exploded"], ["event_types.0"]),
        (["incident.triggered", "Incident.Resolved", "incident.*"], ["event_types.1", "event_types.2"]),
        (["*", "incident.triggered"], ["event_types"]),
        (["incident.triggered"] * 12, ["event_types"]),
    ],
)
def test_bad_event_types_name_the_offending_entries(values: list[str], fields: list[str]) -> None:
    with pytest.raises(ValidationFailed) as error:
        normalize_event_types(values)
    assert [field for field, _ in field_problems(error)] == fields


def test_cursor_round_trip_and_garbage() -> None:
    key = "2026-11-22T12:00:00.000Z#evt_0123"
    assert decode_cursor(encode_cursor(key)) == key
    assert "=" not in encode_cursor(key)
    for garbage in ("!!!", "bm90LWEta2V5", "////", "\u00e9"):
        with pytest.raises(ValidationFailed) as error:
            decode_cursor(garbage)
        assert [f for f, _ in field_problems(error)] == ["cursor"]


# --- create ----------------------------------------------------------------------------------------


def test_create_seals_the_secret_and_stores_the_subscription(org: Org) -> None:
    created = create(
        org,
        event_types=["incident.resolved", "incident.triggered"],
        description="  PagerDuty bridge  ",
        owner_email=" Ops@Example.COM ",
        created_by="owner (API key)",
    )
    record, secret = created.record, created.secret
    assert record.subscription_id.startswith("whs_") and len(record.subscription_id) == 36
    assert secret.startswith("whsec_") and len(secret) == len("whsec_") + 43
    saved = stored(org, record.subscription_id)
    assert secret not in saved.sealed_secret and get_secret(saved, settings=get_settings()) == secret
    assert saved.event_types == {"incident.triggered", "incident.resolved"}
    assert (saved.url, saved.description, saved.owner_email) == (URL, "PagerDuty bridge", "ops@example.com")
    assert (saved.enabled, saved.disabled_reason, saved.disabled_at) == (True, None, None)
    assert (saved.version, saved.created_at, saved.updated_at, saved.created_by) == (1, NOW, None, "owner (API key)")
    assert create(org).secret != secret  # every subscription gets its own


def test_created_disabled_is_disabled_by_hand(org: Org) -> None:
    record = create(org, enabled=False).record
    assert (record.enabled, record.disabled_reason, record.disabled_at) == (False, "manual", NOW)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"url": "http://93.184.216.34/x"}, "url"),
        ({"url": "https://127.0.0.1/x"}, "url"),
        ({"url": "https://[::1]/x"}, "url"),
        ({"event_types": []}, "event_types"),
        ({"event_types": ["incident.created"]}, "event_types.0"),
        ({"owner_email": "not-an-email"}, "owner_email"),
        ({"description": "d" * 1001}, "description"),
        ({"sync_integration_id": "00000000-0000-0000-0000-000000000000"}, "sync_integration_id"),
    ],
)
def test_invalid_creates_write_nothing(org: Org, fields: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationFailed) as error:
        create(org, **fields)
    assert [f for f, _ in field_problems(error)] == [field]
    assert subscriptions.list_subscriptions(organization_id=org.organization_id) == []


def test_a_name_is_resolved_and_refused_when_it_points_inside(org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    for inside in ("127.0.0.1", "169.254.169.254", "10.20.30.40", "fd00::1"):
        monkeypatch.setattr(targets, "default_resolve", resolving_to("93.184.216.34", inside))
        with pytest.raises(ValidationFailed) as error:
            create(org, url="https://hooks.example.com/x")
        assert error.value.details["fields"][0]["message"].startswith(  # type: ignore[index]
            f"the host hooks.example.com resolves to {inside}"
        )
    monkeypatch.setattr(targets, "default_resolve", resolving_to("93.184.216.34"))
    assert create(org, url="https://hooks.example.com/x").record.url == "https://hooks.example.com/x"


def test_only_the_local_stage_with_its_flag_may_target_plain_http_and_loopback(org: Org) -> None:
    sink = "http://127.0.0.1:8000/local/webhook-sink/demo"
    with pytest.raises(ValidationFailed):
        create(org, url=sink)  # the test stage is local, but the flag is off
    reconfigure(LOCAL_ALLOW_HTTP_WEBHOOKS="true")
    assert create(org, url=sink).record.url == sink
    reconfigure(TOCSIN_STAGE="dev", LOCAL_ALLOW_HTTP_WEBHOOKS="true")
    with pytest.raises(ValidationFailed):
        create(org, url=sink)  # the flag means nothing outside the local stage


def test_sync_integration_must_be_an_active_integration_of_the_organization(org: Org) -> None:
    own = admin.create_integration(
        organization_id=org.organization_id, integration_type="custom", name="tool", now=NOW, settings=get_settings()
    ).integration
    other = make_org("Other")
    foreign = admin.create_integration(
        organization_id=other.organization_id,
        integration_type="custom",
        name="theirs",
        now=NOW,
        settings=get_settings(),
    ).integration
    assert create(org, sync_integration_id=own.integration_id).record.sync_integration_id == own.integration_id
    with pytest.raises(ValidationFailed) as error:
        create(org, sync_integration_id=foreign.integration_id)
    assert field_problems(error) == [("sync_integration_id", "not an integration of this organization")]
    admin.revoke_integration(organization_id=org.organization_id, integration_id=own.integration_id, now=NOW)
    with pytest.raises(ValidationFailed) as error:
        create(org, sync_integration_id=own.integration_id)
    assert field_problems(error) == [("sync_integration_id", "the integration is revoked")]


def test_an_organization_has_at_most_fifty_subscriptions(org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subscriptions, "MAX_SUBSCRIPTIONS", 3)
    for _ in range(3):
        create(org)
    with pytest.raises(Conflict):
        create(org)
    assert len(subscriptions.list_subscriptions(organization_id=org.organization_id)) == 3
    assert create(make_org("Other")).record  # per organization


def test_list_is_newest_first_and_per_organization(org: Org) -> None:
    first = create(org).record
    second = create_subscription(
        organization_id=org.organization_id,
        url=URL,
        event_types=["*"],
        now=NOW + timedelta(seconds=1),
        settings=get_settings(),
    ).record
    create(make_org("Other"))
    listed = subscriptions.list_subscriptions(organization_id=org.organization_id)
    assert [r.subscription_id for r in listed] == [second.subscription_id, first.subscription_id]


# --- update ----------------------------------------------------------------------------------------


def test_update_changes_only_what_is_given_and_null_clears(org: Org) -> None:
    integration = admin.create_integration(
        organization_id=org.organization_id, integration_type="custom", name="tool", now=NOW, settings=get_settings()
    ).integration
    record = create(org, description="old", owner_email="a@example.com").record
    sid = record.subscription_id
    updated = update_subscription(
        organization_id=org.organization_id,
        subscription_id=sid,
        now=LATER,
        url="https://93.184.216.35/new",
        event_types=["incident.assigned", "incident.annotated"],
        sync_integration_id=integration.integration_id,
        settings=get_settings(),
    )
    assert (updated.url, updated.description, updated.owner_email) == (
        "https://93.184.216.35/new",
        "old",
        "a@example.com",
    )
    assert updated.event_types == {"incident.assigned", "incident.annotated"}
    assert (updated.sync_integration_id, updated.version, updated.updated_at) == (integration.integration_id, 2, LATER)
    cleared = update_subscription(
        organization_id=org.organization_id,
        subscription_id=sid,
        now=LATER,
        description=None,
        owner_email=None,
        sync_integration_id=None,
        settings=get_settings(),
    )
    assert (cleared.description, cleared.owner_email, cleared.sync_integration_id) == (None, None, None)
    assert stored(org, sid).version == 3 and get_secret(stored(org, sid), settings=get_settings()) == get_secret(
        record, settings=get_settings()
    )


def test_invalid_updates_change_nothing(org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = create(org).record.subscription_id
    monkeypatch.setattr(targets, "default_resolve", resolving_to("169.254.169.254"))
    for changes in (
        {"url": "https://metadata.example/"},
        {"url": "http://93.184.216.34/"},
        {"event_types": ["nope"]},
        {"owner_email": "nope"},
        {"sync_integration_id": "missing"},
    ):
        with pytest.raises(ValidationFailed):
            update_subscription(
                organization_id=org.organization_id, subscription_id=sid, now=LATER, **changes, settings=get_settings()
            )
    assert stored(org, sid).version == 1


def every_operation(organization_id: str, subscription_id: str) -> list[Callable[[], object]]:
    ids = {"organization_id": organization_id, "subscription_id": subscription_id}
    return [
        lambda: subscriptions.get_subscription(**ids),
        lambda: update_subscription(**ids, now=LATER, description="x", settings=get_settings()),
        lambda: subscriptions.rotate_secret(**ids, now=LATER, settings=get_settings()),
        lambda: subscriptions.delete_subscription(**ids),
        lambda: list_deliveries(**ids, now=NOW),
    ]


def test_unknown_and_foreign_subscriptions_are_not_found(org: Org) -> None:
    sid = create(org).record.subscription_id
    other = make_org("Other").organization_id
    for organization_id, subscription_id in ((other, sid), (org.organization_id, "whs_" + "0" * 32), (other, "nope")):
        for operation in every_operation(organization_id, subscription_id):
            with pytest.raises(NotFound):
                operation()
    assert stored(org, sid).version == 1


def test_disable_by_hand_and_enable_again(org: Org) -> None:
    sid = create(org).record.subscription_id
    disabled = update_subscription(
        organization_id=org.organization_id, subscription_id=sid, now=LATER, enabled=False, settings=get_settings()
    )
    assert (disabled.enabled, disabled.disabled_reason, disabled.disabled_at) == (False, "manual", LATER)
    again = update_subscription(
        organization_id=org.organization_id,
        subscription_id=sid,
        now=LATER + timedelta(hours=1),
        enabled=False,
        settings=get_settings(),
    )
    assert again.disabled_at == LATER  # disabling twice keeps the first time
    enabled = update_subscription(
        organization_id=org.organization_id, subscription_id=sid, now=LATER, enabled=True, settings=get_settings()
    )
    assert (enabled.enabled, enabled.disabled_reason, enabled.disabled_at) == (True, None, None)


def test_a_stale_version_is_a_conflict_and_writes_nothing(org: Org) -> None:
    sid = create(org).record.subscription_id
    update_subscription(
        organization_id=org.organization_id,
        subscription_id=sid,
        now=LATER,
        description="first",
        settings=get_settings(),
    )
    with pytest.raises(Conflict) as error:
        update_subscription(
            organization_id=org.organization_id,
            subscription_id=sid,
            now=LATER,
            expected_version=1,
            description="lost",
            settings=get_settings(),
        )
    assert error.value.details == {"expected_version": 1, "current_version": 2}
    assert stored(org, sid).description == "first"
    kept = update_subscription(
        organization_id=org.organization_id,
        subscription_id=sid,
        now=LATER,
        expected_version=2,
        description="second",
        settings=get_settings(),
    )
    assert (kept.description, kept.version) == ("second", 3)


def test_a_write_in_between_is_retried_not_lost(org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = create(org).record.subscription_id
    original = WebhookSubscriptionRecord.save
    interleaved: list[bool] = []

    def save(self: WebhookSubscriptionRecord, *args: Any, **kwargs: Any) -> Any:
        if not interleaved:
            interleaved.append(True)  # another writer changes the owner between our read and write
            update_subscription(
                organization_id=org.organization_id,
                subscription_id=sid,
                now=LATER,
                owner_email="b@example.com",
                settings=get_settings(),
            )
        return original(self, *args, **kwargs)

    monkeypatch.setattr(WebhookSubscriptionRecord, "save", save)
    mine = update_subscription(
        organization_id=org.organization_id, subscription_id=sid, now=LATER, description="d", settings=get_settings()
    )
    assert (mine.description, mine.owner_email, mine.version) == ("d", "b@example.com", 3)

    # With the version it read, the same interleaving is a 409 instead of a retry.
    interleaved.clear()
    with pytest.raises(Conflict):
        update_subscription(
            organization_id=org.organization_id,
            subscription_id=sid,
            now=LATER,
            expected_version=3,
            description="e",
            settings=get_settings(),
        )
    assert stored(org, sid).description == "d"


def test_racing_patches_of_different_fields_all_land(org: Org) -> None:
    sid = create(org).record.subscription_id
    changes: list[dict[str, Any]] = [
        {"description": "racing"},
        {"owner_email": "race@example.com"},
        {"url": "https://93.184.216.36/race"},
        {"event_types": ["*"]},
        {"enabled": False},
        {"sync_integration_id": None},
    ]
    barrier = threading.Barrier(len(changes))

    def patch(change: dict[str, Any]) -> WebhookSubscriptionRecord:
        barrier.wait()
        return update_subscription(
            organization_id=org.organization_id, subscription_id=sid, now=LATER, **change, settings=get_settings()
        )

    with ThreadPoolExecutor(max_workers=len(changes)) as pool:
        results = list(pool.map(patch, changes))
    assert sorted(r.version for r in results) == [2, 3, 4, 5, 6, 7]
    final = stored(org, sid)
    assert (final.description, final.owner_email, final.url) == (
        "racing",
        "race@example.com",
        "https://93.184.216.36/race",
    )
    assert (final.event_types, final.enabled, final.version) == ({"*"}, False, 7)


# --- rotate, delete --------------------------------------------------------------------------------


def test_rotate_replaces_the_secret(org: Org) -> None:
    created = create(org)
    sid = created.record.subscription_id
    rotated = subscriptions.rotate_secret(
        organization_id=org.organization_id, subscription_id=sid, now=LATER, settings=get_settings()
    )
    assert rotated.secret.startswith("whsec_") and rotated.secret != created.secret
    assert get_secret(stored(org, sid), settings=get_settings()) == rotated.secret
    assert (rotated.record.version, rotated.record.updated_at) == (2, LATER)


def test_delete(org: Org) -> None:
    sid = create(org).record.subscription_id
    subscriptions.delete_subscription(organization_id=org.organization_id, subscription_id=sid)
    assert subscriptions.list_subscriptions(organization_id=org.organization_id) == []
    with pytest.raises(NotFound):
        subscriptions.delete_subscription(organization_id=org.organization_id, subscription_id=sid)


# --- disabling after failed deliveries -------------------------------------------------------------


def test_disable_for_failures_disables_once(org: Org) -> None:
    sid = create(org).record.subscription_id
    disabled = disable_for_failures(org.organization_id, sid, LATER)
    assert disabled is not None
    assert (disabled.enabled, disabled.disabled_reason, disabled.disabled_at, disabled.version) == (
        False,
        "delivery_failures",
        LATER,
        2,
    )
    assert disable_for_failures(org.organization_id, sid, LATER) is None  # the owner hears once
    assert stored(org, sid).version == 2
    enabled = update_subscription(
        organization_id=org.organization_id, subscription_id=sid, now=LATER, enabled=True, settings=get_settings()
    )
    assert (enabled.enabled, enabled.disabled_reason, enabled.disabled_at) == (True, None, None)


def test_disable_for_failures_leaves_gone_and_hand_disabled_subscriptions_alone(org: Org) -> None:
    assert disable_for_failures(org.organization_id, "whs_" + "1" * 32, LATER) is None
    sid = create(org, enabled=False).record.subscription_id
    assert disable_for_failures(org.organization_id, sid, LATER) is None
    assert (stored(org, sid).disabled_reason, stored(org, sid).disabled_at) == ("manual", NOW)
    assert disable_for_failures(make_org("Other").organization_id, sid, LATER) is None


def test_disable_for_failures_survives_a_write_in_between(org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = create(org).record.subscription_id
    original = WebhookSubscriptionRecord.update
    interleaved: list[bool] = []

    def update(self: WebhookSubscriptionRecord, *args: Any, **kwargs: Any) -> Any:
        if not interleaved:
            interleaved.append(True)
            update_subscription(
                organization_id=org.organization_id,
                subscription_id=sid,
                now=LATER,
                description="x",
                settings=get_settings(),
            )
        return original(self, *args, **kwargs)

    monkeypatch.setattr(WebhookSubscriptionRecord, "update", update)
    disabled = disable_for_failures(org.organization_id, sid, LATER)
    assert disabled is not None and (disabled.description, disabled.enabled, disabled.version) == ("x", False, 3)


# --- deliveries ------------------------------------------------------------------------------------


def write_delivery(subscription_id: str, organization_id: str, minute: int, *, expired: bool = False) -> str:
    occurred = NOW - timedelta(days=31 if expired else 0, minutes=minute)
    key = f"{occurred.isoformat()}#evt_{minute:032x}"
    WebhookDeliveryRecord(
        subscription_id,
        key,
        organization_id=organization_id,
        event_id=f"evt_{minute:032x}",
        event_type="incident.triggered",
        body="{}",
        status="succeeded",
        attempts=1,
        created_at=occurred,
        expires_at=occurred + timedelta(days=30),
    ).save()
    return key


def test_deliveries_page_newest_first_across_cursors(org: Org) -> None:
    sid = create(org).record.subscription_id
    other_sid = create(org).record.subscription_id
    keys = [write_delivery(sid, org.organization_id, minute) for minute in range(23)]  # minute 0 is newest
    write_delivery(sid, org.organization_id, 99, expired=True)  # past its TTL: moto never removes it
    write_delivery(other_sid, org.organization_id, 100)
    pages: list[list[str]] = []
    cursor = None
    while True:
        page = list_deliveries(
            organization_id=org.organization_id, subscription_id=sid, now=NOW, limit=10, cursor=cursor
        )
        pages.append([record.delivery_key for record in page.items])
        cursor = page.next_cursor
        if cursor is None:
            break
    assert [len(p) for p in pages] == [10, 10, 3]
    assert [key for page in pages for key in page] == keys
    exact = list_deliveries(organization_id=org.organization_id, subscription_id=sid, now=NOW, limit=23)
    assert len(exact.items) == 23 and exact.next_cursor is None  # no empty last page
    empty = list_deliveries(
        organization_id=org.organization_id, subscription_id=create(org).record.subscription_id, now=NOW
    )
    assert (empty.items, empty.next_cursor) == ([], None)
