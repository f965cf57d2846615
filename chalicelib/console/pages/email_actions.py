"""The one-click links of a page email ("Acknowledge", "Resolve"): `/app/email-actions/{token}`.

No sign-in: the signed token (chalicelib/notification/email_links.py) proves the person, the
incident and the action; it is the pages' credential (`EMAIL_LINK`, a capability token in the
URL, checked with the browser's visit before either page runs; a forged, mangled or expired
link is a page saying why). A GET only shows what the link will do and a button, because mail
scanners and link previews fetch every URL in an email: nothing changes until the form is
POSTed (with the page's CSRF token, bound to the browser's pre-session cookie). The POST spends
the link (once, by a conditional write), acts through `paging.respond` with the person's own
permissions and the channel the link came by (`email`, or a chat page's: Teams, Discord, Google
Chat), then sends the browser back to the link's page, which, once the link is spent, says what
happened: "INC-2026-0012 acknowledged by Ana Ruiz at 14:05 CET", read from the incident, in the
recipient's zone. That page needs no sign-in (a half-awake person on a phone is usually signed
out): it links to the incident, through the sign-in page when needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from chalicelib.api.credential_kinds import CredentialKind, Inbound, Refused, Verified
from chalicelib.console.visits import CONSOLE_SESSION_OR_ANONYMOUS, Visit, app_path
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect, ctx_of, render_page
from chalicelib.directory.users import User, find_user_by_email, get_user, zone_of
from chalicelib.errors import Conflict, NotFound
from chalicelib.incident import repository
from chalicelib.incident.tables import IncidentRecord
from chalicelib.notification import email_links
from chalicelib.notification.email_links import EmailLink, LinkRefused
from chalicelib.paging.respond import respond

console = ConsolePages(
    __name__,
    notices={
        "email_acknowledge": "Acknowledged from your email link.",
        "email_resolve": "Resolved from your email link.",
        "email_escalate": "Escalated from your page's link.",
    },
)

TEMPLATE = "console/email_action.html"
VERBS = {"acknowledge": "Acknowledge", "resolve": "Resolve", "escalate": "Escalate"}
NO_PERSON = "The person this link was sent to is no longer in the organization; nothing was changed."
# A forged or mangled link is unknown to us (404); an expired or spent one was real but is over (409).
REFUSED_STATUS = {email_links.BAD_LINK: 404}


def _refused(message: str) -> Page:
    return Page(
        TEMPLATE,
        "Link not usable",
        context={"state": "refused", "message": message},
        status=REFUSED_STATUS.get(message, 409),
    )


@dataclass
class LinkVisit(Visit):
    """A browser's visit that came with a valid email link."""

    link: EmailLink | None = None


def _verify_link(inbound: Inbound) -> Verified:
    """The browser's visit (its pre-session, and a POST's CSRF token), then the link's token: ours,
    unexpired. A refused link answers the page that says why, counted like the visit."""
    verified = CONSOLE_SESSION_OR_ANONYMOUS.verify(inbound)
    visit = LinkVisit(**vars(verified.subject))
    try:
        visit.link = email_links.verify(inbound.path["token"], now=inbound.now, settings=inbound.settings)
    except LinkRefused as refused:
        page = _refused(refused.reason)
        error = NotFound(refused.reason) if page.status == 404 else Conflict(refused.reason)
        answer = render_page(ctx_of(inbound.request, inbound.path, inbound.now, inbound.settings, visit), page)
        raise Refused(error, bucket=verified.bucket, answer=answer) from None
    return Verified(verified.principal, visit, verified.bucket)


EMAIL_LINK = CredentialKind("email_link_token", _verify_link)


def _link(ctx: Ctx) -> EmailLink:
    assert isinstance(ctx.visit, LinkVisit) and ctx.visit.link is not None  # EMAIL_LINK verified it
    return ctx.visit.link


def _person(link: EmailLink) -> User | None:
    try:
        return get_user(organization_id=link.organization_id, user_id=link.user_id)
    except NotFound:
        return None


def _incident_title(link: EmailLink) -> str | None:
    try:
        return repository.get_incident(link.organization_id, link.incident_number).title
    except NotFound:
        return None


