"""Console fixtures: the Cognito pool of this test process (tests/kit/cognito.py) with a person
per role, and the cookie-keeping console client (tests/kit/console.py) signed in through the
real form."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.conftest import NOW, Org
from tests.kit.cognito import PASSWORD, ROLES, assign, email_of, name_of
from tests.kit.console import CONFIRMED, Answer, ConsoleClient, action_forms
from tests.kit.factories import Person

# Console test modules import these from here.
__all__ = ["CONFIRMED", "PASSWORD", "ROLES", "Answer", "ConsoleClient", "Person", "action_forms"]


@pytest.fixture
def people(org: Org, cognito_pool: tuple[str, str]) -> dict[str, Person]:
    """One directory user per role, each with a Cognito login (PASSWORD) in the test's organization."""
    from chalicelib.directory.users import create_user

    assign(org.organization_id)
    found = {}
    for role in ROLES:
        email, name = email_of(role), name_of(role)
        user = create_user(organization_id=org.organization_id, name=name, email=email, now=NOW, role=role)
        found[role] = Person(user.user_id, email, role, name)
    return found


@pytest.fixture
def console_http(client: Any) -> Any:
    return client.http


@pytest.fixture
def browser(client: Any) -> ConsoleClient:
    """A browser that has not signed in."""
    return ConsoleClient(client.http)


@pytest.fixture
def signed_in(client: Any, people: dict[str, Person]) -> Callable[[str], ConsoleClient]:
    """signed_in("viewer") -> a browser signed in as that role's person (a new browser per call)."""

    def sign_in(role: str) -> ConsoleClient:
        browser = ConsoleClient(client.http)
        answer = browser.sign_in(people[role].email)
        assert answer.status == 303, answer.body[:1000]
        return browser

    return sign_in


@pytest.fixture
def as_owner(signed_in: Callable[[str], ConsoleClient]) -> Iterator[ConsoleClient]:
    yield signed_in("owner")
