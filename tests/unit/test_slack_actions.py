"""Slack clicks, the pure parts: the signature (Slack's own documented example), the page's
buttons, parsing block_actions, and the outcome block."""

from __future__ import annotations

import dataclasses
import json
import urllib.parse

import pytest

from chalicelib.errors import InvalidPayload
from chalicelib.notification import slack
from chalicelib.paging import slack_actions
from chalicelib.paging.respond import Outcome
from tests.unit.test_notification_renderers import ANA, NOTE

# https://api.slack.com/authentication/verifying-requests-from-slack (the worked example).
SLACK_EXAMPLE_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
SLACK_EXAMPLE_BODY = (
    b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V"
    b"&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text="
    b"&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN"
    b"&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
)


def test_signature_matches_slacks_documented_example() -> None:
    assert (
        slack_actions.signature_of(SLACK_EXAMPLE_SECRET, "1531420618", SLACK_EXAMPLE_BODY)
        == "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
    )


def test_every_page_carries_acknowledge_resolve_and_escalate_buttons() -> None:
    note = dataclasses.replace(NOTE, organization_id="org-1")
    [actions] = [block for block in slack.render(note, ANA)["blocks"] if block["type"] == "actions"]
    buttons = {element["action_id"]: element for element in actions["elements"]}
    assert list(buttons) == ["tocsin_acknowledge", "tocsin_resolve", "tocsin_escalate", "open_incident"]
    for action_id, label in [
        ("tocsin_acknowledge", "Acknowledge"),
        ("tocsin_resolve", "Resolve"),
        ("tocsin_escalate", "Escalate"),
    ]:
        assert buttons[action_id]["value"] == "org-1/INC-2026-0042"
        assert buttons[action_id]["text"] == {"type": "plain_text", "text": label}
        assert "url" not in buttons[action_id]


def _body(payload: object) -> bytes:
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()


def test_parse_click_reads_who_what_and_where() -> None:
    click = slack_actions.parse_click(
        _body(
            {
                "type": "block_actions",
                "user": {"id": "U1"},
                "container": {"channel_id": "D1", "message_ts": "1.2"},
                "message": {"ts": "1.2", "blocks": [{"type": "section"}, "junk"]},
                "actions": [{"action_id": "tocsin_resolve", "value": "org-1/INC-2026-0042"}],
            }
        )
    )
    assert click is not None and click.click_id.startswith("action#slack#")
    expected = slack_actions.Click("U1", "resolve", "org-1", "INC-2026-0042", "D1", "1.2", [{"type": "section"}])
    assert click == dataclasses.replace(expected, click_id=click.click_id)
    bare = slack_actions.parse_click(
        _body(
            {
                "type": "block_actions",
                "user": {"id": "U1"},
                "actions": [{"action_id": "tocsin_escalate", "value": "INC-1"}],
            }
        )
    )
    assert bare is not None and bare.organization_id is None and bare.incident_number == "INC-1"


def test_a_click_is_one_by_slacks_ids_or_else_by_its_body_and_names_its_workspace() -> None:
    def parsed(**fields: object) -> slack_actions.Click:
        action = {"action_id": "tocsin_acknowledge", "value": "org-1/INC-1", **fields.pop("action", {})}  # type: ignore[dict-item]
        click = slack_actions.parse_click(
            _body({"type": "block_actions", "user": {"id": "U1"}, "actions": [action], **fields})
        )
        assert click is not None
        return click

    slacks = parsed(team={"id": "T1"}, trigger_id="t.1", action={"action_ts": "1.5"})
    assert slacks.team_id == "T1"
    # The same click is the same id, whatever else the body carries; another click is another.
    assert parsed(team={"id": "T1"}, trigger_id="t.1", action={"action_ts": "1.5"}, x=1).click_id == slacks.click_id
    assert parsed(team={"id": "T1"}, trigger_id="t.2", action={"action_ts": "1.6"}).click_id != slacks.click_id
    # Without Slack's ids, the body decides: identical bodies are one click.
    assert parsed().click_id == parsed().click_id != parsed(x=1).click_id
    assert parsed(user={"id": "U1", "team_id": "T2"}).team_id == "T2"  # Enterprise Grid puts it on the user
    assert parsed().team_id is None


@pytest.mark.parametrize(
    "body",
    [b"", b"payload=", b"payload=%5B", _body({"type": "block_actions", "user": {}, "actions": []}), b"x" * 70_000],
)
def test_parse_click_refuses_what_is_not_slacks_form(body: bytes) -> None:
    with pytest.raises(InvalidPayload):
        slack_actions.parse_click(body)


def test_outcome_block_replaces_an_earlier_one() -> None:
    first = slack_actions.outcome_blocks([{"type": "section"}], Outcome(True, "INC-1 acknowledged by <a>.", "INC-1"))
    second = slack_actions.outcome_blocks(first, Outcome(True, "INC-1 resolved by a.", "INC-1"))
    assert len(second) == 2 and second[0] == {"type": "section"}
    assert second[1]["elements"][0]["text"] == ":white_check_mark: INC-1 resolved by a."
    assert "&lt;a&gt;" in first[1]["elements"][0]["text"]


def test_a_signature_header_with_any_characters_is_refused_not_crashed() -> None:
    from datetime import UTC, datetime

    from chalicelib.errors import InvalidSignature

    now = datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(InvalidSignature):
        slack_actions.verify_signature(
            body=b"x", timestamp=str(int(now.timestamp())), signature="v0=\u00e9\u2603", now=now, secret="shh"
        )
    with pytest.raises(InvalidSignature):
        slack_actions.verify_signature(body=b"x", timestamp="soon", signature="v0=00", now=now, secret="shh")
