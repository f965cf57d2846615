"""Signing in through Cognito, sessions, sign-out, CSRF on the sign-in form itself."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from chalicelib.settings import get_settings
from tests.console.conftest import PASSWORD, ConsoleClient, Person


def test_a_page_without_a_session_sends_the_person_to_sign_in_and_back(
    browser: ConsoleClient, people: dict[str, Person]
) -> None:
    answer = browser.get("/app?status=open")
    assert answer.status == 303
    assert answer.location == "/app/sign-in?next=%2Fapp%3Fstatus%3Dopen"
    form = browser.follow(answer).dom()
    assert form.find("label", **{"for": "f-email"}).text() == "Email"
    assert form.find("label", **{"for": "f-password"}).text() == "Password"
    assert form.find("button", type="submit").text() == "Sign in"
    signed = browser.post(
        "/app/sign-in", {"email": people["responder"].email, "password": PASSWORD, "next": "/app/incidents?status=open"}
    )
    assert signed.status == 303
    assert signed.location == "/app/incidents?status=open"
    cookie = next(v for k, v in signed.headers.items() if k == "set-cookie")
    session_line = next(line for line in cookie if line.startswith("tocsin_session="))
    assert "HttpOnly" in session_line and "SameSite=Lax" in session_line and "Path=/" in session_line
    assert "Secure" not in session_line  # the local and test stages serve plain HTTP


def test_a_wrong_password_and_an_unknown_email_read_the_same(browser: ConsoleClient, people: dict[str, Person]) -> None:
    browser.get("/app/sign-in")
    wrong = browser.post("/app/sign-in", {"email": people["owner"].email, "password": "not the password"})
    unknown = browser.post("/app/sign-in", {"email": "nobody@acme.test", "password": PASSWORD})
    assert wrong.status == unknown.status == 401
    assert "Incorrect email or password." in wrong.text()
    assert "Incorrect email or password." in unknown.text()
    assert "tocsin_session" not in browser.cookies


def test_the_sign_in_form_refuses_a_missing_or_foreign_csrf_token(
    browser: ConsoleClient, people: dict[str, Person]
) -> None:
    browser.get("/app/sign-in")
    missing = browser.post("/app/sign-in", {"email": people["owner"].email, "password": PASSWORD}, csrf="-")
    forged = browser.post("/app/sign-in", {"email": people["owner"].email, "password": PASSWORD}, csrf="0" * 64)
    assert missing.status == forged.status == 403
    assert "tocsin_session" not in browser.cookies


def test_next_never_leaves_the_console(browser: ConsoleClient, people: dict[str, Person]) -> None:
    browser.get("/app/sign-in")
    answer = browser.post(
        "/app/sign-in", {"email": people["owner"].email, "password": PASSWORD, "next": "https://evil.example/"}
    )
    assert answer.location == "/app/incidents"


def test_sign_out_ends_the_session_on_the_server(signed_in: Callable[[str], ConsoleClient]) -> None:
    browser = signed_in("owner")
    stolen = dict(browser.cookies)
    browser.get("/app/forgot-password")  # any page carries the session's form token
    answer = browser.post("/app/sign-out")
    assert answer.status == 303 and answer.location == "/app/sign-in?done=signed_out"
    assert "tocsin_session" not in browser.cookies
    replayed = ConsoleClient(browser.http, cookies=stolen).get("/app")
    assert replayed.status == 303 and replayed.location.startswith("/app/sign-in")


def test_a_person_missing_from_the_directory_is_refused(
    browser: ConsoleClient, people: dict[str, Person], org: object
) -> None:
    from chalicelib.identity import pool as identity_pool

    identity_pool.create_user(
        email="stranger@acme.test", organization_id=people["owner"].user_id, password=PASSWORD, settings=get_settings()
    )
    browser.get("/app/sign-in")
    answer = browser.post("/app/sign-in", {"email": "stranger@acme.test", "password": PASSWORD})
    assert answer.status == 403
    assert "no active Tocsin user has this email" in answer.text()


@pytest.mark.parametrize(
    "unsafe",
    ["/app/incidents\r\nSet-Cookie: x=1", "/app/incidents\u2028", "/app/inc idents", "/app/\x00", "/app/caf\u00e9"],
)
def test_a_next_with_control_or_non_ascii_characters_goes_to_the_incident_list(
    browser: ConsoleClient, people: dict[str, Person], unsafe: str
) -> None:
    # Issue 27 finding 10: CR LF in next= answered 500, U+2028 dropped the connection.
    browser.get("/app/sign-in")
    answer = browser.post("/app/sign-in", {"email": people["owner"].email, "password": PASSWORD, "next": unsafe})
    assert answer.status == 303
    assert answer.location == "/app/incidents"


def test_safe_next_keeps_an_encoded_console_path() -> None:
    from chalicelib.console.visits import safe_next

    assert (
        safe_next("/app/incidents?status=open&q=caf%C3%A9", settings=get_settings())
        == "/app/incidents?status=open&q=caf%C3%A9"
    )
    assert safe_next("/app/incidents\r\n", settings=get_settings()) == "/app/incidents"
