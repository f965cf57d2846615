"""The import's plan table and JSON, and the cut-over sheet, from a translation and a plan."""

from __future__ import annotations

from datetime import UTC, datetime

from chalicelib.client import document as doc
from chalicelib.client.importers import cutover, report
from chalicelib.client.importers.context import Intake, Translation
from chalicelib.client.importers.notes import Notes
from chalicelib.client.planner import Action, Change, Plan
from chalicelib.client.reconcile import Issued, Outcome

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def translation() -> Translation:
    notes = Notes()
    for n in range(5):
        notes.skip("contact_method", f"user{n}@x.test iPhone", f"M{n}", "push: none", "an SMS method")
    notes.approximate("service", "Checkout", "S1", "auto-resolve is not carried over")
    document = doc.Document(
        version=1,
        users=[doc.User(email="ann@x.test", name="Ann", source=doc.Source(vendor="pagerduty", id="U1"))],
        services=[doc.Service(name="Checkout", source=doc.Source(vendor="pagerduty", id="S1"))],
        integrations=[
            doc.Integration(name="Checkout: Events", type="pagerduty", service="Checkout"),
            doc.Integration(name="Checkout: API", type="opsgenie", service="Checkout"),
            doc.Integration(name="Checkout: SNS", type="cloudwatch", service="Checkout"),
        ],
    )
    intakes = [
        Intake(
            "I1",
            "Checkout: Events",
            "events_api_v2_inbound_integration",
            "Checkout: Events",
            "pagerduty",
            True,
            "Checkout",
        ),
        Intake("I2", "Checkout: API", "API", "Checkout: API", "opsgenie", True, "Checkout"),
        Intake(
            "I3",
            "Checkout: SNS",
            "aws_cloudwatch_inbound_integration",
            "Checkout: SNS",
            "cloudwatch",
            False,
            "Checkout",
        ),
    ]
    return Translation(document, notes, intakes, heartbeats=["nightly"])


def test_the_table_lists_changes_and_groups_notes_that_share_a_reason() -> None:
    made = translation()
    service = (made.document.services or [])[0]
    plan = Plan(
        [
            Action("create", "users", "ann@x.test", "ann@x.test", desired=(made.document.users or [])[0]),
            Action(
                "update",
                "services",
                "checkout",
                "Checkout",
                [Change("urgency_rule", "low", "high")],
                desired=service,
                current_key="checkout",
            ),
        ]
    )
    text = report.table(plan, made, vendor="PagerDuty", counts={"users": 1, "services": 1})
    lines = text.splitlines()
    assert lines[0] == "Read from PagerDuty: 1 users, 1 services."
    assert lines[3].split() == ["create", "user", "ann@x.test", "U1"]
    assert lines[4].split()[:4] == ["update", "service", "Checkout", "S1"] and lines[4].endswith("changes urgency_rule")
    assert lines[5].split()[:6] == ["not", "imported", "contact", "method", "5", "of"]
    assert lines[5].endswith(
        "push: none (nearest in Tocsin: an SMS method); e.g. user0@x.test iPhone, user1@x.test iPhone, ..."
    )
    assert lines[6].split()[:4] == ["approximated", "service", "Checkout", "S1"]
    assert lines[-1] == "Plan: 1 to create, 1 to update, 3 unchanged; 5 vendor object(s) not imported, 1 approximated."


def test_the_json_lists_every_object_and_note() -> None:
    body = report.as_json(Plan([]), translation(), vendor="pagerduty", counts={"users": 1})
    assert body["changes_pending"] is False
    assert body["summary"] == {"create": 0, "update": 0, "unchanged": 5, "skipped": 5, "approximated": 1}
    assert {o["action"] for o in body["objects"]} == {"unchanged"} and len(body["not_carried_over"]) == 6
    assert body["objects"][0] == {
        "action": "unchanged",
        "kind": "user",
        "name": "ann@x.test",
        "vendor_id": "U1",
        "reason": None,
        "changes": [],
    }


def test_the_sheet_shows_keys_once_and_how_to_get_new_ones_after() -> None:
    made = translation()
    outcome = Outcome(
        issued=[
            Issued("integrations", "Checkout: Events", {"url": "https://t.example/webhooks/k1", "routing_key": "k1"}),
            Issued("integrations", "Checkout: API", {"url": "https://t.example/webhooks/k2", "routing_key": "k2"}),
            Issued("integrations", "Checkout: SNS", {"url": "https://t.example/webhooks/k3", "routing_key": "k3"}),
            Issued("heartbeats", "nightly", {"ping_url": "https://t.example/heartbeats/hb.x"}),
        ]
    )
    listed = [
        {"id": f"int{n}", "name": name, "state": "active", "routing_key_hint": f"k{n}"}
        for n, name in enumerate(("Checkout: Events", "Checkout: API", "Checkout: SNS"), start=1)
    ]
    beats = [{"id": "hb_1", "name": "nightly", "enabled": False}]
    first = cutover.text(cutover.sheet(made, outcome, listed, beats, vendor="pagerduty", base_url="https://t.example/"))
    assert "Every sender still points at PagerDuty: nothing reaches Tocsin until you switch it" in first
    assert "events URL: https://t.example/v2/enqueue   routing key: k1" in first
    assert "API URL: https://t.example   GenieKey: k2" in first
    assert "URL: https://t.example/webhooks/k3" in first
    assert (
        first.index("Keep the payload")
        < first.index("k1")
        < first.index("Switch to Tocsin's format")
        < first.index("k3")
    )
    assert "  nightly (paused): https://t.example/heartbeats/hb.x" in first

    later = cutover.sheet(made, None, listed, beats, vendor="pagerduty", base_url="https://t.example")
    text = cutover.text(later)
    assert "made by an earlier run (its key starts k1); its key was shown then." in text
    assert "POST https://t.example/api/v1/integrations/int1/regenerate" in text
    assert "POST https://t.example/api/v1/heartbeats/hb_1/regenerate" in text
    senders = later.as_dict()["senders"]
    assert [(s["integration_id"], s["routing_key"], s["keeps_payload"]) for s in senders] == [
        ("int1", None, True),
        ("int2", None, True),
        ("int3", None, False),
    ]


def test_the_check_against_the_vendor_names_the_schedules_that_differ() -> None:
    from chalicelib.client.importers import verify

    same = verify.Check("Primary", "P1", probes=30)
    off = verify.Check("Nights", "P2", probes=12, differences=[(NOW, "ann@x.test", None), (NOW, "ann@x.test", "b@x")])
    text = verify.text([same, off], "PagerDuty")
    assert text.splitlines() == [
        "Checked against PagerDuty's own final schedule for the weeks ahead: 1 of 2 schedule(s) give the same person "
        "at every handoff.",
        "  ! 'Nights' (P2): 2 of 12 instants differ, first at 2026-11-22T12:00:00Z: "
        "PagerDuty ann@x.test, Tocsin nobody",
    ]
    assert verify.text([], "PagerDuty") == ""
    assert verify.as_json([off])[0]["differences"][1] == {
        "at": "2026-11-22T12:00:00Z",
        "vendor": "ann@x.test",
        "tocsin": "b@x",
    }
