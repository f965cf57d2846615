"""The Slack channel against a real HTTP server on loopback that plays Slack's Web API.

`FakeSlack` is also used by the paging API tests: it records every request and answers per
Slack user id (ok, an `ok: false` error, an HTTP status, garbage, or a slow answer).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from chalicelib.notification.channels import Notification, Recipient
from chalicelib.notification.slack import SlackChannel
from chalicelib.settings import get_settings

TOKEN = "xoxb-test-secret-token-1234"


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeSlack:
    """Behaviours by channel: "ok" (default), ("error", name), ("status", code), ("slow", seconds), "garbage"."""

    behaviours: dict[str, Any] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/api"

    def start(self) -> FakeSlack:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                behaviour = fake.behaviours.get(body.get("channel"), "ok")
                if isinstance(behaviour, tuple) and behaviour[0] == "slow":
                    time.sleep(behaviour[1])
                    behaviour = "ok"
                if isinstance(behaviour, tuple) and behaviour[0] == "status":
                    self._answer(behaviour[1], b'{"ok": false}')
                elif isinstance(behaviour, tuple) and behaviour[0] == "error":
                    self._answer(200, json.dumps({"ok": False, "error": behaviour[1]}).encode())
                elif behaviour == "garbage":
                    self._answer(200, b"<html>proxy error</html>")
                else:
                    answer = {"ok": True, "channel": "D" + str(body.get("channel")), "ts": "1790000000.000100"}
                    self._answer(200, json.dumps(answer).encode())

            def _answer(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (timeout tests)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # A short poll interval: shutdown() waits for one poll (0.5 s by default) after every test.
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    yield fake
    fake.stop()


NOTE = Notification(
    incident_number="INC-2026-0007",
    title="Checkout <down> & out",
    severity="SEV1",
    urgency="high",
    message="Look at *pay* <!channel>",
    url="http://127.0.0.1:8000/app/incidents/INC-2026-0007",
)
ANA = Recipient("u1", "Ana", "ana@example.com", "U123")


def channel(fake: FakeSlack, timeout: float = 2.0) -> SlackChannel:
    return SlackChannel(base_url=fake.base_url, token=TOKEN, timeout=timeout, settings=get_settings())


def test_posts_chat_post_message_with_the_bot_token_to_the_user(fake_slack: FakeSlack) -> None:
    result = channel(fake_slack).send(NOTE, ANA)
    assert (result.channel, result.sent, result.error_code, result.provider_failure) == ("slack", True, None, False)
    assert result.provider_message_id == "1790000000.000100"
    [request] = fake_slack.requests
    assert request.path == "/api/chat.postMessage"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"].startswith("application/json")
    assert request.body["channel"] == "U123"
    assert request.body["text"].startswith("[SEV1][high] INC-2026-0007: Checkout &lt;down&gt; &amp; out")
    assert "&lt;!channel&gt;" in request.body["text"]  # no @channel smuggled in through the message
    assert request.body["metadata"]["event_payload"]["incident_number"] == "INC-2026-0007"
    assert request.body["blocks"][0]["type"] == "section"


def test_slack_refusal_is_a_provider_failure_named_after_slacks_error(fake_slack: FakeSlack) -> None:
    fake_slack.behaviours["U123"] = ("error", "channel_not_found")
    result = channel(fake_slack).send(NOTE, ANA)
    assert (result.sent, result.provider_failure, result.missing_contact) == (False, True, False)
    assert result.error_code == "SLACK_channel_not_found"
    assert result.message and "channel_not_found" in result.message


@pytest.mark.parametrize("behaviour", [("status", 500), ("status", 429), "garbage"])
def test_http_errors_and_non_slack_answers_are_unavailable(fake_slack: FakeSlack, behaviour: Any) -> None:
    fake_slack.behaviours["U123"] = behaviour
    result = channel(fake_slack).send(NOTE, ANA)
    assert (result.sent, result.provider_failure, result.error_code) == (False, True, "SLACK_UNAVAILABLE")


def test_a_slow_slack_times_out_as_unavailable(fake_slack: FakeSlack) -> None:
    fake_slack.behaviours["U123"] = ("slow", 1.5)
    started = time.monotonic()
    result = channel(fake_slack, timeout=0.3).send(NOTE, ANA)
    assert time.monotonic() - started < 1.2
    assert (result.sent, result.provider_failure, result.error_code) == (False, True, "SLACK_UNAVAILABLE")


def test_nothing_listening_is_unavailable() -> None:
    fake = FakeSlack().start()
    base_url = fake.base_url
    fake.stop()
    result = SlackChannel(base_url=base_url, token=TOKEN, timeout=1, settings=get_settings()).send(NOTE, ANA)
    assert (result.sent, result.provider_failure, result.error_code) == (False, True, "SLACK_UNAVAILABLE")


def test_no_slack_user_id_is_missing_contact_and_calls_nothing(fake_slack: FakeSlack) -> None:
    result = channel(fake_slack).send(NOTE, Recipient("u2", "Bo", "bo@example.com", None))
    assert (result.sent, result.missing_contact, result.provider_failure) == (False, True, False)
    assert result.error_code == "CONTACT_DETAILS_MISSING"
    assert fake_slack.requests == []


def test_the_token_never_reaches_logs_or_results(fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    outcomes = []
    for behaviour in ["ok", ("error", "invalid_auth"), ("status", 503), ("slow", 1.0)]:
        fake_slack.behaviours["U123"] = behaviour
        outcomes.append(channel(fake_slack, timeout=0.3).send(NOTE, ANA))
    assert TOKEN not in caplog.text
    assert all(TOKEN not in repr(outcome) for outcome in outcomes)


def test_settings_give_base_url_token_and_timeout(fake_slack: FakeSlack, monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.settings import reset_settings

    monkeypatch.setenv("SLACK_API_BASE_URL", fake_slack.base_url + "/")
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("SLACK_TIMEOUT_SECONDS", "2")
    reset_settings()
    try:
        assert SlackChannel(settings=get_settings()).send(NOTE, ANA).sent
        assert fake_slack.requests[-1].path == "/api/chat.postMessage"
        assert fake_slack.requests[-1].headers["authorization"] == f"Bearer {TOKEN}"
    finally:
        monkeypatch.undo()
        reset_settings()


def test_local_defaults_point_at_the_sink_and_other_stages_at_slack() -> None:
    from chalicelib.settings import from_environment

    local = from_environment({"TOCSIN_STAGE": "local", "PUBLIC_BASE_URL": "http://127.0.0.1:8123"})
    assert local.slack_api_url() == "http://127.0.0.1:8123/local/slack/api"
    assert local.slack_token()
    prod = from_environment({"TOCSIN_STAGE": "prod", "API_KEY_HMAC_SECRET": "x"})
    assert prod.slack_api_url() == "https://slack.com/api"
    assert prod.slack_token() is None
    assert prod.slack_timeout_seconds == 5.0


def test_without_a_token_outside_the_local_stage_nothing_is_sent(fake_slack: FakeSlack) -> None:

    from chalicelib.settings import from_environment

    prod = from_environment({"TOCSIN_STAGE": "prod", "API_KEY_HMAC_SECRET": "x"})
    result = SlackChannel(base_url=fake_slack.base_url, settings=prod).send(NOTE, ANA)
    assert (result.sent, result.provider_failure, result.error_code) == (False, True, "SLACK_NOT_CONFIGURED")
    assert fake_slack.requests == []