def _who(organization_id: str, actor: str | None) -> str:
    """The person an incident names (by email, as the timeline does), by their name when known."""
    if not actor:
        return "someone"
    found = find_user_by_email(organization_id=organization_id, email=actor) if "@" in actor else None
    return (found.name or actor) if found is not None else actor


def _state_of(link: EmailLink, incident: IncidentRecord) -> dict[str, Any]:
    """What the incident's record says about the link's action: done (by whom, when) or not."""
    organization_id = link.organization_id
    if link.action == "acknowledge" and incident.acknowledged_at is not None:
        return {
            "done": True,
            "words": "acknowledged",
            "by": _who(organization_id, incident.acknowledged_by),
            "at": incident.acknowledged_at,
        }
    if link.action == "resolve" and incident.resolved_at is not None:
        who = _who(organization_id, incident.resolved_by_email or incident.resolved_by_name)
        return {"done": True, "words": incident.status.replace("_", " "), "by": who, "at": incident.resolved_at}
    return {"done": False, "words": incident.status.replace("_", " "), "by": None, "at": None}


def _outcome_page(
    ctx: Ctx, link: EmailLink, person: User | None, *, just_now: bool, message: str | None = None, status: int = 200
) -> Page:
    """The incident as it stands after the link was used, in the recipient's zone; links onward."""
    try:
        incident: IncidentRecord | None = repository.get_incident(link.organization_id, link.incident_number)
    except NotFound:
        incident = None
    number = link.incident_number
    state = _state_of(link, incident) if incident is not None else None
    if state is not None and state["done"]:
        heading = f"{number} {state['words']}"  # "INC-2026-0012 acknowledged"
    elif message:
        heading = "Nothing changed"
    else:
        heading = f"{number} is {state['words']}" if state is not None else f"{number} was not found"
    incident_path = app_path(f"/incidents/{number}", settings=ctx.settings)
    return Page(
        TEMPLATE,
        heading,
        status=status,
        zone=zone_of(person) if person is not None else None,
        context={
            "state": "outcome",
            "number": number,
            "incident_title": incident.title if incident is not None else None,
            "outcome": state,
            "just_now": just_now,
            "message": message,
            "open_link": incident_path
            if ctx.user is not None
            else app_path("/sign-in", settings=ctx.settings) + "?" + urlencode({"next": incident_path}),
        },
    )


@console.page("/email-actions/{token}", credential=EMAIL_LINK)
def show_email_action(ctx: Ctx) -> Page:
    """What an email link will do, and the button that does it (opening the link changes nothing);
    once the link is spent, what happened."""
    link = _link(ctx)
    person = _person(link)
    if email_links.is_claimed(link):
        return _outcome_page(ctx, link, person, just_now=ctx.arg("done") == f"email_{link.action}")
    if person is None:
        return _refused(NO_PERSON)
    return Page(
        TEMPLATE,
        f"{VERBS[link.action]} {link.incident_number}?",
        zone=zone_of(person),
        context={
            "state": "confirm",
            "verb": VERBS[link.action],
            "number": link.incident_number,
            "incident_title": _incident_title(link),
            "person": person.email or person.name,
            "action_path": app_path("/email-actions/" + ctx.path["token"], settings=ctx.settings),
        },
    )


@console.action("/email-actions/{token}", scope=None, credential=EMAIL_LINK)
def act_from_email(ctx: Ctx) -> Page | Redirect:
    """Spend the link and act as its recipient; then the link's page, which says what happened."""
    link = _link(ctx)
    person = _person(link)
    if person is None:
        return _refused(NO_PERSON)
    if not email_links.claim(link):
        return _refused(email_links.USED)
    try:
        outcome = respond(
            organization_id=link.organization_id,
            incident_number=link.incident_number,
            action=link.action,
            person=person,
            channel=link.via,  # "email", or the chat channel whose page carried the link (Teams...)
            now=ctx.now,
            settings=ctx.settings,
        )
    except Exception:
        # Not the person's mistake (respond answers those): nothing changed, so the link may be used again.
        email_links.release(link)
        raise
    if not outcome.done:
        return _outcome_page(ctx, link, person, just_now=True, message=outcome.message, status=409)
    return Redirect(
        app_path("/email-actions/" + ctx.path["token"], settings=ctx.settings), notice=f"email_{link.action}"
    )
