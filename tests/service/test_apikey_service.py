"""API key use cases on moto: create (shown once), list, revoke, authenticate, last-use stamps."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.apikey import keys
from chalicelib.apikey import service as apikeys
from chalicelib.apikey.tables import ApiKeyRecord
from chalicelib.errors import NotFound, Unauthorized, ValidationFailed
from chalicelib.organization.service import create_organization
from chalicelib.settings import get_settings
from tests.conftest import NOW, reconfigure

HMAC_SECRET = "test-hmac-secret"  # set by conftest


@pytest.fixture
def org_id(aws_env: None) -> str:
    return create_organization(name="Acme", now=NOW).organization_id


def create(org_id: str, **overrides: Any) -> tuple[apikeys.ApiKey, str]:
    arguments: dict[str, Any] = {
        "organization_id": org_id,
        "name": "ci",
        "kind": "service_account",
        "scopes": ["incidents:read"],
        "now": NOW,
    }
    arguments.update(overrides)
    return apikeys.create_api_key(**arguments, settings=get_settings())


def stored_items() -> list[dict[str, Any]]:
    from chalicelib import aws

    table = ApiKeyRecord.Meta.table_name
    items: list[dict[str, Any]] = aws.client("dynamodb").scan(TableName=table)["Items"]
    return items


@pytest.fixture
def update_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[Any]]]:
    """Every UpdateItem the key records issue, by the actions they carry."""
    calls: list[list[Any]] = []
    original = ApiKeyRecord.update

    def counting(self: ApiKeyRecord, actions: list[Any], **kwargs: Any) -> Any:
        calls.append(actions)
        return original(self, actions, **kwargs)

    monkeypatch.setattr(ApiKeyRecord, "update", counting)
    yield calls


def test_create_returns_the_key_once_and_stores_only_its_hmac(org_id: str) -> None:
    key, plaintext = create(org_id, scopes=["incidents:write", "incidents:read", "incidents:read"])
    assert keys.looks_like_key(plaintext)
    assert key.display_prefix == plaintext[:10]
    assert key.scopes == ["incidents:read", "incidents:write"]
    assert key.organization_id == org_id
    assert key.created_at == NOW
    assert key.revoked_at is None and key.last_used_at is None

    [item] = stored_items()
    stored_hash = item["key_hash"]["S"]
    assert stored_hash != plaintext
    assert stored_hash == hmac.new(HMAC_SECRET.encode(), plaintext.encode(), hashlib.sha256).hexdigest()
    # The full key is nowhere in the item.
    assert plaintext not in repr(item)
    assert item["display_prefix"]["S"] == plaintext[:10]


def test_listing_never_carries_the_key(org_id: str) -> None:
    _, plaintext = create(org_id)
    [listed] = apikeys.list_api_keys(organization_id=org_id)
    assert plaintext not in repr(listed)
    assert not hasattr(listed, "key")


def test_list_is_newest_first_and_per_organization(org_id: str) -> None:
    other = create_organization(name="Other", now=NOW).organization_id
    create(org_id, name="old", now=NOW)
    create(org_id, name="new", now=NOW + timedelta(minutes=5))
    create(other, name="theirs")
    assert [k.name for k in apikeys.list_api_keys(organization_id=org_id)] == ["new", "old"]
    assert [k.name for k in apikeys.list_api_keys(organization_id=other)] == ["theirs"]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"kind": "robot"}, "kind"),
        ({"scopes": ["incidents:read", "incidents:delete"]}, "scopes"),
        ({"kind": "personal"}, "user_id"),
    ],
)
def test_create_validates(org_id: str, overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        create(org_id, **overrides)
    assert caught.value.details is not None
    [problem] = caught.value.details["fields"]
    assert problem["field"] == field
    assert stored_items() == []


def test_personal_key_keeps_its_user_and_service_account_drops_it(org_id: str) -> None:
    personal, _ = create(org_id, kind="personal", user_id="user-1")
    service_account, _ = create(org_id, kind="service_account", user_id="user-1")
    assert personal.user_id == "user-1"
    assert service_account.user_id is None


def test_authenticate_resolves_the_principal(org_id: str) -> None:
    key, plaintext = create(org_id, kind="personal", user_id="user-1", scopes=["admin", "incidents:read"])
    principal = apikeys.authenticate_key(key=plaintext, now=NOW, settings=get_settings())
    assert principal.organization_id == org_id
    assert principal.credential_kind == "api_key"
    assert principal.key_id == key.key_id
    assert principal.key_kind == "personal"
    assert principal.user_id == "user-1"
    assert principal.scopes == frozenset({"admin", "incidents:read"})
    assert principal.rate_limit_category == "api_key"
    assert principal.rate_limit_identity == key.key_id


def test_unknown_and_malformed_keys_are_unauthorized(org_id: str) -> None:
    create(org_id)
    for credential in (keys.generate_key(), "tcs_short", "tcs_" + "!" * 40):
        with pytest.raises(Unauthorized):
            apikeys.authenticate_key(key=credential, now=NOW, settings=get_settings())


def test_revoke_is_immediate_and_keeps_the_first_time(org_id: str) -> None:
    key, plaintext = create(org_id)
    apikeys.authenticate_key(key=plaintext, now=NOW, settings=get_settings())
    revoked = apikeys.revoke_api_key(organization_id=org_id, key_id=key.key_id, now=NOW + timedelta(minutes=1))
    assert revoked.revoked_at == NOW + timedelta(minutes=1)
    with pytest.raises(Unauthorized):
        apikeys.authenticate_key(key=plaintext, now=NOW + timedelta(minutes=1), settings=get_settings())
    again = apikeys.revoke_api_key(organization_id=org_id, key_id=key.key_id, now=NOW + timedelta(hours=1))
    assert again.revoked_at == NOW + timedelta(minutes=1)
    assert apikeys.get_api_key(organization_id=org_id, key_id=key.key_id).revoked_at == NOW + timedelta(minutes=1)


def test_revoke_is_scoped_to_the_organization(org_id: str) -> None:
    other = create_organization(name="Other", now=NOW).organization_id
    key, plaintext = create(other)
    with pytest.raises(NotFound):
        apikeys.revoke_api_key(organization_id=org_id, key_id=key.key_id, now=NOW)
    with pytest.raises(NotFound):
        apikeys.revoke_api_key(organization_id=org_id, key_id="no-such-key", now=NOW)
    assert apikeys.authenticate_key(key=plaintext, now=NOW, settings=get_settings()).organization_id == other


def test_rotating_the_hmac_secret_invalidates_every_key(org_id: str) -> None:
    _, first = create(org_id)
    _, second = create(org_id, name="other")
    reconfigure(API_KEY_HMAC_SECRET="other")
    for plaintext in (first, second):
        with pytest.raises(Unauthorized):
            apikeys.authenticate_key(key=plaintext, now=NOW, settings=get_settings())
    # New keys work under the new secret.
    _, fresh = create(org_id, name="fresh")
    assert apikeys.authenticate_key(key=fresh, now=NOW, settings=get_settings()).organization_id == org_id


def test_last_used_is_stamped_once_per_resolution_window(org_id: str, update_calls: list[list[Any]]) -> None:
    key, plaintext = create(org_id)
    apikeys.authenticate_key(key=plaintext, now=NOW, settings=get_settings())
    assert len(update_calls) == 1
    for seconds in (1, 10, 60, 299):
        apikeys.authenticate_key(key=plaintext, now=NOW + timedelta(seconds=seconds), settings=get_settings())
    assert len(update_calls) == 1
    assert apikeys.get_api_key(organization_id=org_id, key_id=key.key_id).last_used_at == NOW

    apikeys.authenticate_key(key=plaintext, now=NOW + timedelta(seconds=301), settings=get_settings())
    assert len(update_calls) == 2
    assert apikeys.get_api_key(organization_id=org_id, key_id=key.key_id).last_used_at == NOW + timedelta(seconds=301)


def test_last_used_stamp_losing_a_race_is_harmless(org_id: str) -> None:
    key, plaintext = create(org_id)
    # Another instance stamped a later time after we read the record: our conditional write fails quietly.
    record = ApiKeyRecord.get(keys.hash_key(HMAC_SECRET, plaintext))
    record.update(actions=[ApiKeyRecord.last_used_at.set(NOW + timedelta(seconds=30))])
    stale = ApiKeyRecord.get(keys.hash_key(HMAC_SECRET, plaintext))
    stale.last_used_at = None
    apikeys._stamp_last_used(stale, NOW + timedelta(seconds=40), 300)
    assert apikeys.get_api_key(organization_id=org_id, key_id=key.key_id).last_used_at == NOW + timedelta(seconds=30)


def test_cache_when_enabled_still_honours_local_revocation(org_id: str) -> None:
    reconfigure(AUTH_CACHE_SECONDS="60")
    key, plaintext = create(org_id)
    apikeys.authenticate_key(key=plaintext, now=NOW, settings=get_settings())
    apikeys.revoke_api_key(organization_id=org_id, key_id=key.key_id, now=NOW)
    with pytest.raises(Unauthorized):
        apikeys.authenticate_key(key=plaintext, now=NOW, settings=get_settings())


def test_plaintext_key_can_be_supplied_for_demo_data(org_id: str) -> None:
    chosen = keys.derive_key("seed", "owner")
    _, plaintext = create(org_id, plaintext_key=chosen)
    assert plaintext == chosen
    assert apikeys.authenticate_key(key=chosen, now=NOW, settings=get_settings()).organization_id == org_id
    # The same key twice would share a hash: refused by the conditional write.
    with pytest.raises(Exception, match="ConditionalCheckFailed"):
        create(org_id, plaintext_key=chosen)
