"""Console sessions end after the idle time and after the absolute time, whichever comes first."""

from __future__ import annotations

from datetime import timedelta

from chalicelib.console import sessions
from chalicelib.settings import get_settings
from tests.conftest import NOW, reconfigure


def test_a_session_lives_while_used_and_ends_when_idle(aws_env: None) -> None:
    reconfigure(CONSOLE_IDLE_MINUTES="30", CONSOLE_ABSOLUTE_HOURS="12")
    token, started = sessions.start(organization_id="org", user_id="u1", now=NOW, settings=get_settings())
    assert sessions.resume(token, now=NOW + timedelta(minutes=29), settings=get_settings()) is not None
    # Each use moves the idle deadline (the stamp is written at most once a minute).
    assert sessions.resume(token, now=NOW + timedelta(minutes=55), settings=get_settings()) is not None
    assert sessions.resume(token, now=NOW + timedelta(minutes=55 + 31), settings=get_settings()) is None
    assert (
        sessions.resume(token, now=NOW + timedelta(minutes=56), settings=get_settings()) is None
    )  # ended means deleted
    assert started.csrf_token and started.csrf_token != token


def test_a_session_ends_at_its_absolute_expiry_however_busy(aws_env: None) -> None:
    reconfigure(CONSOLE_IDLE_MINUTES="30", CONSOLE_ABSOLUTE_HOURS="1")
    token, _ = sessions.start(organization_id="org", user_id="u1", now=NOW, settings=get_settings())
    for minute in range(0, 60, 20):
        assert sessions.resume(token, now=NOW + timedelta(minutes=minute), settings=get_settings()) is not None
    assert sessions.resume(token, now=NOW + timedelta(minutes=60), settings=get_settings()) is None


def test_only_the_token_opens_a_session(aws_env: None) -> None:
    token, _ = sessions.start(organization_id="org", user_id="u1", now=NOW, settings=get_settings())
    from chalicelib.console.tables import ConsoleSessionRecord

    stored = [record.session_hash for record in ConsoleSessionRecord.scan()]
    assert token not in stored  # only the hash is kept
    assert sessions.resume(stored[0], now=NOW, settings=get_settings()) is None
    assert sessions.resume("", now=NOW, settings=get_settings()) is None
    assert sessions.resume("x" * 500, now=NOW, settings=get_settings()) is None
