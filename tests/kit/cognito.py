"""The console tests' Cognito pool: made once per test process (per xdist worker) with its four
role users, and put back as it was made before each test that uses it.

Making a pool costs far more than the tests that use it (moto imports an RSA signing key for
every new pool: ~0.1 s of CPU, a second or more on a loaded machine), and the console tests made
one, plus four users, for every test. Now the first test of a process makes it through the real
code (`identity.pool.create_pool` and `create_user`) and keeps a copy of moto's pool object;
before each later test the emulator's reset has emptied Cognito (tests/emulator.py) and the copy
goes back in, so each test starts from the same pool: the four users (owner@, admin@,
responder@, viewer@acme.test, password PASSWORD, confirmed), nobody else, the same pool and client
ids. The users are then moved to the test's organization (`custom:org`). A test that needs a pool
made from nothing asks for `fresh_cognito_pool` instead.

The copy is of moto internals (`MOTO_INTERNALS` in tests/emulator.py names them, and its version
guard covers this module too).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from chalicelib.settings import get_settings

PASSWORD = "correct horse battery staple"
ROLES = ("owner", "admin", "responder", "viewer")
ACCOUNT = "123456789012"  # moto's default account
UNASSIGNED = "unassigned"  # custom:org of the kept users until a test's organization claims them


def email_of(role: str) -> str:
    return f"{role}@acme.test"


def name_of(role: str) -> str:
    return f"{role.title()} Person"


@dataclass
class _Kept:
    region: str
    pool_id: str
    client_id: str
    pool: Any  # moto's CognitoIdpUserPool as first made, never handed out


class WorkerPool:
    """One per test process. `ids()` restores the kept pool (or makes it) and returns its ids."""

    def __init__(self) -> None:
        self._kept: _Kept | None = None
        self.made = 0  # how many pools this process made from nothing (the tests check it stays 1)

    def ids(self) -> tuple[str, str]:
        from moto.cognitoidp.models import cognitoidp_backends

        if self._kept is None:
            self._kept = self._make()
        backend = cognitoidp_backends[ACCOUNT][self._kept.region]
        backend.user_pools.clear()
        backend.sessions.clear()
        backend.user_pools[self._kept.pool_id] = _copy(self._kept.pool)
        return self._kept.pool_id, self._kept.client_id

    def _make(self) -> _Kept:
        from moto.cognitoidp.models import cognitoidp_backends

        from chalicelib.identity import pool as identity_pool
        from chalicelib.settings import get_settings
        from tests.conftest import reconfigure

        pool_id, client_id = identity_pool.create_pool()
        reconfigure(COGNITO_USER_POOL_ID=pool_id, COGNITO_CLIENT_ID=client_id)
        for role in ROLES:
            identity_pool.create_user(
                email=email_of(role),
                organization_id=UNASSIGNED,
                name=name_of(role),
                password=PASSWORD,
                settings=get_settings(),
            )
        region = get_settings().aws_region
        self.made += 1
        return _Kept(region, pool_id, client_id, _copy(cognitoidp_backends[ACCOUNT][region].user_pools[pool_id]))


def _copy(pool: Any) -> Any:
    """A deep copy that shares the pool's signing key (immutable, and the costly part to make)."""
    return copy.deepcopy(pool, memo={id(pool.json_web_key): pool.json_web_key})


def assign(organization_id: str) -> None:
    """Move the four role users into `organization_id` (their `custom:org`)."""
    from chalicelib import aws
    from chalicelib.identity import cognito

    client = aws.client("cognito-idp")
    for role in ROLES:
        client.admin_update_user_attributes(
            UserPoolId=cognito.pool_id(settings=get_settings()),
            Username=email_of(role),
            UserAttributes=[{"Name": cognito.ORG_ATTRIBUTE, "Value": organization_id}],
        )


WORKER_POOL = WorkerPool()
