"""API keys: create (shown once), list, revoke, and resolve a presented key to a Principal."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from pynamodb.exceptions import DoesNotExist

from chalicelib.apikey import keys
from chalicelib.apikey.tables import ApiKeyRecord
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import unknown_scopes
from chalicelib.errors import NotFound, Unauthorized, ValidationFailed
from chalicelib.settings import Settings
from chalicelib.store import best_effort, update_if

KEY_KINDS = ("personal", "service_account")


@dataclass(frozen=True)
class ApiKey:
    key_id: str
    organization_id: str
    name: str
    kind: str
    scopes: list[str]
    user_id: str | None
    display_prefix: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


def _to_domain(record: ApiKeyRecord) -> ApiKey:
    return ApiKey(
        key_id=record.key_id,
        organization_id=record.organization_id,
        name=record.name,
        kind=record.kind,
        scopes=[str(scope) for scope in record.scopes],
        user_id=record.user_id,
        display_prefix=record.display_prefix,
        created_at=record.created_at,
        revoked_at=record.revoked_at,
        last_used_at=record.last_used_at,
    )


def create_api_key(
    *,
    organization_id: str,
    name: str,
    kind: str,
    scopes: list[str],
    now: datetime,
    user_id: str | None = None,
    user_email: str | None = None,
    user_name: str | None = None,
    created_by: str | None = None,
    plaintext_key: str | None = None,
    settings: Settings,
) -> tuple[ApiKey, str]:
    """Returns the key record and the full key; the full key is never retrievable again."""
    if kind not in KEY_KINDS:
        raise ValidationFailed.for_field("kind", f"must be one of {', '.join(KEY_KINDS)}")
    unknown = unknown_scopes(scopes)
    if unknown:
        raise ValidationFailed.for_field("scopes", f"unknown scopes: {', '.join(unknown)}")
    if kind == "personal" and not user_id:
        raise ValidationFailed.for_field("user_id", "a personal key belongs to a user")
    key = plaintext_key or keys.generate_key()
    record = ApiKeyRecord(
        keys.hash_key(settings.api_key_hmac_secret, key),
        key_id=str(uuid.uuid4()),
        organization_id=organization_id,
        name=name,
        kind=kind,
        scopes=sorted(set(scopes)),
        user_id=user_id if kind == "personal" else None,
        user_email=user_email if kind == "personal" else None,
        user_name=user_name if kind == "personal" else None,
        display_prefix=keys.display_prefix(key),
        created_at=now,
        created_by=created_by,
    )
    record.save(condition=ApiKeyRecord.key_hash.does_not_exist())
    return _to_domain(record), key


def list_api_keys(*, organization_id: str) -> list[ApiKey]:
    found = [_to_domain(r) for r in ApiKeyRecord.by_organization.query(organization_id)]
    return sorted(found, key=lambda k: k.created_at, reverse=True)


def _record_by_id(organization_id: str, key_id: str) -> ApiKeyRecord:
    for record in ApiKeyRecord.by_organization.query(organization_id, ApiKeyRecord.key_id == key_id):
        return record
    raise NotFound("API key not found.")


def get_api_key(*, organization_id: str, key_id: str) -> ApiKey:
    return _to_domain(_record_by_id(organization_id, key_id))


def revoke_api_key(*, organization_id: str, key_id: str, now: datetime) -> ApiKey:
    """Revoking twice keeps the first revocation time; the key answers 401 from now on."""
    record = _record_by_id(organization_id, key_id)
    revoke = [ApiKeyRecord.revoked_at.set(now)]
    if record.revoked_at is None and not update_if(record, revoke, ApiKeyRecord.revoked_at.does_not_exist()):
        record.refresh(consistent_read=True)  # revoked in the meantime: report that first time
    _cache.forget(record.key_hash)
    return _to_domain(record)


def revoke_keys_of_user(*, organization_id: str, user_id: str, now: datetime) -> int:
    """Revoke every active personal key of a user (when the user is deactivated)."""
    revoked = 0
    for key in list_api_keys(organization_id=organization_id):
        if key.user_id == user_id and key.revoked_at is None:
            revoke_api_key(organization_id=organization_id, key_id=key.key_id, now=now)
            revoked += 1
    return revoked


class _KeyCache:
    """A short in-process cache of verified keys (off by default; see Settings.auth_cache_seconds)."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, ApiKeyRecord]] = {}
        self._lock = threading.Lock()

    def get(self, key_hash: str) -> ApiKeyRecord | None:
        entry = self._entries.get(key_hash)
        if entry is None or entry[0] < time.monotonic():
            return None
        return entry[1]

    def put(self, key_hash: str, record: ApiKeyRecord, ttl: float) -> None:
        with self._lock:
            if len(self._entries) > 10_000:
                self._entries.clear()
            self._entries[key_hash] = (time.monotonic() + ttl, record)

    def forget(self, key_hash: str) -> None:
        with self._lock:
            self._entries.pop(key_hash, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_cache = _KeyCache()


def clear_cache() -> None:
    _cache.clear()


def authenticate_key(*, key: str, now: datetime, settings: Settings) -> Principal:
    if not keys.looks_like_key(key):
        raise Unauthorized("The API key is malformed.")
    computed = keys.hash_key(settings.api_key_hmac_secret, key)
    record = _cache.get(computed) if settings.auth_cache_seconds > 0 else None
    if record is None:
        try:
            record = ApiKeyRecord.get(computed)
        except DoesNotExist:
            raise Unauthorized("The API key is invalid or revoked.") from None
        if settings.auth_cache_seconds > 0:
            _cache.put(computed, record, settings.auth_cache_seconds)
    if not keys.hashes_match(record.key_hash, computed) or record.revoked_at is not None:
        raise Unauthorized("The API key is invalid or revoked.")
    _stamp_last_used(record, now, settings.api_key_last_used_resolution_seconds)
    return Principal(
        organization_id=record.organization_id,
        credential_kind="api_key",
        scopes=frozenset(str(scope) for scope in record.scopes),
        user_id=record.user_id,
        key_id=record.key_id,
        key_kind=record.kind,
        display_name=record.user_email or f"{record.name} (API key)",
        email=record.user_email,
        name=record.user_name,
    )


def _stamp_last_used(record: ApiKeyRecord, now: datetime, resolution_seconds: int) -> None:
    """Record last use at most once per resolution window, so requests do not each pay a write."""
    threshold = now - timedelta(seconds=resolution_seconds)
    if record.last_used_at is not None and record.last_used_at > threshold:
        return
    # A failed condition means another request stamped it first; either stamp is right. Any other
    # failure must not fail the request the key authenticates.
    with best_effort("stamp an API key's last use"):
        record.update(
            actions=[ApiKeyRecord.last_used_at.set(now)],
            condition=ApiKeyRecord.last_used_at.does_not_exist() | (ApiKeyRecord.last_used_at < threshold),
        )
