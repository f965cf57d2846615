"""Pure directory rules: identifier formats, normalisation and search matching."""

from __future__ import annotations

import re

import pytest

from chalicelib.directory import rules
from chalicelib.errors import ValidationFailed


def test_new_service_key_is_svc_and_ten_lowercase_alphanumerics():
    keys = {rules.new_service_key() for _ in range(200)}
    assert len(keys) == 200
    for key in keys:
        assert re.fullmatch(r"svc_[a-z0-9]{10}", key)
        assert rules.is_service_key(key)


@pytest.mark.parametrize(
    "value", ["svc_ABCDEFGHIJ", "svc_abc", "svc_abcdefghijk", "SVC_abcdefghij", "abcdefghij", "svc_abcde-ghij", ""]
)
def test_is_service_key_rejects_other_shapes(value):
    assert not rules.is_service_key(value)


def test_service_id_format():
    assert rules.format_service_id(1) == "SER-00001"
    assert rules.format_service_id(42) == "SER-00042"
    assert rules.format_service_id(123456) == "SER-123456"
    assert rules.is_service_id("SER-00001")
    assert not rules.is_service_id("SER-1")
    assert not rules.is_service_id("ser-00001")
    assert not rules.is_service_id("SER-0000a")


def test_normalize_service_id_accepts_any_case_prefix():
    assert rules.normalize_service_id("ser-00007") == "SER-00007"
    assert rules.normalize_service_id("Ser-00007") == "SER-00007"
    assert rules.normalize_service_id("svc_abcdefghij") == "svc_abcdefghij"


@pytest.mark.parametrize("value", ["0b6f8c1e-6a0e-4f3a-9d47-2c7d1b3e9f10", "abc", "a_b-c", "x" * 64])
def test_item_ids_accepted(value):
    assert rules.is_item_id(value)


@pytest.mark.parametrize("value", ["", "x" * 65, "a/b", "a b", "a#b", "ü"])
def test_item_ids_rejected(value):
    assert not rules.is_item_id(value)


def test_clean_name_trims_and_collapses_whitespace():
    assert rules.clean_name("  Payments   API ") == "Payments API"


@pytest.mark.parametrize("value", ["", "   ", "x" * 101])
def test_clean_name_rejects_empty_or_long(value):
    with pytest.raises(ValidationFailed) as raised:
        rules.clean_name(value)
    assert raised.value.details == {
        "fields": [{"field": "name", "message": raised.value.details["fields"][0]["message"]}]
    }


def test_name_key_is_case_and_space_insensitive():
    assert rules.name_key("Payments  API") == rules.name_key(" payments api ") == "payments api"
    assert rules.guard_key(rules.TEAM_NAME_GUARD, rules.name_key("Core")) == "team-name#core"


def test_clean_description():
    assert rules.clean_description(None) is None
    assert rules.clean_description("  ") is None
    assert rules.clean_description(" text ") == "text"
    assert rules.clean_description("x" * 1000) == "x" * 1000
    with pytest.raises(ValidationFailed):
        rules.clean_description("x" * 1001)


@pytest.mark.parametrize("value", ["a@b.io", "first.last+tag@sub.example.com", "A@B.IO"])
def test_valid_emails(value):
    assert rules.is_valid_email(value)


@pytest.mark.parametrize("value", ["", "ab.io", "a@b", "a b@c.io", "a@@b.io", "a@b .io", "x" * 250 + "@b.io"])
def test_invalid_emails(value):
    assert not rules.is_valid_email(value)


def test_normalize_email_lowercases_and_trims():
    assert rules.normalize_email("  Ann.Lee@Example.COM ") == "ann.lee@example.com"
    with pytest.raises(ValidationFailed) as raised:
        rules.normalize_email("not-an-email")
    assert raised.value.details == {"fields": [{"field": "email", "message": "must be a valid email address"}]}


def test_slack_user_id():
    assert rules.clean_slack_user_id(None) is None
    assert rules.clean_slack_user_id(" ") is None
    assert rules.clean_slack_user_id(" U012ABC ") == "U012ABC"
    with pytest.raises(ValidationFailed):
        rules.clean_slack_user_id("U01 2")


def test_roles_and_severities():
    for role in ("owner", "admin", "responder", "viewer"):
        assert rules.check_role(role) == role
    with pytest.raises(ValidationFailed):
        rules.check_role("superuser")
    assert [s for s in rules.SEVERITIES if rules.is_severity(s)] == ["SEV0", "SEV1", "SEV2", "SEV3", "SEV4"]
    assert not rules.is_severity("sev1")
    assert not rules.is_severity("SEV5")


@pytest.mark.parametrize(
    ("term", "values", "expected"),
    [
        (None, ("Ann",), True),
        ("", ("Ann",), True),
        ("  ", ("Ann",), True),
        ("ann", ("Ann Lee", None), True),
        ("LEE", ("Ann Lee", None), True),
        ("example.com", ("Ann", "ann@example.com"), True),
        ("bob", ("Ann", "ann@example.com"), False),
        ("ann", (None, None), False),
        ("  ann ", ("Joanna",), True),
    ],
)
def test_matches_search(term, values, expected):
    assert rules.matches_search(term, *values) is expected


def test_unique_in_order():
    assert rules.unique_in_order(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]
