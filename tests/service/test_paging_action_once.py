"""An action from a page happens once per its id (chalicelib/paging/action_once.py), on moto: of
racing identical requests one acts; later ones get the first answer as a replay; an action that
failed unexpectedly releases its claim for the provider's retry."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from chalicelib.paging import action_once
from chalicelib.paging.respond import Outcome
from tests.conftest import NOW

pytestmark = pytest.mark.usefixtures("aws_env")


def test_the_id_is_per_channel_and_per_request() -> None:
    key = action_once.action_id("voice", "token", "CA1", "4")
    assert key.startswith("action#voice#") and key == action_once.action_id("voice", "token", "CA1", "4")
    assert key != action_once.action_id("voice", "token", "CA1", "6")
    assert key != action_once.action_id("slack", "token", "CA1", "4")
    assert action_once.action_id("voice", "a", "bc") != action_once.action_id("voice", "ab", "c")


def test_racing_identical_requests_act_once_and_replays_get_the_first_answer() -> None:
    workers = 6
    barrier = threading.Barrier(workers)
    acted: list[int] = []

    def request(number: int) -> Outcome:
        def act() -> Outcome:
            acted.append(number)
            return Outcome(True, "INC-2026-0001 escalated by ana@acme.test.", "INC-2026-0001")

        barrier.wait()
        return action_once.once("action#test#race", NOW, act)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        answers = list(pool.map(request, range(workers)))
    assert len(acted) == 1
    assert [answer.replay for answer in answers].count(False) == 1
    for answer in answers:
        assert answer.replay or answer.done
        assert answer.message in ("INC-2026-0001 escalated by ana@acme.test.", action_once.IN_FLIGHT)
    later = action_once.once("action#test#race", NOW + timedelta(hours=1), lambda: Outcome(True, "again"))
    assert later == Outcome(True, "INC-2026-0001 escalated by ana@acme.test.", "INC-2026-0001", replay=True)
    assert len(acted) == 1


def test_an_action_that_failed_unexpectedly_may_be_retried() -> None:
    def broken() -> Outcome:
        raise RuntimeError("store down")

    with pytest.raises(RuntimeError):
        action_once.once("action#test#retry", NOW, broken)
    retried = action_once.once("action#test#retry", NOW, lambda: Outcome(False, "INC-1 was already resolved."))
    assert retried == Outcome(False, "INC-1 was already resolved.")
    assert action_once.once("action#test#retry", NOW, lambda: Outcome(True, "x")).message == retried.message
