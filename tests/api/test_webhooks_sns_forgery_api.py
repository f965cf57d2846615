"""Forged SNS messages: a certificate URL on an SNS host that cannot be fetched is never a 500.

A URL the host answers with "no such certificate" (HTTP 4xx) names no certificate AWS ever
signed with: 401 INVALID_SIGNATURE. A fetch that fails for a reason on the way (timeout, DNS,
5xx) is nobody's fault yet: 503 SERVICE_UNAVAILABLE with Retry-After, so SNS retries a genuine
message. A certificate URL with a port is refused before anything is fetched."""

from __future__ import annotations

import io
import socket
import urllib.error
from typing import Any

import pytest

from chalicelib.catalog.service import Service
from chalicelib.integration import fetch
from chalicelib.integration.parsers import sns
from tests.api.test_webhooks_api import assert_error, integrate
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.api.test_webhooks_cloudwatch_api import CERT_URL, alarm, deliver, notification, signed
from tests.api.test_webhooks_cloudwatch_api import key as key
from tests.conftest import Org


def http_error(status: int) -> urllib.error.HTTPError:
    return urllib.error.HTTPError(CERT_URL, status, "error", {}, io.BytesIO(b"<Error/>"))  # type: ignore[arg-type]


def opener_raising(error: BaseException) -> Any:
    def urlopen(request: Any, timeout: float = 0) -> Any:
        raise error

    return urlopen


@pytest.fixture
def hook(client: Any, org: Org, services: list[Service]) -> str:
    sns.clear_certificate_cache()
    return str(integrate(client, org, "cloudwatch", default_service=services[0].service_key)["routing_key"])


@pytest.mark.parametrize("status", [403, 404, 400])
def test_a_certificate_url_the_host_does_not_serve_is_invalid_signature(
    client: Any, hook: str, key: Any, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    monkeypatch.setattr(fetch.urllib.request, "urlopen", opener_raising(http_error(status)))
    response = deliver(client, hook, signed(key, notification(alarm(), "m-1")))
    assert_error(response, "INVALID_SIGNATURE")
    assert response.headers["X-RateLimit-Category"] == "webhook"


@pytest.mark.parametrize(
    "error",
    [
        TimeoutError("timed out"),
        urllib.error.URLError(ConnectionRefusedError("refused")),
        urllib.error.URLError(socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")),
        http_error(500),
        http_error(503),
    ],
)
def test_a_certificate_fetch_that_fails_on_the_way_is_503_never_500(
    client: Any, hook: str, key: Any, monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    monkeypatch.setattr(fetch.urllib.request, "urlopen", opener_raising(error))
    response = deliver(client, hook, signed(key, notification(alarm(), "m-1")))
    assert response.status_code == 503, response.body
    assert response.json == {
        "success": False,
        "error": {"code": "SERVICE_UNAVAILABLE", "message": response.json["error"]["message"]},
    }
    assert "certificate" in response.json["error"]["message"]
    assert int(response.headers["Retry-After"]) > 0
    assert response.headers["X-RateLimit-Category"] == "webhook"


def test_a_certificate_host_that_does_not_exist_is_invalid_signature(
    client: Any, hook: str, key: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = urllib.error.URLError(socket.gaierror(socket.EAI_NONAME, "Name or service not known"))
    monkeypatch.setattr(fetch.urllib.request, "urlopen", opener_raising(missing))
    url = "https://sns.xx-nowhere-9.amazonaws.com/SimpleNotificationService-1.pem"
    message = signed(key, notification(alarm(), "m-1"), SigningCertURL=url)
    assert_error(deliver(client, hook, message), "INVALID_SIGNATURE")


@pytest.mark.parametrize("port", [":8443", ":80", ":22", ":0", ":444"])
def test_a_certificate_url_with_a_port_is_refused_before_fetching(
    client: Any, hook: str, key: Any, monkeypatch: pytest.MonkeyPatch, port: str
) -> None:
    fetched: list[str] = []
    monkeypatch.setattr(fetch, "fetch_certificate", lambda url, settings: fetched.append(url) or b"")
    url = CERT_URL.replace(".amazonaws.com/", f".amazonaws.com{port}/")
    response = deliver(client, hook, signed(key, notification(alarm(), "m-1"), SigningCertURL=url))
    assert_error(response, "INVALID_SIGNATURE")
    assert "port" in response.json["error"]["message"]
    assert fetched == []


def test_the_default_https_port_spelled_out_is_accepted() -> None:
    url = CERT_URL.replace(".amazonaws.com/", ".amazonaws.com:443/")
    assert sns.check_sns_url(url, what="SigningCertURL", require_pem=True) == url
