"""The one POST to a customer's URL (chalicelib/delivery/http_post.py), against real sockets on
127.0.0.1: the target check right before the connection, the connection pinned to the checked
address, no redirects, timeouts, refusals."""

from __future__ import annotations

import datetime
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from chalicelib import clock
from chalicelib.delivery import http_post
from chalicelib.integration import signing
from chalicelib.settings import get_settings
from tests.conftest import NOW
from tests.service.outbound_fakes import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver().start()
    yield started
    started.stop()


def test_a_name_that_now_resolves_to_a_private_address_is_refused_without_connecting() -> None:
    asked: list[tuple[str, int]] = []

    def rebound(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return ["93.184.216.34", "169.254.169.254"]

    result = http_post.post_checked(
        "https://hooks.example.test/tocsin", b"{}", {}, allow_local=False, resolve=rebound, settings=get_settings()
    )
    assert asked == [("hooks.example.test", 443)]
    assert not result.succeeded and result.response_code is None
    assert result.error is not None and "169.254.169.254" in result.error


def test_a_signed_post_carries_the_signature_then_the_callers_headers(receiver: Receiver) -> None:
    body = b'{"id":"evt_1"}'
    with clock.frozen(NOW):
        answer = http_post.post(
            receiver.url(),
            body,
            secret="whsec_test",
            headers={"X-Tocsin-Event-Id": "evt_1"},
            allow_local=True,
            settings=get_settings(),
        )
    assert (answer.verdict, answer.response_code, answer.error) == ("delivered", 204, None)
    (request,) = receiver.requests
    assert request.body == body
    assert [name for name in request.headers if name.startswith("x-")] == [
        "x-service-timestamp",
        "x-service-signature",
        "x-tocsin-event-id",
    ]
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"] == "Tocsin-Webhooks/1.0"
    assert request.headers["x-service-timestamp"] == str(int(NOW.timestamp()))
    assert signing.verify_custom("whsec_test", request.headers, body, now=NOW) == int(NOW.timestamp())


def test_an_unsigned_post_carries_no_signature(receiver: Receiver) -> None:
    receiver.answers = [503]
    answer = http_post.post(
        receiver.url(), b"{}", secret=None, content_type="text/plain", allow_local=True, settings=get_settings()
    )
    assert (answer.verdict, answer.response_code) == ("retryable", 503)
    (request,) = receiver.requests
    assert "x-service-signature" not in request.headers and "x-service-timestamp" not in request.headers
    assert request.headers["content-type"] == "text/plain"


def test_a_refused_target_is_a_final_answer_and_nothing_is_sent(receiver: Receiver) -> None:
    answer = http_post.post(receiver.url(), b"{}", secret="whsec_test", allow_local=False, settings=get_settings())
    assert (answer.verdict, answer.response_code) == ("final", None)
    assert answer.error is not None and answer.error.startswith("target refused: url: must use https")
    assert receiver.requests == []


def test_the_connection_goes_to_the_address_the_check_accepted(receiver: Receiver) -> None:
    port = receiver.server.server_address[1] if receiver.server else 0
    pinned = http_post.connection_to("http", "hooks.example.test", port, "127.0.0.1", 5.0)
    try:
        pinned.request("POST", "/pinned", body=b"{}", headers={"Content-Type": "application/json"})
        assert pinned.getresponse().status == 204
    finally:
        pinned.close()
    (request,) = receiver.requests
    assert request.headers["host"] == f"hooks.example.test:{port}"  # the URL's host, not the address


def test_redirects_are_not_followed(receiver: Receiver) -> None:
    receiver.answers = [302]
    result = http_post.post_checked(receiver.url(), b"{}", {}, allow_local=True, settings=get_settings())
    assert (result.succeeded, result.response_code) == (False, 302)
    assert len(receiver.requests) == 1


def test_a_receiver_that_never_answers_times_out() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # accepts the connection (backlog), never reads or answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/"
        result = http_post.post_checked(url, b"{}", {}, allow_local=True, timeout=0.2, settings=get_settings())
    assert (result.succeeded, result.response_code, result.error) == (False, None, "timed out after 10 s")


def test_a_closed_port_is_a_connection_failure() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    result = http_post.post_checked(f"http://127.0.0.1:{port}/", b"{}", {}, allow_local=True, settings=get_settings())
    assert not result.succeeded and result.retryable
    assert result.error is not None and result.error.startswith("connection failed: ConnectionRefusedError")


def self_signed(tmp_path: Path, name: str) -> Path:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    start = datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=36500))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = tmp_path / "receiver.pem"
    pem.write_bytes(
        certificate.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return pem


def test_https_goes_to_the_checked_address_and_checks_the_certificate_for_the_urls_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pem = self_signed(tmp_path, "hooks.example.test")
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_side.load_cert_chain(pem)
    receiver = Receiver().start(tls=server_side)
    monkeypatch.setattr(http_post, "tls_context", lambda: ssl.create_default_context(cafile=str(pem)))
    port = receiver.server.server_address[1] if receiver.server else 0
    try:
        pinned = http_post.connection_to("https", "hooks.example.test", port, "127.0.0.1", 5.0)
        pinned.request("POST", "/tls", body=b"{}", headers={"Content-Type": "application/json"})
        assert pinned.getresponse().status == 204
        pinned.close()
        assert [r.headers["host"] for r in receiver.requests] == [f"hooks.example.test:{port}"]
        # Another name at the same address: the certificate does not match it, nothing is sent.
        impostor = http_post.connection_to("https", "other.example.test", port, "127.0.0.1", 5.0)
        with pytest.raises(ssl.SSLCertVerificationError):
            impostor.request("POST", "/tls", body=b"{}")
        impostor.close()
        assert len(receiver.requests) == 1
    finally:
        receiver.stop()
