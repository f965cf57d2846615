"""What a subscriber notice says, from the queue message a public change published. Pure.

A notice is one public change (an incident created, updated or resolved; a maintenance window
scheduled, rescheduled, started, completed or cancelled). Its id comes from the message id, so every
redelivery of the message means the same notice, and the per-subscriber claim
(`SENT#<notice_id>#<subscriber_id>`) keeps it from being sent twice.

Who hears it: confirmed subscribers whose `component_ids` are empty (the whole page) or share a
component with the change. A change that names no component is about the whole page: everyone
hears it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

INCIDENT_STATUS_LABELS = {
    "investigating": "Investigating",
    "identified": "Identified",
    "monitoring": "Monitoring",
    "resolved": "Resolved",
}
# The change -> the words the subject and the heading use.
MAINTENANCE_HEADINGS = {
    "scheduled": "Scheduled maintenance",
    "started": "Maintenance in progress",
    "completed": "Maintenance completed",
    "cancelled": "Maintenance cancelled",
    "rescheduled": "Maintenance rescheduled",
}
INCIDENT_CHANGES = ("created", "updated", "resolved")
MAINTENANCE_CHANGES = tuple(MAINTENANCE_HEADINGS)
MAX_SUBJECT_LENGTH = 150


class UnreadableNotice(ValueError):
    """A message whose payload is not a public change we know (an older or a foreign shape)."""


@dataclass(frozen=True)
class Notice:
    notice_id: str
    event_type: str  # incident.created | incident.updated | incident.resolved | maintenance.<change>
    occurred_at: str
    page_id: str
    page_name: str
    slug: str
    page_url: str
    kind: str  # incident | maintenance
    change: str
    subject: Mapping[str, Any]  # the public incident or maintenance window, as the page showed it

    @property
    def component_ids(self) -> list[str]:
        return [str(c["component_id"]) for c in self.subject.get("affected_components") or []]

    @property
    def component_names(self) -> list[str]:
        return [str(c["name"]) for c in self.subject.get("affected_components") or []]

    @property
    def title(self) -> str:
        return str(self.subject.get("title") or "")

    def page_document(self) -> dict[str, str]:
        return {"page_id": self.page_id, "name": self.page_name, "slug": self.slug, "url": self.page_url}


def notice_id(message_id: str) -> str:
    return "ntc_" + hashlib.sha256(f"status-notice:{message_id}".encode()).hexdigest()[:24]


def read_notice(*, kind: str, message_id: str, occurred_at: str, payload: Mapping[str, Any]) -> Notice:
    """The notice a `status_page.incident_updated` (kind incident) or
    `status_page.maintenance_changed` (kind maintenance) message means."""
    page = payload.get("status_page")
    subject = payload.get(kind)
    change = payload.get("change")
    if kind == "incident" and change is None and isinstance(subject, Mapping):
        change = _incident_change_of(subject)  # published before `change` existed
    allowed = INCIDENT_CHANGES if kind == "incident" else MAINTENANCE_CHANGES
    if not isinstance(page, Mapping) or not isinstance(subject, Mapping) or change not in allowed:
        raise UnreadableNotice(f"not a public {kind} change")
    return Notice(
        notice_id=notice_id(message_id),
        event_type=f"{kind}.{change}",
        occurred_at=occurred_at,
        page_id=str(page.get("page_id") or ""),
        page_name=str(page.get("name") or ""),
        slug=str(page.get("slug") or ""),
        page_url=str(page.get("url") or ""),
        kind=kind,
        change=str(change),
        subject=dict(subject),
    )


def _incident_change_of(incident: Mapping[str, Any]) -> str:
    updates = incident.get("updates") or []
    if len(updates) <= 1:
        return "created"
    return "resolved" if incident.get("status") == "resolved" else "updated"


def notice_to_dict(notice: Notice) -> dict[str, Any]:
    return {
        "notice_id": notice.notice_id,
        "event_type": notice.event_type,
        "occurred_at": notice.occurred_at,
        "status_page": notice.page_document(),
        "kind": notice.kind,
        "change": notice.change,
        "subject": dict(notice.subject),
    }


def notice_from_dict(document: Mapping[str, Any]) -> Notice:
    page = document["status_page"]
    return Notice(
        notice_id=str(document["notice_id"]),
        event_type=str(document["event_type"]),
        occurred_at=str(document["occurred_at"]),
        page_id=str(page["page_id"]),
        page_name=str(page["name"]),
        slug=str(page["slug"]),
        page_url=str(page["url"]),
        kind=str(document["kind"]),
        change=str(document["change"]),
        subject=dict(document["subject"]),
    )


def wants(subscribed_components: Sequence[str] | None, notice_components: Sequence[str]) -> bool:
    """A subscriber of the whole page hears everything; one of some components hears a change
    that touches one of them, or that names no component (it is about the whole page)."""
    if not subscribed_components or not notice_components:
        return True
    return not set(subscribed_components).isdisjoint(notice_components)


def chunks(items: Iterable[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


# ---------------------------------------------------------------- words


def _one_line(text: str) -> str:
    return " ".join(text.split())


def headline(notice: Notice) -> str:
    """`Investigating: Slow checkout`, `Scheduled maintenance: Database upgrade`."""
    if notice.kind == "incident":
        label = INCIDENT_STATUS_LABELS.get(str(notice.subject.get("status")), "Update")
    else:
        label = MAINTENANCE_HEADINGS[notice.change]
    return f"{label}: {_one_line(notice.title)}"


def subject_line(notice: Notice) -> str:
    line = f"[{_one_line(notice.page_name)}] {headline(notice)}"
    return line if len(line) <= MAX_SUBJECT_LENGTH else line[: MAX_SUBJECT_LENGTH - 1] + "…"


def latest_update(notice: Notice) -> Mapping[str, Any] | None:
    """An incident's newest update (the public document lists them newest first)."""
    updates = notice.subject.get("updates") or []
    return updates[0] if notice.kind == "incident" and updates else None


def format_moment(value: str) -> str:
    """`Tue 1 Dec 2026, 02:00 UTC` from an ISO date-time (the payload's times are UTC)."""
    moment = datetime.fromisoformat(value)
    return f"{moment:%a} {moment.day} {moment:%b %Y, %H:%M} UTC"


def format_window(start: str, end: str) -> str:
    """`Tue 1 Dec 2026, 02:00 to 04:00 UTC`, or both dates when it spans days."""
    first, last = datetime.fromisoformat(start), datetime.fromisoformat(end)
    if first.date() == last.date():
        return f"{format_moment(start).removesuffix(' UTC')} to {last:%H:%M} UTC"
    return f"{format_moment(start).removesuffix(' UTC')} to {format_moment(end)}"


def webhook_body(notice: Notice, *, unsubscribe_url: str) -> str:
    """The JSON one webhook subscriber receives (every attempt sends these exact bytes)."""
    document = {
        "id": notice.notice_id,
        "type": notice.event_type,
        "occurred_at": notice.occurred_at,
        "status_page": notice.page_document(),
        notice.kind: dict(notice.subject),
        "unsubscribe_url": unsubscribe_url,
    }
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)
