"""Request and response models: every limit at its boundary, unknown fields, and serialisation."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from chalicelib.api.validation import parse_body, parse_query
from chalicelib.errors import InvalidSeverity, ValidationFailed
from chalicelib.incident import models as m
from chalicelib.incident import settings_models as sm
from chalicelib.incident.sla import DEFAULT_SLA_SETTINGS, SlaTarget
from chalicelib.incident.workflow import DEFAULT_WORKFLOW

SVC = "svc_abcde12345"
T0 = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


def errors(model, data):
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    return caught.value.errors(include_url=False)


def locs(model, data):
    return [".".join(str(p) for p in e["loc"]) for e in errors(model, data)]


def create(**overrides):
    body = {"title": "Checkout is down", "service_ids": [SVC]}
    body.update(overrides)
    return body


def services(n):
    return [f"svc_{i:010d}" for i in range(n)]


# ---------------------------------------------------------------- IncidentCreate


@pytest.mark.parametrize(("length", "ok"), [(0, False), (1, True), (200, True), (201, False)])
def test_create_title_bounds(length, ok):
    body = create(title="t" * length)
    if ok:
        assert m.IncidentCreate.model_validate(body).title == "t" * length
    else:
        assert locs(m.IncidentCreate, body) == ["title"]


def test_create_title_is_stripped_and_blank_is_invalid():
    assert m.IncidentCreate.model_validate(create(title="  Down  ")).title == "Down"
    assert m.IncidentCreate.model_validate(create(title=" " + "t" * 200 + " ")).title == "t" * 200
    assert locs(m.IncidentCreate, create(title="   \n\t ")) == ["title"]


@pytest.mark.parametrize(("count", "ok"), [(0, False), (1, True), (50, True), (51, False)])
def test_create_service_id_count(count, ok):
    body = create(service_ids=services(count))
    if ok:
        assert len(m.IncidentCreate.model_validate(body).service_ids) == count
    else:
        assert locs(m.IncidentCreate, body) == ["service_ids"]


def test_create_service_ids_deduplicated_in_order():
    body = create(service_ids=["svc_bbbbbbbbbb", SVC, "svc_bbbbbbbbbb"])
    assert m.IncidentCreate.model_validate(body).service_ids == ["svc_bbbbbbbbbb", SVC]


@pytest.mark.parametrize(
    "key", ["svc_abc", "svc_ABCDE12345", "SER-1234", "SER-12a45", "svc_abcde123456", "abcde12345", "svc_abcde-1234", 5]
)
def test_create_rejects_malformed_service_keys(key):
    assert locs(m.IncidentCreate, create(service_ids=[SVC, key])) == ["service_ids.1"]


@pytest.mark.parametrize("ref", ["SER-12345", "ser-00001", "SER-0000000001"])
def test_create_accepts_service_ids_too(ref):
    # Issue 26: a service is named by its key or its id; the service resolves the id.
    assert m.IncidentCreate.model_validate(create(service_ids=[SVC, ref])).service_ids == [SVC, ref]


def test_create_requires_title_and_services():
    assert sorted(locs(m.IncidentCreate, {})) == ["service_ids", "title"]
    assert locs(m.IncidentCreate, create(service_ids=SVC)) == ["service_ids"]


@pytest.mark.parametrize(("length", "ok"), [(0, True), (10000, True), (10001, False)])
def test_create_description_bounds(length, ok):
    body = create(description="d" * length)
    if ok:
        assert m.IncidentCreate.model_validate(body).description == "d" * length
    else:
        assert locs(m.IncidentCreate, body) == ["description"]


def test_create_description_optional_and_nullable():
    assert m.IncidentCreate.model_validate(create()).description is None
    assert m.IncidentCreate.model_validate(create(description=None)).description is None


@pytest.mark.parametrize("value", ["SEV0", "SEV4", "sev2", None])
def test_create_severity(value):
    parsed = m.IncidentCreate.model_validate(create(severity=value)).severity
    assert parsed == (value.upper() if value else None)


@pytest.mark.parametrize("value", ["SEV5", "high", "", 2, ["SEV1"]])
def test_create_invalid_severity_is_invalid_severity(value):
    with pytest.raises(InvalidSeverity):
        m.IncidentCreate.model_validate(create(severity=value))


def test_create_invalid_severity_through_parse_body_keeps_its_code():
    with pytest.raises(InvalidSeverity) as caught:
        parse_body(m.IncidentCreate, json.dumps(create(severity="SEV9")))
    assert caught.value.code == "INVALID_SEVERITY"


def test_create_unknown_field():
    problems = errors(m.IncidentCreate, create(priority="P1"))
    assert [(p["loc"], p["type"]) for p in problems] == [(("priority",), "extra_forbidden")]
    with pytest.raises(ValidationFailed) as caught:
        parse_body(m.IncidentCreate, json.dumps(create(priority="P1")))
    assert caught.value.details["fields"] == [{"field": "priority", "message": "unknown field"}]


def test_create_wrong_types():
    assert locs(m.IncidentCreate, create(title=5)) == ["title"]


# ---------------------------------------------------------------- IncidentUpdate


@pytest.mark.parametrize(("length", "ok"), [(0, False), (1, True), (200, True), (201, False)])
def test_update_title_bounds(length, ok):
    body = {"title": "t" * length}
    if ok:
        assert m.IncidentUpdate.model_validate(body).changes() == body
    else:
        assert locs(m.IncidentUpdate, body) == ["title"]


@pytest.mark.parametrize(("length", "ok"), [(10000, True), (10001, False)])
def test_update_description_bounds(length, ok):
    body = {"description": "d" * length}
    if ok:
        m.IncidentUpdate.model_validate(body)
    else:
        assert locs(m.IncidentUpdate, body) == ["description"]


def test_update_needs_at_least_one_property():
    problems = errors(m.IncidentUpdate, {})
    assert problems[0]["type"] == "empty_update"
    with pytest.raises(ValidationFailed) as caught:
        parse_body(m.IncidentUpdate, "{}")
    assert caught.value.details["fields"][0]["field"] == "body"


def test_update_status_points_to_the_status_operation():
    problems = errors(m.IncidentUpdate, {"status": "resolved", "title": "x"})
    assert [(p["loc"], p["type"]) for p in problems] == [(("status",), "status_not_updatable")]
    assert "/status" in problems[0]["msg"]
    assert "status" not in m.IncidentUpdate.model_json_schema()["properties"]


def test_update_changes_only_given_fields_and_nulls_clear():
    update = m.IncidentUpdate.model_validate({"description": None, "assigned_to": None})
    assert update.changes() == {"description": None, "assigned_to": None}
    update = m.IncidentUpdate.model_validate({"severity": "sev1", "assigned_to": " Ana@Example.COM "})
    assert update.changes() == {"severity": "SEV1", "assigned_to": "ana@example.com"}


@pytest.mark.parametrize("field", ["title", "severity"])
def test_update_title_and_severity_not_nullable(field):
    assert locs(m.IncidentUpdate, {field: None}) == [field]


def test_update_invalid_severity_and_email():
    with pytest.raises(InvalidSeverity):
        m.IncidentUpdate.model_validate({"severity": "SEV7"})
    assert locs(m.IncidentUpdate, {"assigned_to": "not-an-email"}) == ["assigned_to"]
    assert locs(m.IncidentUpdate, {"title": "x", "owner": "me"}) == ["owner"]


# ---------------------------------------------------------------- status, comment, page


@pytest.mark.parametrize(("length", "ok"), [(0, True), (500, True), (501, False)])
def test_status_comment_bounds(length, ok):
    body = {"status": "resolved", "comment": "c" * length}
    if ok:
        assert m.StatusChange.model_validate(body).comment == "c" * length
    else:
        assert locs(m.StatusChange, body) == ["comment"]


@pytest.mark.parametrize(("status", "ok"), [("", False), ("a", True), ("s" * 40, True), ("s" * 41, False)])
def test_status_name_bounds(status, ok):
    if ok:
        assert m.StatusChange.model_validate({"status": status}).status == status
    else:
        assert locs(m.StatusChange, {"status": status}) == ["status"]


def test_status_change_normalises_and_forbids_unknown():
    assert m.StatusChange.model_validate({"status": " Resolved "}).status == "resolved"
    assert locs(m.StatusChange, {}) == ["status"]
    assert locs(m.StatusChange, {"status": "resolved", "reason": "x"}) == ["reason"]


@pytest.mark.parametrize(("comment", "ok"), [("", False), ("   ", False), ("c", True), ("c" * 10000, True)])
def test_comment_bounds(comment, ok):
    if ok:
        assert m.CommentCreate.model_validate({"comment": comment}).comment == comment
    else:
        assert locs(m.CommentCreate, {"comment": comment}) == ["comment"]


def test_comment_limits_and_unknown_fields():
    assert locs(m.CommentCreate, {"comment": "c" * 10001}) == ["comment"]
    assert locs(m.CommentCreate, {}) == ["comment"]
    assert locs(m.CommentCreate, {"comment": "x", "event_type": "note"}) == ["event_type"]


def test_page_request():
    page = m.PageRequest.model_validate({"email": "Ana@Example.com", "channels": ["slack", "email", "slack"]})
    assert page.email == "ana@example.com"
    assert page.channels == ["slack", "email"]
    assert page.message is None


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"email": "a@example.com", "channels": []}, "channels"),
        ({"email": "a@example.com", "channels": ["sms"]}, "channels.0"),
        ({"email": "a@example.com"}, "channels"),
        ({"email": "nope", "channels": ["email"]}, "email"),
        ({"channels": ["email"]}, "email"),
        ({"email": "a@example.com", "channels": ["email"], "message": "m" * 501}, "message"),
        ({"email": "a@example.com", "channels": ["email"], "urgency": "high"}, "urgency"),
    ],
)
def test_page_request_errors(body, where):
    assert where in locs(m.PageRequest, body)


def test_page_message_boundary():
    body = {"email": "a@example.com", "channels": ["email"], "message": "m" * 500}
    assert m.PageRequest.model_validate(body).message == "m" * 500


# ---------------------------------------------------------------- list query


def query(**params):
    return parse_query(m.IncidentListQuery, {k: v if isinstance(v, list) else [v] for k, v in params.items()})


def test_list_query_defaults():
    q = query()
    assert (q.limit, q.offset, q.status, q.severity, q.team_name) == (20, 0, None, None, None)


@pytest.mark.parametrize(("limit", "ok"), [("0", False), ("1", True), ("100", True), ("101", False), ("x", False)])
def test_list_limit_bounds(limit, ok):
    if ok:
        assert query(limit=limit).limit == int(limit)
    else:
        with pytest.raises(ValidationFailed) as caught:
            query(limit=limit)
        assert caught.value.details["fields"][0]["field"] == "limit"


@pytest.mark.parametrize(("offset", "ok"), [("-1", False), ("0", True), ("1000", True)])
def test_list_offset_bounds(offset, ok):
    if ok:
        assert query(offset=offset).offset == int(offset)
    else:
        with pytest.raises(ValidationFailed):
            query(offset=offset)


def test_list_status_and_severity_lists():
    q = query(status=["investigating,Resolved", "investigating"], severity=["sev1,SEV2"])
    assert q.status == ["investigating", "resolved"]
    assert q.severity == ["SEV1", "SEV2"]
    assert query(status="").status is None


def test_list_invalid_severity():
    with pytest.raises(InvalidSeverity):
        query(severity="SEV1,SEV9")


def test_list_people_filters():
    q = query(assigned_to="Ana@Example.com", resolved_by="bo@example.com", team_name=" Payments ")
    assert (q.assigned_to, q.resolved_by, q.team_name) == ("ana@example.com", "bo@example.com", "Payments")
    with pytest.raises(ValidationFailed):
        query(assigned_to="ana")


def test_list_unknown_parameter():
    with pytest.raises(ValidationFailed) as caught:
        query(sort="asc")
    assert caught.value.details["fields"] == [{"field": "sort", "message": "unknown field"}]


def test_list_dates_are_utc():
    q = query(created_after="2026-11-22T10:00:00Z", created_before="2026-11-22T14:00:00+02:00")
    assert q.created_after == datetime(2026, 11, 22, 10, tzinfo=UTC)
    assert q.created_before == datetime(2026, 11, 22, 12, tzinfo=UTC)
    assert q.created_before.tzinfo == UTC


def test_list_dates_need_an_offset():
    # Issue #13: a time without an offset used to be taken as UTC; RFC 3339 requires the offset.
    with pytest.raises(ValidationFailed) as caught:
        query(created_after="2026-11-22T10:00:00")
    assert caught.value.details["fields"][0]["field"] == "created_after"


@pytest.mark.parametrize("prefix", ["created", "resolved"])
def test_list_after_later_than_before_is_refused(prefix):
    with pytest.raises(ValidationFailed) as caught:
        query(**{f"{prefix}_after": "2026-11-22T12:00:01Z", f"{prefix}_before": "2026-11-22T12:00:00Z"})
    assert caught.value.details["fields"][0]["field"] == f"{prefix}_before"
    same = query(**{f"{prefix}_after": "2026-11-22T12:00:00Z", f"{prefix}_before": "2026-11-22T12:00:00Z"})
    assert getattr(same, f"{prefix}_after") == getattr(same, f"{prefix}_before")


def test_list_bad_date():
    with pytest.raises(ValidationFailed):
        query(created_after="yesterday")


# ---------------------------------------------------------------- responses


def incident(**overrides):
    data = {
        "incident_number": "INC-2026-1",
        "title": "Down",
        "description": None,
        "status": "new",
        "severity": "SEV1",
        "assigned_to": {"name": "Ana", "email": "ana@example.com"},
        "team": {"name": "Payments"},
        "created_at": T0,
        "acknowledged_at": None,
        "resolved_at": None,
    }
    data.update(overrides)
    return data


SPEC_FIELDS = [
    "incident_number",
    "title",
    "description",
    "status",
    "severity",
    "assigned_to",
    "team",
    "created_at",
    "acknowledged_at",
    "resolved_at",
]


def test_incident_v1_has_the_spec_fields_required():
    schema = m.IncidentV1.model_json_schema()
    assert list(schema["properties"])[: len(SPEC_FIELDS)] == SPEC_FIELDS
    assert set(schema["required"]) == set(SPEC_FIELDS)


def test_incident_serialises_times_as_utc_millis():
    offset = timezone(timedelta(hours=2))
    dumped = m.IncidentV1.model_validate(incident(acknowledged_at=T0.astimezone(offset))).model_dump(mode="json")
    assert dumped["created_at"] == "2026-11-22T12:00:00.000Z"
    assert dumped["acknowledged_at"] == "2026-11-22T12:00:00.000Z"
    assert dumped["resolved_at"] is None
    assert dumped["assigned_to"] == {"name": "Ana", "email": "ana@example.com"}
    assert dumped["service_keys"] == [] and dumped["resolved_by"] is None and dumped["sla"] is None


def test_incident_detail():
    detail = m.IncidentDetailV1.model_validate(
        incident(
            assigned_to=None,
            team=None,
            timeline=[
                {"event_type": "created", "title": "Created", "description": None, "user": None, "created_at": T0}
            ],
            timeline_meta={"has_more": False},
            paging={"status": "nobody", "reason": "Service Checkout has no escalation policy."},
        )
    )
    dumped = detail.model_dump(mode="json")
    assert dumped["paging"] == {
        "status": "nobody",
        "reason": "Service Checkout has no escalation policy.",
        "level": None,
        "fallback_contacts": [],
    }
    assert dumped["timeline_meta"] == {"limit": 50, "has_more": False}
    assert dumped["timeline"][0]["created_at"] == "2026-11-22T12:00:00.000Z"
    assert dumped["assigned_to"] is None and dumped["team"] is None


def test_small_results():
    assert m.AcknowledgeResultV1(incident_number="INC-2026-1", acknowledged=True, acknowledged_at=T0).model_dump(
        mode="json"
    ) == {"incident_number": "INC-2026-1", "acknowledged": True, "acknowledged_at": "2026-11-22T12:00:00.000Z"}
    result = m.PageResultV1(
        incident_number="INC-2026-1",
        sent=True,
        channels=["email"],
        deliveries=[m.DeliveryV1(channel="email", sent=True)],
    )
    assert result.model_dump(mode="json")["deliveries"] == [
        {"channel": "email", "sent": True, "error_code": None, "message": None}
    ]
    escalate = m.EscalateResultV1(
        incident_number="INC-2026-1", escalated=False, notified_emails=[], current_level=None, next_level=None
    )
    assert escalate.model_dump()["escalated"] is False


def test_incident_list_is_a_page():
    page = m.IncidentListV1(items=[m.IncidentV1.model_validate(incident())], total=1, has_more=False, next_offset=None)
    assert page.model_dump(mode="json")["items"][0]["incident_number"] == "INC-2026-1"


# ---------------------------------------------------------------- admin models


def test_workflow_v1_of_default():
    body = sm.WorkflowV1.of(DEFAULT_WORKFLOW).model_dump(mode="json")
    assert body == DEFAULT_WORKFLOW.to_dict()


def test_workflow_update_round_trip():
    update = sm.WorkflowUpdate.model_validate(DEFAULT_WORKFLOW.to_dict())
    assert update.to_workflow() == DEFAULT_WORKFLOW


def test_workflow_update_shape_errors():
    assert locs(sm.WorkflowUpdate, {"statuses": [], "initial_status": "new"}) == ["statuses"]
    bad = {"statuses": [{"name": "New", "category": "triggered"}], "initial_status": "new"}
    assert locs(sm.WorkflowUpdate, bad) == ["statuses.0.name"]
    bad = {"statuses": [{"name": "new", "category": "open"}], "initial_status": "new"}
    assert locs(sm.WorkflowUpdate, bad) == ["statuses.0.category"]
    assert locs(sm.WorkflowUpdate, {**DEFAULT_WORKFLOW.to_dict(), "version": 2}) == ["version"]


def test_workflow_update_meaning_errors():
    data = DEFAULT_WORKFLOW.to_dict()
    data["moves"]["new"] = ["investigating", "ghost"]
    update = sm.WorkflowUpdate.model_validate(data)
    with pytest.raises(ValidationFailed) as caught:
        update.to_workflow()
    assert {"field": "moves.new", "message": "'ghost' is not one of the statuses"} in caught.value.details["fields"]


def test_sla_settings_v1_of_defaults():
    body = sm.SlaSettingsV1.of(DEFAULT_SLA_SETTINGS).model_dump(mode="json")
    assert body["per_severity"]["SEV0"] == {"acknowledge_within_minutes": 5, "resolve_within_minutes": 60}
    assert list(body["per_severity"]) == ["SEV0", "SEV1", "SEV2", "SEV3", "SEV4"]


def test_sla_update_merges_and_clears():
    update = sm.SlaSettingsUpdate.model_validate(
        {"per_severity": {"sev1": {"acknowledge_within_minutes": 10}, "SEV3": {"resolve_within_minutes": None}}}
    )
    settings = update.apply_to(DEFAULT_SLA_SETTINGS)
    assert settings.per_severity["SEV1"] == SlaTarget(10, 240)
    assert settings.per_severity["SEV3"] == SlaTarget(240, None)


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"per_severity": {}}, "per_severity"),
        ({"per_severity": {"SEV1": {"acknowledge_within_minutes": 0}}}, "per_severity.SEV1.acknowledge_within_minutes"),
        ({"per_severity": {"SEV1": {"resolve_within_minutes": 527041}}}, "per_severity.SEV1.resolve_within_minutes"),
        (
            {"per_severity": {"SEV1": {"acknowledge_within_minutes": 9, "resolve_within_minutes": 8}}},
            "per_severity.SEV1",
        ),
        ({"per_severity": {"SEV1": {"ack": 1}}}, "per_severity.SEV1.ack"),
        ({"per_severity": {"SEV1": {}}, "extra": 1}, "extra"),
    ],
)
def test_sla_update_errors(body, where):
    assert where in locs(sm.SlaSettingsUpdate, body)


def test_sla_update_unknown_severity():
    with pytest.raises(InvalidSeverity):
        sm.SlaSettingsUpdate.model_validate({"per_severity": {"SEV9": {"acknowledge_within_minutes": 1}}})


def test_sla_update_checked_against_current_values():
    update = sm.SlaSettingsUpdate.model_validate({"per_severity": {"SEV0": {"acknowledge_within_minutes": 61}}})
    with pytest.raises(ValidationFailed):
        update.apply_to(DEFAULT_SLA_SETTINGS)


# ---------------------------------------------------------------- OpenAPI


def test_every_model_generates_a_json_schema():
    models = [
        value
        for module in (m, sm)
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == module.__name__
    ]
    assert len(models) > 20
    _, definitions = models_json_schema([(model, "validation") for model in models])
    json.dumps(definitions)
    create_schema = definitions["$defs"]["IncidentCreate"]
    assert create_schema["additionalProperties"] is False
    assert create_schema["properties"]["service_ids"]["maxItems"] == 50
    assert (
        create_schema["properties"]["service_ids"]["items"]["pattern"]
        == "^(svc_[a-z0-9]{10}|[Ss][Ee][Rr]-[0-9]{5,16})$"
    )


def test_schemas_form_a_valid_openapi_3_1_document():
    from openapi_spec_validator import validate

    from chalicelib.api.openapi import _query_parameters

    models = [m.IncidentDetailV1, m.IncidentListV1, m.IncidentCreate, m.IncidentUpdate, sm.SlaSettingsUpdate]
    _, definitions = models_json_schema(
        [(model, "validation") for model in models], ref_template="#/components/schemas/{model}"
    )
    document = {
        "openapi": "3.1.0",
        "info": {"title": "incidents", "version": "1.0.0"},
        "paths": {
            "/incidents": {
                "get": {
                    "parameters": _query_parameters(m.IncidentListQuery),
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
        "components": {"schemas": definitions["$defs"]},
    }
    validate(document)
