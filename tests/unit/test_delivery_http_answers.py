"""What one POST to a customer's URL came to, pure: delivered, retryable or final, and the
last_error a delivery record keeps (chalicelib/delivery/http_post.py)."""

from __future__ import annotations

import pytest

from chalicelib.delivery import http_post


@pytest.mark.parametrize("status", [200, 201, 202, 204, 299])
def test_any_2xx_succeeds(status):
    result = http_post.from_response(status)
    assert result.succeeded and result.response_code == status and result.error is None
    assert result.verdict == "delivered"


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_retryable_failures(status):
    result = http_post.from_response(status, "Oops")
    assert not result.succeeded and result.retryable
    assert result.response_code == status
    assert result.error == f"HTTP {status} Oops"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422])
def test_other_4xx_are_failures_too(status):
    result = http_post.from_response(status)
    assert not result.succeeded and not result.retryable
    assert result.error is not None and result.error.startswith(f"HTTP {status}")
    assert "rejected" in result.error
    assert result.verdict == "final"


def test_a_redirect_is_a_failure_and_is_not_followed():
    result = http_post.from_response(302, "Found")
    assert not result.succeeded
    assert result.error == "HTTP 302 Found (redirects are not followed)"


def test_no_answer_at_all():
    timeout = http_post.from_error("timeout", "")
    assert (timeout.succeeded, timeout.response_code, timeout.retryable) == (False, None, True)
    assert timeout.error == "timed out after 10 s"
    refused = http_post.from_error("connection", "ConnectionRefusedError: [Errno 111]")
    assert refused.retryable and refused.error == "connection failed: ConnectionRefusedError: [Errno 111]"
    target = http_post.from_error("target", "url: the host resolves to 10.0.0.5")
    assert not target.retryable and target.error == "target refused: url: the host resolves to 10.0.0.5"
    assert http_post.REQUEST_TIMEOUT_SECONDS == 10
