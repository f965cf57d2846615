"""The test kit (tests/kit/): its factories write what the services would, and the per-process
Cognito pool starts every test as it was made."""

from __future__ import annotations

from datetime import timedelta

from chalicelib import aws
from chalicelib.contact import service as contacts
from chalicelib.paging.on_call import primary_on_call
from chalicelib.settings import get_settings
from tests.kit import factories as make
from tests.kit.cognito import PASSWORD, ROLES, WORKER_POOL, email_of


def test_a_person_has_verified_email_and_phone_methods(aws_env: None) -> None:
    org = make.organization()
    ana = make.person(org, "Ana", role="admin", phones=("+15550100001",))
    methods = contacts.list_methods(organization_id=org.organization_id, user_id=ana.user_id, now=make.NOW)
    assert sorted((m.type, m.address, m.verified) for m in methods) == [
        ("email", ana.email, True),
        ("sms", "+15550100001", True),
        ("voice", "+15550100001", True),
    ]
    assert ana.role == "admin" and len(ana.methods) == 2
    assert make.person(org).email != make.person(org).email  # defaults never collide


def test_a_policy_pages_the_schedule_s_person_for_the_service(aws_env: None) -> None:
    org = make.organization()
    ana, bo = make.person(org, "Ana"), make.person(org, "Bo")
    primary = make.schedule(org, ana, bo, rotation="daily")
    policy = make.policy(org, primary, bo, delay_minutes=10)
    assert [[t.kind for t in level.targets] for level in policy.policy.levels] == [["schedule"], ["user"]]
    checkout = make.service(org, escalation_policy_id=policy.policy.policy_id)
    on_call = primary_on_call(organization_id=org.organization_id, service_key=checkout.service_key, now=make.NOW)
    assert on_call is not None and on_call.user_id == ana.user_id
    tomorrow = make.NOW + timedelta(days=1)
    later = primary_on_call(organization_id=org.organization_id, service_key=checkout.service_key, now=tomorrow)
    assert later is not None and later.user_id == bo.user_id


def test_an_incident_and_an_alert_go_through_the_services(aws_env: None) -> None:
    org = make.organization()
    opened = make.incident(org, title="Down", severity="SEV1")
    assert (opened.title, opened.severity) == ("Down", "SEV1")
    result = make.alert(make.integration(org), "db1")
    assert result.created and result.incident is not None and result.alert is not None
    again = make.alert(make.integration(org), "db1")
    assert again.incident is not None and again.incident.incident_number != opened.incident_number


def _pool_users() -> dict[str, str]:
    from chalicelib.identity import cognito

    listed = aws.client("cognito-idp").list_users(UserPoolId=cognito.pool_id(settings=get_settings()))["Users"]
    return {next(a["Value"] for a in user["Attributes"] if a["Name"] == "email"): user["UserStatus"] for user in listed}


def test_the_worker_pool_is_made_once_and_starts_each_test_as_made(cognito_pool: tuple[str, str]) -> None:
    from chalicelib.identity import cognito
    from chalicelib.identity import pool as identity_pool

    assert _pool_users() == {email_of(role): "CONFIRMED" for role in ROLES}
    identity_pool.create_user(
        email="new@acme.test", organization_id="o", password=PASSWORD, permanent=False, settings=get_settings()
    )
    aws.client("cognito-idp").admin_set_user_password(
        UserPoolId=cognito.pool_id(settings=get_settings()),
        Username=email_of("owner"),
        Password="another password 1",
        Permanent=True,
    )
    assert "new@acme.test" in _pool_users()

    assert WORKER_POOL.ids() == cognito_pool  # what the next test gets
    assert _pool_users() == {email_of(role): "CONFIRMED" for role in ROLES}
    assert (
        cognito.sign_in(email=email_of("owner"), password=PASSWORD, settings=get_settings()).__class__.__name__
        == "SignedIn"
    )
    assert WORKER_POOL.made == 1


def test_a_fresh_pool_is_made_from_nothing(fresh_cognito_pool: tuple[str, str]) -> None:
    assert _pool_users() == {}
