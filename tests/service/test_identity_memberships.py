"""Console memberships on moto: an invitation is recorded once and binds nothing; accepting is the
only way to an accepted membership; declining removes only an invitation; legacy identities'
`custom:org` counts as accepted."""

from __future__ import annotations

from chalicelib.identity import memberships
from tests.conftest import NOW


def test_an_invitation_is_recorded_once_and_accepted_only_by_accepting(aws_env: None) -> None:
    first = memberships.invite(email=" Dana@Acme.test ", organization_id="org-a", user_id="u1", now=NOW)
    assert (first.email, first.organization_id, first.user_id) == ("dana@acme.test", "org-a", "u1")
    assert not first.accepted
    again = memberships.invite(email="dana@acme.test", organization_id="org-a", user_id="u2", now=NOW)
    assert again == first  # a redelivery, or a re-created user: the invitation as it was
    memberships.accept(email="DANA@acme.test", organization_id="org-a", now=NOW)
    memberships.accept(email="dana@acme.test", organization_id="org-a", now=NOW)  # idempotent
    memberships.invite(email="dana@acme.test", organization_id="org-a", user_id="u3", now=NOW)
    [accepted] = memberships.memberships_of("dana@acme.test")
    assert (accepted.user_id, accepted.accepted) == ("u1", True)  # a new invitation never un-accepts


def test_declining_removes_an_invitation_and_never_a_membership(aws_env: None) -> None:
    memberships.invite(email="dana@acme.test", organization_id="org-a", user_id="u1", now=NOW)
    memberships.invite(email="dana@acme.test", organization_id="org-b", user_id="u2", now=NOW)
    memberships.accept(email="dana@acme.test", organization_id="org-a", now=NOW)
    memberships.decline(email="dana@acme.test", organization_id="org-a")  # accepted: stays
    memberships.decline(email="dana@acme.test", organization_id="org-b")
    memberships.decline(email="dana@acme.test", organization_id="org-c")  # none: nothing happens
    assert [(m.organization_id, m.accepted) for m in memberships.memberships_of("dana@acme.test")] == [("org-a", True)]


def test_a_legacy_identity_counts_its_organization_as_accepted(aws_env: None) -> None:
    memberships.invite(email="dana@acme.test", organization_id="org-a", user_id="u1", now=NOW)
    found = memberships.memberships_of("dana@acme.test")
    assert memberships.with_legacy(found, "dana@acme.test", None) == found
    merged = memberships.with_legacy(found, "dana@acme.test", "org-a")
    assert [(m.organization_id, m.accepted) for m in merged] == [("org-a", True)]
    other = memberships.with_legacy(found, "dana@acme.test", "org-z")
    assert [(m.organization_id, m.accepted) for m in other] == [("org-z", True), ("org-a", False)]
    # Accepting an organization known only from the legacy attribute writes its record.
    memberships.accept(email="dana@acme.test", organization_id="org-z", now=NOW)
    assert [m.organization_id for m in memberships.memberships_of("dana@acme.test") if m.accepted] == ["org-z"]


def test_notified_is_recorded(aws_env: None) -> None:
    memberships.invite(email="dana@acme.test", organization_id="org-a", user_id="u1", now=NOW)
    memberships.mark_notified(email="dana@acme.test", organization_id="org-a", now=NOW)
    memberships.mark_notified(email="dana@acme.test", organization_id="org-q", now=NOW)  # none: nothing written
    assert [(m.organization_id, m.notified) for m in memberships.memberships_of("dana@acme.test")] == [("org-a", True)]
