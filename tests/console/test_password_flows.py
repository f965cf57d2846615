"""Cognito's password flows through the console: a temporary password, a forgotten one."""

from __future__ import annotations

from chalicelib.settings import get_settings
from tests.conftest import Org
from tests.console.conftest import PASSWORD, ConsoleClient, Person

NEW_PASSWORD = "a brand new passphrase"


def _moto_user(email: str) -> object:
    from moto.cognitoidp.models import cognitoidp_backends

    for regions in cognitoidp_backends.values():
        for backend in regions.values():
            for pool in backend.user_pools.values():
                for user in pool.users.values():
                    if user.attribute_lookup.get("email") == email:
                        return user
    raise AssertionError(f"no pool user {email}")


def test_a_temporary_password_must_be_replaced_before_the_first_session(
    browser: ConsoleClient, org: Org, cognito_pool: tuple[str, str]
) -> None:
    from chalicelib.directory.users import create_user
    from chalicelib.identity import cognito
    from chalicelib.identity import pool as identity_pool
    from tests.conftest import NOW

    create_user(organization_id=org.organization_id, name="New Hire", email="new@acme.test", now=NOW, role="responder")
    identity_pool.create_user(
        email="new@acme.test",
        organization_id=org.organization_id,
        password="Temporary-123!",
        permanent=False,
        settings=get_settings(),
    )
    browser.get("/app/sign-in")
    challenged = browser.post("/app/sign-in", {"email": "new@acme.test", "password": "Temporary-123!"})
    assert challenged.status == 200
    assert challenged.dom().find("h1").text() == "Choose a new password"
    assert "tocsin_session" not in browser.cookies
    form = {
        e.attrs["name"]: e.attrs.get("value") or ""
        for e in challenged.dom().find_all("input")
        if e.attrs.get("type") == "hidden"
    }
    too_short = browser.post("/app/new-password", {**form, "new_password": "short"})
    assert too_short.status == 400
    assert too_short.dom().find("input", id="f-new_password").attrs.get("aria-invalid") == "true"
    form["csrf_token"] = browser.csrf_token
    done = browser.post(
        "/app/new-password", {k: v for k, v in {**form, "new_password": NEW_PASSWORD}.items() if k != "csrf_token"}
    )
    assert done.status == 303, done.text()[:500]
    assert "tocsin_session" in browser.cookies
    assert (
        cognito.sign_in(email="new@acme.test", password=NEW_PASSWORD, settings=get_settings()).__class__.__name__
        == "SignedIn"
    )


def test_a_forgotten_password_is_reset_with_the_emailed_code(browser: ConsoleClient, people: dict[str, Person]) -> None:
    email = people["responder"].email
    browser.get("/app/forgot-password")
    asked = browser.post("/app/forgot-password", {"email": email})
    assert asked.status == 200
    assert asked.dom().find("label", **{"for": "f-code"}).text() == "Code"
    unknown = browser.post("/app/forgot-password", {"email": "nobody@acme.test"})
    assert unknown.status == 200 and unknown.dom().find("h1").text() == asked.dom().find("h1").text()
    code = str(_moto_user(email).confirmation_code)  # type: ignore[attr-defined]
    wrong = browser.post(
        "/app/reset-password", {"email": email, "code": "moto-confirmation-code:000000", "new_password": NEW_PASSWORD}
    )
    assert wrong.status == 400
    assert "The code is wrong or has expired." in wrong.text()
    reset = browser.post("/app/reset-password", {"email": email, "code": code, "new_password": NEW_PASSWORD})
    assert reset.status == 303 and reset.location == "/app/sign-in?done=password_reset"
    assert browser.sign_in(email, PASSWORD).status == 401
    assert browser.sign_in(email, NEW_PASSWORD).status == 303
