"""Opsgenie Alert API bodies: the drop-in under /v2/alerts, and an Opsgenie integration's webhook URL.

Create (`parse_create`), field by field as Opsgenie's API has them:
- message: required (a blank one is refused); longer than 130 characters is cut, as Opsgenie does;
- alias: the dedup key (an open alert with the same alias counts up); over 512 characters cut, as
  Opsgenie does; kept whole beyond Tocsin's 255 (as its hash, chalicelib.integration.normalized);
- description: over 15 000 characters cut (the alert keeps 10 000, an incident's limit);
- priority: P1..P5 (any case), P3 when absent, read through chalicelib.severity's one table (P1
  SEV0, P2 SEV1, P3 SEV2, P4 SEV3, P5 SEV4); any other value is refused, as Opsgenie does;
- tags: each a label (`name:value` or `name=value` as name=value, any other tag as tag=true); at
  most 20 of 50 characters. A comma-separated string is read as a list;
- details: the alert's details (values read as text, as Opsgenie's map of strings has them);
- entity, source, user, note, actions, responders, visibleTo: kept for the drop-in's view of the
  alert (`OpsgenieFields`); entity, source and priority are labels too. Responders do not route:
  the alert's service pages its own escalation policy (the service: `details.service_id`, else a
  `service_id:`/`service_id=` tag, else the integration's default service).
Fields Opsgenie does not define are kept as details, named in a warning. A body that is not a JSON
object is `InvalidPayload` (Opsgenie's 400); a field of the wrong type, a blank message, a priority
outside P1..P5 is `InvalidFields` naming each (Opsgenie's 422).

Actions (`parse_action`: acknowledge, close, add a note): user, source, note (required for a note).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from chalicelib.errors import InvalidFields
from chalicelib.integration.normalized import DESCRIPTION_MAX as KEPT_DESCRIPTION_MAX
from chalicelib.integration.normalized import NormalizedAlert
from chalicelib.integration.parsers._common import compact, http_url, json_type, load_json_object, service_hint
from chalicelib.severity import OPSGENIE_DEFAULT_PRIORITY, OPSGENIE_PRIORITIES, OpsgeniePriority, severity_word

MESSAGE_MAX: Final = 130
ALIAS_MAX: Final = 512
DESCRIPTION_MAX: Final = 15_000
ENTITY_MAX: Final = 512
SOURCE_MAX: Final = 100
USER_MAX: Final = 100
NOTE_MAX: Final = 25_000
TAGS_MAX: Final = 20
TAG_MAX: Final = 50
ACTIONS_MAX: Final = 10
ACTION_MAX: Final = 50
RECIPIENTS_MAX: Final = 50
RECIPIENT_NAME_MAX: Final = 512
RESPONDER_TYPES: Final = ("team", "user", "escalation", "schedule")
VISIBLE_TO_TYPES: Final = ("team", "user")
SERVICE_TAG: Final = "service_id"
CREATE_FIELDS: Final = frozenset(
    {
        "message",
        "alias",
        "description",
        "responders",
        "visibleTo",
        "actions",
        "tags",
        "details",
        "entity",
        "source",
        "priority",
        "user",
        "note",
    }
)

Recipient = Mapping[str, str]


@dataclass(frozen=True)
class OpsgenieFields:
    """What an Opsgenie create says that a Tocsin alert has no field for, as it was sent (cut to
    Opsgenie's limits): the drop-in shows the alert back with them."""

    alias: str | None = None
    priority: OpsgeniePriority = OPSGENIE_DEFAULT_PRIORITY
    tags: tuple[str, ...] = ()
    entity: str | None = None
    source: str | None = None
    user: str | None = None
    note: str | None = None
    actions: tuple[str, ...] = ()
    responders: tuple[Recipient, ...] = ()
    visible_to: tuple[Recipient, ...] = ()


@dataclass(frozen=True)
class OpsgenieCreate:
    alert: NormalizedAlert
    fields: OpsgenieFields


@dataclass(frozen=True)
class OpsgenieAction:
    """The body of an acknowledge, close or add-note request."""

    user: str | None = None
    source: str | None = None
    note: str | None = None


class _Reader:
    """Reads one body's fields: wrong ones named in `invalid`, what was cut or converted in `warnings`."""

    def __init__(self, body: Mapping[str, Any]) -> None:
        self.body = body
        self.invalid: dict[str, str] = {}
        self.warnings: list[str] = []

    def check(self) -> None:
        if self.invalid:
            raise InvalidFields(self.invalid)

    def text(self, name: str, limit: int) -> str | None:
        """A string (a number read as its text); blank is absent; over `limit` cut, with a warning."""
        value = self.body.get(name)
        if value is None:
            return None
        found = _scalar(value)
        if found is None:
            self.invalid[name] = f"must be a string, not {json_type(value)}"
            return None
        if not found.strip():
            return None
        if len(found) > limit:
            self.warnings.append(f"'{name}' has {len(found)} characters; cut to {limit}, as Opsgenie does.")
            found = found[:limit]
        return found

    def strings(self, name: str, most: int, each: int) -> tuple[str, ...]:
        """A list of strings (a comma-separated string too): stripped, blanks and repeats dropped,
        each cut to `each` characters, at most `most` kept."""
        value = self.body.get(name)
        if value is None:
            return ()
        items = value.split(",") if isinstance(value, str) else value
        texts = [_scalar(item) for item in items] if isinstance(items, list) else [None]
        if any(found is None for found in texts):
            self.invalid[name] = "must be a list of strings"
            return ()
        kept = list(dict.fromkeys(found.strip()[:each] for found in texts if found and found.strip()))
        if len(kept) > most:
            self.warnings.append(f"'{name}' has {len(kept)} entries; the first {most} are kept, as Opsgenie does.")
        return tuple(kept[:most])

    def recipients(self, name: str, types: tuple[str, ...]) -> tuple[Recipient, ...]:
        """Teams, users, escalations or schedules, each by id, name or username (Opsgenie's recipients)."""
        value = self.body.get(name)
        if value is None:
            return ()
        if not isinstance(value, list):
            self.invalid[name] = "must be a list of recipients"
            return ()
        kept: list[Recipient] = []
        for item in value[:RECIPIENTS_MAX]:
            recipient = _recipient(item, types)
            if recipient is None:
                self.invalid[name] = f"each recipient needs a type ({', '.join(types)}) and an id, a name or a username"
                return ()
            kept.append(recipient)
        if len(value) > RECIPIENTS_MAX:
            self.warnings.append(f"'{name}' has {len(value)} recipients; the first {RECIPIENTS_MAX} are kept.")
        return tuple(kept)

    def details(self) -> dict[str, Any]:
        """Opsgenie's details are strings: a number or a boolean is read as its text; an object or
        an array is kept as compact JSON text, with a warning."""
        value = self.body.get("details")
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.invalid["details"] = f"must be an object of strings, not {json_type(value)}"
            return {}
        kept: dict[str, Any] = {}
        converted: list[str] = []
        for key, item in value.items():
            found = _scalar(item)
            if found is None and item is not None:
                found = json.dumps(item, ensure_ascii=False, separators=(",", ":"), default=str)
                converted.append(str(key))
            kept[str(key)] = found if found is not None else ""
        if converted:
            names = ", ".join(f"'{name[:60]}'" for name in converted[:10])
            self.warnings.append(f"details {names} were not strings; kept as their JSON text.")
        return kept

    def priority(self) -> OpsgeniePriority:
        value = self.body.get("priority")
        if value is None or (isinstance(value, str) and not value.strip()):
            return OPSGENIE_DEFAULT_PRIORITY
        word = value.strip().upper() if isinstance(value, str) else ""
        for priority in OPSGENIE_PRIORITIES:
            if priority == word:
                return priority
        self.invalid["priority"] = f"must be one of {', '.join(OPSGENIE_PRIORITIES)}"
        return OPSGENIE_DEFAULT_PRIORITY

    def unknown(self) -> dict[str, Any]:
        """Fields Opsgenie's create does not define: kept as details, named in one warning."""
        extra = {name: value for name, value in self.body.items() if name not in CREATE_FIELDS}
        if extra:
            names = ", ".join(f"'{name[:60]}'" for name in list(extra)[:10])
            verb = "is" if len(extra) == 1 else "are"
            self.warnings.append(f"{names} {verb} not part of Opsgenie's alert; kept in details.")
        return extra


def _scalar(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return None


def _recipient(item: object, types: tuple[str, ...]) -> Recipient | None:
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if not isinstance(kind, str) or kind.strip().lower() not in types:
        return None
    recipient = {"type": kind.strip().lower()}
    for name in ("id", "name", "username"):
        found = _scalar(item.get(name))
        if found and found.strip():
            recipient[name] = found.strip()[:RECIPIENT_NAME_MAX]
    return recipient if len(recipient) > 1 else None


def tag_labels(tags: tuple[str, ...]) -> dict[str, str]:
    """Tags as labels: `name:value` or `name=value` is name=value, any other tag is tag=true."""
    labels: dict[str, str] = {}
    for tag in tags:
        cut = min((at for at in (tag.find(":"), tag.find("=")) if at > 0), default=-1)
        name, value = (tag[:cut].strip(), tag[cut + 1 :].strip()) if cut > 0 else (tag, "")
        labels.setdefault(name if value else tag, value or "true")
    return labels


def parse_create(body: bytes | str) -> OpsgenieCreate:
    """An Opsgenie create-alert body as the alert it triggers and the Opsgenie fields it keeps."""
    reader = _Reader(load_json_object(body, "The request body"))
    message = reader.text("message", MESSAGE_MAX)
    if message is None and "message" not in reader.invalid:
        reader.invalid["message"] = "is required and must not be blank"
    fields = OpsgenieFields(
        alias=reader.text("alias", ALIAS_MAX),
        priority=reader.priority(),
        tags=reader.strings("tags", TAGS_MAX, TAG_MAX),
        entity=reader.text("entity", ENTITY_MAX),
        source=reader.text("source", SOURCE_MAX),
        user=reader.text("user", USER_MAX),
        note=reader.text("note", NOTE_MAX),
        actions=reader.strings("actions", ACTIONS_MAX, ACTION_MAX),
        responders=reader.recipients("responders", RESPONDER_TYPES),
        visible_to=reader.recipients("visibleTo", VISIBLE_TO_TYPES),
    )
    description = reader.text("description", DESCRIPTION_MAX)
    details = reader.details()
    unknown = reader.unknown()
    reader.check()
    labels = tag_labels(fields.tags)
    for name, value in (("priority", fields.priority), ("entity", fields.entity), ("source", fields.source)):
        if value:
            labels.setdefault(name, value)
    if description is not None and len(description) > KEPT_DESCRIPTION_MAX:
        reader.warnings.append(
            f"'description' is kept to its first {KEPT_DESCRIPTION_MAX} characters (an incident's limit)."
        )
    alert = NormalizedAlert(
        source="opsgenie",
        action="trigger",
        title=message or "",
        description=description,
        severity=severity_word(fields.priority),
        dedup_key=fields.alias,
        service_hint=service_hint(details.get(SERVICE_TAG), labels.get(SERVICE_TAG)),
        metadata=compact(labels),
        summary="Opsgenie alert" + (f" from {fields.source}" if fields.source else ""),
        raw_details=dict(reader.body),
        details={**details, **{name: value for name, value in unknown.items() if name not in details}},
        warnings=tuple(reader.warnings),
        runbook_url=http_url(details.get("runbook_url")),
    )
    return OpsgenieCreate(alert, fields)


def parse_action(body: bytes | str, *, note_required: bool = False) -> OpsgenieAction:
    """The body of an acknowledge, close or add-note request; an empty body is no fields."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes | bytearray) else body
    reader = _Reader(load_json_object(body, "The request body") if text.strip() else {})
    action = OpsgenieAction(
        user=reader.text("user", USER_MAX), source=reader.text("source", SOURCE_MAX), note=reader.text("note", NOTE_MAX)
    )
    if note_required and action.note is None and "note" not in reader.invalid:
        reader.invalid["note"] = "is required and must not be blank"
    reader.check()
    return action
