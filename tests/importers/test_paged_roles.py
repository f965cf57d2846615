"""A vendor's read-only person whom an escalation policy pages is imported as a responder, with a
note (Tocsin refuses a policy that pages a viewer); nobody else's role changes."""

from __future__ import annotations

from chalicelib.client import document as doc
from chalicelib.client.importers.notes import Notes
from chalicelib.client.importers.paged_roles import paged_directly, responders_where_paged


def user(email: str, role: str) -> doc.User:
    return doc.User(email=email, name=email.split("@")[0], role=role, source=doc.Source(vendor="opsgenie", id=email))


def policy(*emails: str) -> doc.EscalationPolicy:
    return doc.EscalationPolicy(
        name="Payments",
        levels=[doc.Level(delay_minutes=5, targets=[doc.Target(user=email) for email in emails])],
    )


def test_a_paged_viewer_becomes_a_responder_and_it_is_noted() -> None:
    notes = Notes()
    users = [user("vi@x.test", "viewer"), user("ob@x.test", "viewer"), user("ad@x.test", "admin")]
    kept = responders_where_paged(users, [policy("VI@x.test", "ad@x.test")], notes)
    assert [(u.email, u.role) for u in kept] == [
        ("vi@x.test", "responder"),
        ("ob@x.test", "viewer"),
        ("ad@x.test", "admin"),
    ]
    [note] = notes.items
    assert (note.kind, note.name, note.vendor_id, note.outcome) == ("user", "vi@x.test", "vi@x.test", "approximated")
    assert "viewer whom an escalation policy pages" in note.reason and note.nearest == "the responder role"


def test_schedule_targets_are_not_people_paged_directly() -> None:
    level = doc.Level(delay_minutes=5, targets=[doc.Target(schedule="Primary"), doc.Target(user="a@x.test")])
    assert paged_directly([doc.EscalationPolicy(name="P", levels=[level])]) == {"a@x.test"}
    assert responders_where_paged([], [], Notes()) == []
