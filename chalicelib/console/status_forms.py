"""What the status-page console modules share: the page named in the path (checked against the
person's organization, 404 otherwise), its console address, the option lists of the forms and the
draft of a refused form (chalicelib.console.pages.status_pages, status_templates, status_followers)."""

from __future__ import annotations

from typing import Any

from chalicelib.console.visits import app_path
from chalicelib.console.web import Ctx
from chalicelib.settings import Settings
from chalicelib.statuspage.repository import get_page
from chalicelib.statuspage.rules import COMPONENT_STATUS_ORDER
from chalicelib.statuspage.tables import StatusPageItem

SCOPE = "status:write"
IMPACTS = ("none", "minor", "major", "critical")
# Best first on the form: the usual move is back to operational.
COMPONENT_STATUSES = tuple(reversed(COMPONENT_STATUS_ORDER))


def options(names: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(name, name.replace("_", " ")) for name in names]


def draft(ctx: Ctx) -> dict[str, Any]:
    """The values of the form that was sent (shown again after an error), by field name."""
    if ctx.request.method != "POST":
        return {}
    return {name: values[0].strip() for name, values in ctx.form.items() if values} | {
        "component_ids": ctx.values("component_ids")
    }


def page_item(ctx: Ctx) -> StatusPageItem:
    return get_page(organization_id=ctx.organization_id, page_id=ctx.path["page_id"])


def page_path(page_id: str, suffix: str = "", *, settings: Settings) -> str:
    return app_path(f"/status-pages/{page_id}{suffix}", settings=settings)
