"""API keys, the spec's "dashboard settings": create with scopes, the full key shown once, list, revoke.

Owners and admins only, as the API (`admin`); other roles see the page say so. Creating goes through
`directory.api_keys.issue_api_key`, the function the API route calls: a key never carries more
than its creator holds. The full key is on the answer to the POST (console pages are sent with
Cache-Control: no-store) and nowhere else: only its hash is stored.
"""

from __future__ import annotations

from chalicelib.apikey import service as apikeys
from chalicelib.apikey.models import ApiKeyCreate
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.directory.api_keys import issue_api_key

console = ConsolePages(__name__, notices={"api_key_revoked": "API key revoked. It answers 401 from now on."})

SCOPE = "admin"  # the API's createApiKey, listApiKeys and revokeApiKey
KINDS = {"service_account": "Service account (not tied to a person)", "personal": "Personal (acts as you)"}


def keys_page(ctx: Ctx) -> Page:
    allowed = ctx.can(SCOPE)
    keys = apikeys.list_api_keys(organization_id=ctx.organization_id) if allowed else []
    chosen = ctx.values("scopes") if ctx.request.method == "POST" else []
    return Page(
        "console/self_service/api_keys.html",
        "API keys",
        section="api-keys",
        context={
            "allowed": allowed,
            "keys": keys,
            "kinds": KINDS,
            "grantable": [scope for scope in ALL_SCOPES if ctx.can(scope)],
            "typed": {"name": ctx.value("name"), "kind": ctx.value("kind", "service_account"), "scopes": chosen},
        },
    )


@console.page("/api-keys")
def show_api_keys(ctx: Ctx) -> Page:
    """The organization's API keys (never the keys themselves)."""
    return keys_page(ctx)


@console.action("/api-keys", scope=SCOPE, on_error=keys_page)
def create_api_key(ctx: Ctx) -> Page:
    """Create an API key and show it, once."""
    body = ctx.model(
        ApiKeyCreate, {"name": ctx.value("name"), "kind": ctx.value("kind"), "scopes": ctx.values("scopes")}
    )
    key, plaintext = issue_api_key(
        principal=ctx.signed_in, name=body.name, kind=body.kind, scopes=body.scopes, now=ctx.now, settings=ctx.settings
    )
    return Page(
        "console/self_service/api_key_created.html",
        "API key created",
        section="api-keys",
        context={"key": key, "plaintext": plaintext, "kinds": KINDS},
    )


@console.action(
    "/api-keys/{key_id}/revoke",
    scope=SCOPE,
    on_error=keys_page,
    confirm=Confirmation(
        "Revoke this API key?",
        "Every script and tool using it gets 401 from the next request on. A revoked key cannot be restored.",
        "Revoke key",
    ),
)
def revoke_api_key(ctx: Ctx) -> Redirect:
    """Revoke an API key."""
    apikeys.revoke_api_key(organization_id=ctx.organization_id, key_id=ctx.path["key_id"], now=ctx.now)
    return Redirect(app_path("/api-keys", settings=ctx.settings), notice="api_key_revoked")
