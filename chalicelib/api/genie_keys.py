"""The Opsgenie Alert API drop-in's credential: `Authorization: GenieKey <key>`, where the key is the
routing key of an integration of type `opsgenie` (shown once when it is created, like any routing
key; the dashed form Opsgenie shows its keys in is read too).

It admits through the routing keys' gate (chalicelib.api.routing_keys: revoked, HTTPS, IP
allow-list, size), so a request counts against its integration's bucket like a webhook delivery.
Refusals, in Opsgenie's terms (rendered by the Opsgenie family, chalicelib.api.error_render): no
GenieKey, or a key no integration has, 401, and counted against the caller's address (key guessing
is slowed as for a bad API key); a revoked integration's key 401 ("integration is disabled"); the
key of an integration of another type 403 (a valid key that cannot do this operation).
"""

from __future__ import annotations

from chalicelib.api.credential_kinds import ANONYMOUS_BUCKET, CredentialKind, Inbound, Refused, Verified, address_bucket
from chalicelib.api.routing_keys import admit_routing_key
from chalicelib.errors import Forbidden, RouteNotFound, Unauthorized

SCHEME = "geniekey"
NO_KEY = "Send the key of an Opsgenie integration as Authorization: GenieKey <key>."
UNKNOWN_KEY = "No Opsgenie integration has this key (invalid, regenerated or deleted)."


def key_of(authorization: str | None) -> str | None:
    """The key of a `GenieKey <key>` header (scheme in any case), in routing-key form; None without one."""
    scheme, _, key = (authorization or "").strip().partition(" ")
    key = key.strip()
    if scheme.lower() != SCHEME or not key:
        return None
    return key.replace("-", "").lower()


def _genie_key(inbound: Inbound) -> Verified:
    key = key_of(inbound.header("authorization"))
    guessed = address_bucket(ANONYMOUS_BUCKET, inbound)
    if key is None:
        raise Refused(Unauthorized(NO_KEY), bucket=guessed)
    try:
        # An Opsgenie request carries no signature of ours (as a PagerDuty event does not).
        verified = admit_routing_key(inbound, key, signed=(None, b""))
    except RouteNotFound:
        raise Refused(Unauthorized(UNKNOWN_KEY), bucket=guessed) from None
    integration_type = verified.subject.integration.integration_type
    if integration_type != "opsgenie":
        refused = Forbidden(
            f"This key belongs to a {integration_type} integration: only an Opsgenie integration's key "
            "may use the Opsgenie Alert API."
        )
        raise Refused(refused, bucket=verified.bucket)
    return verified


GENIE_KEY = CredentialKind("genie_key", _genie_key)
