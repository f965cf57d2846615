"""The OpenAPI 3.1 `webhooks` section: one POST per outbound event type, with its JSON body and headers.

chalicelib.api.openapi merges `webhooks(schemas)` into the document; the event schemas it needs go
into `schemas` (the document's components) next to the API's, so IncidentV1 is described once.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from chalicelib.outbound import events

REF = "#/components/schemas/{model}"
SIGNING = (
    "Verify before trusting it: X-Service-Signature is sha256=<hex HMAC-SHA256(secret, "
    '"<X-Service-Timestamp>." + raw body)> with the subscription\'s secret, exactly as inbound custom '
    "webhooks are signed; refuse stale timestamps. X-Tocsin-Event-Id is the same on every attempt and for "
    "every redelivery of the event: deduplicate on it."
)
RETRIES = (
    "Answer 2xx within 10 s. Anything else (4xx other than 408/429 included), or no answer, is retried "
    "1 min, 5 min, 30 min and 2 h later; after 5 failed attempts the subscription is disabled."
)
_HEADERS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("X-Service-Timestamp", "Unix seconds when this attempt was signed.", {"type": "string", "pattern": "^[0-9]+$"}),
    ("X-Service-Signature", "sha256=<hex HMAC-SHA256(secret, timestamp + '.' + raw body)>.", {"type": "string"}),
    ("X-Tocsin-Event-Id", "The event id (also the body's id): deduplicate on it.", {"type": "string"}),
    ("X-Tocsin-Event-Type", "The event type (also the body's type).", {"type": "string"}),
    ("X-Tocsin-Delivery-Attempt", "1 to 5.", {"type": "string", "pattern": "^[1-5]$"}),
    ("User-Agent", "Tocsin-Webhooks/1.0", {"type": "string"}),
)
_SUMMARIES = {
    events.INCIDENT_TRIGGERED: "An incident was created (API, inbound webhook or alert)",
    events.INCIDENT_ACKNOWLEDGED: "An incident was acknowledged",
    events.INCIDENT_ESCALATED: "An incident escalated to the next level of its escalation policy",
    events.INCIDENT_STATUS_CHANGED: "An incident moved to another status",
    events.INCIDENT_RESOLVED: "An incident reached a resolved or closed status",
    events.INCIDENT_REOPENED: "A resolved incident was reopened",
    events.INCIDENT_ANNOTATED: "A comment was added to an incident's timeline",
    events.INCIDENT_ASSIGNED: "An incident was assigned to someone",
    events.POSTMORTEM_PUBLISHED: "A postmortem was published",
    events.STATUS_PAGE_INCIDENT_UPDATED: "A public status page incident was created or updated",
}
_STATUS_PAIR = {
    "previous_status": {"type": ["string", "null"], "description": "The canonical status before the change."},
    "status": {"type": ["string", "null"], "description": "The canonical status after the change."},
}
_PER_TYPE: dict[str, dict[str, Any]] = {
    events.INCIDENT_STATUS_CHANGED: _STATUS_PAIR,
    events.INCIDENT_RESOLVED: _STATUS_PAIR,
    events.INCIDENT_REOPENED: _STATUS_PAIR,
    events.INCIDENT_ASSIGNED: {
        "assigned_to": {
            "type": ["object", "null"],
            "description": "The new assignee: name and email (null values when unknown).",
            "properties": {"name": {"type": ["string", "null"]}, "email": {"type": ["string", "null"]}},
        }
    },
    events.INCIDENT_ANNOTATED: {"comment": {"type": "string", "description": "The comment added."}},
    events.INCIDENT_ESCALATED: {
        "level": {"type": ["integer", "null"], "description": "The escalation level now notified (1-based)."}
    },
}
_LINK = {"type": ["string", "null"], "format": "uri"}
# What a responder needs besides the incident (docs/PAGES.md); absent from events sent before them.
RESPONDER: dict[str, Any] = {
    "service": {
        "type": ["object", "null"],
        "description": "The incident's first service (null when it has none or it was deleted).",
        "properties": {"service_key": {"type": "string"}, "name": {"type": "string"}},
    },
    "labels": {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": "The labels of the alert that opened the incident (up to 20; empty for an incident "
        "created through the API).",
    },
    "links": {
        "type": "object",
        "description": "console: the incident's page in the responder console; source and runbook: the "
        "alert's own http(s) links, null when it gave none.",
        "properties": {"console": {"type": "string", "format": "uri"}, "source": _LINK, "runbook": _LINK},
    },
}
SYNC_STATUS = {
    "type": "string",
    "enum": list(events.SYNC_STATUSES),
    "description": "Only for a subscription with sync_integration_id: the incident's status in the external "
    "tool's terms (resolved and closed statuses are resolved; other statuses keep a matching name or are "
    "investigating). Changes that tool made through its inbound webhook are not sent back to it.",
}


def schema_name(event_type: str) -> str:
    """incident.status_changed -> IncidentStatusChangedEvent."""
    words = event_type.replace(".", "_").split("_")
    return "".join(word.capitalize() for word in words) + "Event"


def _ensure(schemas: dict[str, Any], model: type[BaseModel]) -> dict[str, str]:
    """A reference to the model's component, adding it (and what it nests) when the API lacks it."""
    if model.__name__ not in schemas:
        _, definitions = models_json_schema([(model, "validation")], ref_template=REF)
        for name, definition in definitions.get("$defs", {}).items():
            schemas.setdefault(name, definition)
    return {"$ref": REF.format(model=model.__name__)}


