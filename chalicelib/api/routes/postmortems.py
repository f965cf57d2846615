"""Postmortems: one per incident, reviewed and published; plus an admin import of legacy records."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.api.resource import Resource, each
from chalicelib.postmortem import service
from chalicelib.postmortem.models import (
    PostmortemCreate,
    PostmortemImport,
    PostmortemPatch,
    PostmortemQuery,
    PostmortemV1,
)
from chalicelib.postmortem.tables import PostmortemRecord

api = OperationGroup(__name__, tag="postmortems")

postmortems = Resource(
    api,
    "/api/v1/postmortems",
    "postmortem_id",
    PostmortemV1,
    each(PostmortemV1.of),
    read="postmortems:read",
    write="postmortems:write",
)
_STRUCTURE = (
    "Levels: light, standard, full. Statuses: draft -> in_review -> published, and in_review -> draft. "
    "impact, timeline, action_items and response_timeline are structured; each has a *_html twin rendered "
    "from it with every user string HTML-escaped, so clients can always show *_html."
)


def _import(call: Call, body: PostmortemImport) -> PostmortemRecord:
    return service.import_legacy_postmortem(
        organization_id=call.principal.organization_id,
        incident_number=body.incident_number,
        fields=body.stored_fields(),
        created_at=body.created(call.now),
        now=call.now,
        actor=call.principal.actor,
    )


postmortems.create(
    "createPostmortem",
    "Create the postmortem of an incident (one per incident)",
    PostmortemCreate,
    postmortems.by_key(service.create_postmortem, actor="actor"),
    errors=(400, 404, 409),
    description=_STRUCTURE + " Starts as a draft numbered PM-<year>-<sequence>. The response timeline "
    "(time to acknowledge, identify, resolve) is prefilled from the incident's own timestamps; fields "
    "given in the body override the prefill. Adds a postmortem_created entry to the incident's timeline. "
    "404 when the incident does not exist; 409 when it already has a postmortem.",
)


@api.operation(
    "GET",
    postmortems.base,
    operation_id="getPostmortemByIncident",
    summary="Get the postmortem of an incident",
    scope="postmortems:read",
    query=PostmortemQuery,
    response=PostmortemV1,
    errors=(400, 404),
    description="400 when incident_number is missing or not an incident number; 404 when the incident has "
    "no postmortem. Legacy records may hold HTML strings in impact, timeline, action_items and "
    "response_timeline; the matching *_html field is preferred when present.",
)
def get_postmortem_by_incident(call: Call) -> PostmortemV1:
    query: PostmortemQuery = call.query
    record = service.get_postmortem_for_incident(
        organization_id=call.principal.organization_id, incident_number=query.incident_number
    )
    return PostmortemV1.of(record)


postmortems.get("getPostmortem", "Get a postmortem by id", service.get_postmortem)
postmortems.update(
    "updatePostmortem",
    "Update a postmortem's content and/or status",
    PostmortemPatch,
    service.update_postmortem,
    description=_STRUCTURE + " At least one field; null clears a content field. A disallowed status move "
    "is 400 TRANSITION_NOT_ALLOWED; an unknown status is 400 INVALID_STATUS; a move to the current status "
    "changes nothing. A published postmortem is final: changing its content is 409 CONFLICT. Send the "
    "version you read to make the change conditional (409 when it moved since); without it, concurrent "
    "changes are applied one after the other, none lost.",
)
postmortems.create(
    "importLegacyPostmortem",
    "Import a legacy postmortem whose rich fields are HTML strings (admin)",
    PostmortemImport,
    _import,
    suffix="/import",
    scope="admin",
    errors=(400, 404, 409),
    description="For migrations from an older tool. impact, timeline, action_items and response_timeline "
    "are stored and served as the HTML strings given, and so are the optional *_html fields (not "
    "sanitized: the import is trusted, hence admin only). The record gets a new PM-<year>-<sequence> number "
    "for the year of created_at, and the incident a postmortem_created timeline entry. 404 unknown "
    "incident; 409 when the incident already has a postmortem. A later PATCH with a structured value "
    "replaces the legacy string and renders its *_html.",
)
