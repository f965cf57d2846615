"""Teams on moto: unique names, members, renames, versioned membership changes."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.directory import teams, users
from chalicelib.directory.tables import TeamRecord
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.store import owner_of
from tests.conftest import NOW, make_org


def _user(org, email):
    return users.create_user(organization_id=org.organization_id, name=email.split("@")[0], email=email, now=NOW)


def test_create_team_with_members(org):
    ann = _user(org, "ann@example.com")
    bob = _user(org, "bob@example.com")
    team = teams.create_team(
        organization_id=org.organization_id,
        name=" Payments  Core ",
        now=NOW,
        description=" Owns payments ",
        member_ids=[ann.user_id, bob.user_id, ann.user_id],
    )
    assert team.name == "Payments Core"
    assert team.description == "Owns payments"
    assert team.member_ids == [ann.user_id, bob.user_id]
    assert team.member_count == 2
    assert team.is_active is True
    assert team.created_at == NOW
    assert teams.get_team(organization_id=org.organization_id, team_id=team.team_id) == team
    assert owner_of(organization_id=org.organization_id, unique_key="team-name#payments core") == team.team_id


def test_create_team_rejects_unknown_or_foreign_members(org):
    other = make_org("Other")
    foreign = _user(other, "x@example.com")
    with pytest.raises(ValidationFailed) as raised:
        teams.create_team(organization_id=org.organization_id, name="T", now=NOW, member_ids=[foreign.user_id, "nope"])
    field = raised.value.details["fields"][0]
    assert field["field"] == "member_ids"
    assert foreign.user_id in field["message"]
    assert "nope" in field["message"]
    assert teams.list_teams(organization_id=org.organization_id) == []
    # Nothing was claimed either: the name is still free.
    assert teams.create_team(organization_id=org.organization_id, name="T", now=NOW).name == "T"


def test_team_names_are_unique_case_insensitively(org):
    teams.create_team(organization_id=org.organization_id, name="SRE", now=NOW)
    with pytest.raises(Conflict) as raised:
        teams.create_team(organization_id=org.organization_id, name=" sre ", now=NOW)
    assert raised.value.details == {"fields": [{"field": "name", "message": "already in use"}]}
    # Another organization may use it.
    assert teams.create_team(organization_id=make_org("Other").organization_id, name="SRE", now=NOW).name == "SRE"


def test_find_team_by_name(org):
    team = teams.create_team(organization_id=org.organization_id, name="Payments Core", now=NOW)
    oid = org.organization_id
    assert teams.find_team_by_name(organization_id=oid, name="payments core") == team
    assert teams.find_team_by_name(organization_id=oid, name=" PAYMENTS   CORE ") == team
    assert teams.find_team_by_name(organization_id=oid, name="payments") is None
    assert teams.find_team_by_name(organization_id=oid, name="") is None
    assert teams.find_team_by_name(organization_id=make_org("Other").organization_id, name="payments core") is None


def test_list_teams_newest_first_with_filters(org):
    oid = org.organization_id
    a = teams.create_team(organization_id=oid, name="Alpha", now=NOW)
    b = teams.create_team(organization_id=oid, name="Beta", now=NOW + timedelta(seconds=1))
    c = teams.create_team(organization_id=oid, name="Alphabet", now=NOW + timedelta(seconds=2))
    teams.update_team(organization_id=oid, team_id=b.team_id, now=NOW, is_active=False)
    assert [t.team_id for t in teams.list_teams(organization_id=oid)] == [c.team_id, b.team_id, a.team_id]
    assert [t.team_id for t in teams.list_teams(organization_id=oid, search="ALPHA")] == [c.team_id, a.team_id]
    assert [t.team_id for t in teams.list_teams(organization_id=oid, is_active=False)] == [b.team_id]


def test_get_team_not_found(org):
    team = teams.create_team(organization_id=org.organization_id, name="T", now=NOW)
    for team_id in ["missing", "a/b", "x" * 300]:
        with pytest.raises(NotFound):
            teams.get_team(organization_id=org.organization_id, team_id=team_id)
    with pytest.raises(NotFound):
        teams.get_team(organization_id=make_org("Other").organization_id, team_id=team.team_id)


def test_update_team_rename_moves_the_guard(org):
    oid = org.organization_id
    team = teams.create_team(organization_id=oid, name="Core", now=NOW)
    renamed = teams.update_team(organization_id=oid, team_id=team.team_id, now=NOW, name="Platform", description="d")
    assert (renamed.name, renamed.description) == ("Platform", "d")
    assert owner_of(organization_id=oid, unique_key="team-name#core") is None
    assert owner_of(organization_id=oid, unique_key="team-name#platform") == team.team_id
    assert teams.find_team_by_name(organization_id=oid, name="platform") == renamed
    # The old name is free again; a case-only rename keeps the guard.
    teams.create_team(organization_id=oid, name="Core", now=NOW)
    recased = teams.update_team(organization_id=oid, team_id=team.team_id, now=NOW, name="PLATFORM")
    assert recased.name == "PLATFORM"
    assert owner_of(organization_id=oid, unique_key="team-name#platform") == team.team_id


def test_update_team_to_a_taken_name_changes_nothing(org):
    oid = org.organization_id
    teams.create_team(organization_id=oid, name="Core", now=NOW)
    other = teams.create_team(organization_id=oid, name="Edge", now=NOW)
    with pytest.raises(Conflict):
        teams.update_team(organization_id=oid, team_id=other.team_id, now=NOW, name="core", description="changed")
    assert teams.get_team(organization_id=oid, team_id=other.team_id) == other


def test_update_team_other_fields(org):
    oid = org.organization_id
    ann = _user(org, "ann@example.com")
    team = teams.create_team(organization_id=oid, name="Core", now=NOW, description="x")
    updated = teams.update_team(
        organization_id=oid, team_id=team.team_id, now=NOW, description=None, is_active=False, member_ids=[ann.user_id]
    )
    assert (updated.description, updated.is_active, updated.member_ids) == (None, False, [ann.user_id])
    with pytest.raises(ValidationFailed):
        teams.update_team(organization_id=oid, team_id=team.team_id, now=NOW, member_ids=["ghost"])
    with pytest.raises(NotFound):
        teams.update_team(organization_id=oid, team_id="missing", now=NOW, is_active=True)


def test_add_and_remove_members_are_idempotent_and_versioned(org):
    oid = org.organization_id
    ann = _user(org, "ann@example.com")
    bob = _user(org, "bob@example.com")
    team = teams.create_team(organization_id=oid, name="Core", now=NOW)
    version = TeamRecord.get(oid, team.team_id).version

    team = teams.add_member(organization_id=oid, team_id=team.team_id, user_id=ann.user_id)
    team = teams.add_member(organization_id=oid, team_id=team.team_id, user_id=bob.user_id)
    assert team.member_ids == [ann.user_id, bob.user_id]
    again = teams.add_member(organization_id=oid, team_id=team.team_id, user_id=ann.user_id)
    assert again.member_ids == [ann.user_id, bob.user_id]
    assert TeamRecord.get(oid, team.team_id).version == version + 2

    team = teams.remove_member(organization_id=oid, team_id=team.team_id, user_id=ann.user_id)
    assert team.member_ids == [bob.user_id]
    assert teams.remove_member(organization_id=oid, team_id=team.team_id, user_id=ann.user_id).member_ids == [
        bob.user_id
    ]
    assert teams.get_team(organization_id=oid, team_id=team.team_id).member_count == 1


def test_member_changes_need_existing_team_and_user(org):
    oid = org.organization_id
    ann = _user(org, "ann@example.com")
    team = teams.create_team(organization_id=oid, name="Core", now=NOW)
    with pytest.raises(NotFound, match="User"):
        teams.add_member(organization_id=oid, team_id=team.team_id, user_id="ghost")
    with pytest.raises(NotFound, match="Team"):
        teams.add_member(organization_id=oid, team_id="ghost", user_id=ann.user_id)
    with pytest.raises(NotFound, match="Team"):
        teams.remove_member(organization_id=oid, team_id="ghost", user_id=ann.user_id)
    foreign = _user(make_org("Other"), "x@example.com")
    with pytest.raises(NotFound):
        teams.add_member(organization_id=oid, team_id=team.team_id, user_id=foreign.user_id)


def test_get_teams_batches(org):
    oid = org.organization_id
    a = teams.create_team(organization_id=oid, name="A", now=NOW)
    b = teams.create_team(organization_id=oid, name="B", now=NOW)
    assert teams.get_teams(organization_id=oid, team_ids=[a.team_id, b.team_id, "nope", "a/b"]) == {
        a.team_id: a,
        b.team_id: b,
    }