def _component_or(schemas: dict[str, Any], name: str, fallback: dict[str, Any]) -> dict[str, Any]:
    """The API's own component when the document has it (the same object the API returns)."""
    return {"$ref": REF.format(model=name)} if name in schemas else fallback


def _data_schema(event_type: str, schemas: dict[str, Any]) -> dict[str, Any]:
    if event_type == events.POSTMORTEM_PUBLISHED:
        postmortem = _component_or(
            schemas, "PostmortemV1", {"type": "object", "description": "PostmortemV1, as GET /api/v1/postmortems."}
        )
        return {
            "type": "object",
            "required": ["postmortem", "incident_number"],
            "properties": {"postmortem": postmortem, "incident_number": {"type": ["string", "null"]}},
        }
    if event_type == events.STATUS_PAGE_INCIDENT_UPDATED:
        return {
            "type": "object",
            "required": ["status_page", "incident"],
            "properties": {
                "status_page": {"$ref": REF.format(model="WebhookStatusPage")},
                "incident": _component_or(
                    schemas, "PublicIncident", {"$ref": REF.format(model="WebhookPublicIncident")}
                ),
            },
        }
    from chalicelib.incident.models import IncidentV1

    return {
        "type": "object",
        "required": ["incident", *_PER_TYPE.get(event_type, {})],
        "properties": {
            "incident": _ensure(schemas, IncidentV1) | {"description": "The incident as it is after the change."},
            **RESPONDER,
            **_PER_TYPE.get(event_type, {}),
            "sync_status": SYNC_STATUS,
        },
    }


def _shared_schemas() -> dict[str, Any]:
    at = {"type": "string", "format": "date-time"}
    return {
        "WebhookOrganization": {
            "type": "object",
            "required": ["id", "name"],
            "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
        },
        "WebhookStatusPage": {
            "type": "object",
            "required": ["page_id", "name", "slug", "url"],
            "properties": {
                "page_id": {"type": "string"},
                "name": {"type": "string"},
                "slug": {"type": "string"},
                "url": {"type": "string", "format": "uri"},
            },
        },
        # The spec's public incident; the status page API's own component replaces it when present.
        "WebhookPublicIncident": {
            "type": "object",
            "required": ["incident_id", "title", "status", "impact", "started_at", "resolved_at", "updated_at"],
            "properties": {
                "incident_id": {"type": "string", "pattern": "^inc_"},
                "title": {"type": "string"},
                "status": {"type": "string", "enum": list(events.SYNC_STATUSES)},
                "impact": {"type": "string", "enum": ["none", "minor", "major", "critical"]},
                "started_at": at,
                "resolved_at": {"type": ["string", "null"], "format": "date-time"},
                "updated_at": at,
                "updates": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"status": {"type": "string"}, "body": {"type": "string"}, "published_at": at},
                    },
                },
                "affected_components": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"component_id": {"type": "string"}, "name": {"type": "string"}},
                    },
                },
            },
        },
    }


def event_schema(event_type: str, schemas: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "description": _SUMMARIES[event_type] + ".",
        "required": ["id", "type", "occurred_at", "organization", "data"],
        "properties": {
            "id": {"type": "string", "pattern": "^evt_[0-9a-f]+$", "description": "Same on every attempt."},
            "type": {"type": "string", "const": event_type},
            "occurred_at": {"type": "string", "format": "date-time"},
            "organization": {"$ref": REF.format(model="WebhookOrganization")},
            "data": _data_schema(event_type, schemas),
        },
    }


def webhooks(schemas: dict[str, Any]) -> dict[str, Any]:
    """The `webhooks` object; adds every schema it references to `schemas`."""
    for name, schema in _shared_schemas().items():
        schemas.setdefault(name, schema)
    section: dict[str, Any] = {}
    for event_type in events.EVENT_TYPES:
        name = schema_name(event_type)
        schemas[name] = event_schema(event_type, schemas)
        section[event_type] = {
            "post": {
                "operationId": "webhook" + name,
                "summary": _SUMMARIES[event_type],
                "description": f'Sent to subscriptions whose event_types include {event_type} (or "*"). '
                + SIGNING
                + " "
                + RETRIES,
                "tags": ["webhook-events"],
                "security": [],
                "parameters": [
                    {"name": header, "in": "header", "required": True, "description": text, "schema": schema}
                    for header, text, schema in _HEADERS
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": REF.format(model=name)}}},
                },
                "responses": {
                    "2XX": {"description": "Delivered."},
                    "default": {"description": "Not delivered: retried on the schedule above."},
                },
            }
        }
    return section
