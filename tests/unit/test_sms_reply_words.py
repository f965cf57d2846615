"""The words an SMS reply may use, and the short code an SMS page carries."""

from __future__ import annotations

import pytest

from chalicelib.paging.sms_reply import Reply, read_reply, short_code


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4", Reply("acknowledge", None)),
        ("ack", Reply("acknowledge", None)),
        (" ACK ", Reply("acknowledge", None)),
        ("Acknowledge.", Reply("acknowledge", None)),
        ("ack 42", Reply("acknowledge", "42")),
        ("ack #0042", Reply("acknowledge", "42")),
        ("ack INC-2026-0042", Reply("acknowledge", "42")),
        ("4 42", Reply("acknowledge", "42")),
        ("6", Reply("resolve", None)),
        ("resolve", Reply("resolve", None)),
        ("Resolve 7!", Reply("resolve", "7")),
    ],
)
def test_each_reply_form(text: str, expected: Reply) -> None:
    assert read_reply(text) == expected


@pytest.mark.parametrize("text", ["", "5", "8", "yes", "ack me", "ack 42 43", "acked", "stop", "ack -1", "44"])
def test_anything_else_is_not_a_reply(text: str) -> None:
    assert read_reply(text) is None


def test_the_short_code_is_the_incident_numbers_sequence() -> None:
    assert short_code("INC-2026-0042") == "42"
    assert short_code("INC-2027-12345") == "12345"
