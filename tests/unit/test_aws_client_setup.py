"""aws.add_client_setup: a set-up an entry point adds runs on every client of its service as it is
built, across aws.reset(), until it is removed (the local stack records SES and SNS this way)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import aws


@pytest.fixture
def clean_clients() -> Iterator[None]:
    aws.reset()
    yield
    aws.reset()


def test_a_setup_runs_once_on_each_client_built_until_removed(clean_clients: None) -> None:
    seen: list[Any] = []
    cached = aws.client("sqs")
    aws.add_client_setup("sqs", seen.append)
    aws.add_client_setup("sqs", seen.append)  # the same set-up again: nothing more
    first = aws.client("sqs")
    assert first is not cached and seen == [first]  # the cached client was dropped: built again, set up
    assert aws.client("sqs") is first and seen == [first]
    aws.client("sns")
    assert seen == [first]  # another service's clients are not its business
    aws.reset()
    second = aws.client("sqs")
    assert seen == [first, second]  # kept across a reset
    aws.remove_client_setup("sqs", seen.append)
    third = aws.client("sqs")
    assert third is not second and seen == [first, second]
    aws.remove_client_setup("sqs", seen.append)  # removing what is not there: nothing


def test_an_injected_client_is_left_as_it_is(clean_clients: None) -> None:
    seen: list[Any] = []
    aws.add_client_setup("ses", seen.append)
    try:
        fake = object()
        aws.set_client("ses", fake)
        assert aws.client("ses") is fake and seen == []
    finally:
        aws.remove_client_setup("ses", seen.append)
