"""The console's sign-in through an Amazon Cognito user pool (moto's cognito-idp on the local stack).

The pool holds passwords and their flows (first sign-in with a temporary password, forgotten
passwords); Tocsin's directory stays the authority on who belongs to which organization and
with which role. A pool user is a person's sign-in, bound to no organization when invited: it
carries `email` (its username) and `email_verified`; the organizations it may open are those
that invited the address and whose invitation the person accepted (chalicelib/identity/
memberships.py). `custom:org` names the organization the person last chose at sign-in (an
accepted one), so the API's ID tokens name it; identities from before memberships carry the one
they were invited to.

The ID token returned by InitiateAuth comes straight from Cognito over TLS, so its claims are
read without checking the signature (OpenID Connect Core 3.1.3.7 allows TLS in place of the
signature for tokens received from the token endpoint). Tokens a client presents to the API are
checked against the pool's keys (chalicelib.auth.sessions).

Cognito's errors become the error tree's: a wrong password and an unknown user read the same
(no account enumeration); weak passwords and wrong codes name the field.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from chalicelib import aws
from chalicelib.errors import ConfigurationError, RateLimited, Unauthorized, ValidationFailed
from chalicelib.settings import Settings

ORG_ATTRIBUTE = "custom:org"
WRONG_CREDENTIALS = "Incorrect email or password."
_THROTTLED = {"TooManyRequestsException", "LimitExceededException", "TooManyFailedAttemptsException"}


@dataclass(frozen=True)
class SignedIn:
    """Cognito accepted the password: the ID token's claims (email, custom:org, ...)."""

    claims: dict[str, Any]


@dataclass(frozen=True)
class NewPasswordRequired:
    """A user created with a temporary password must choose their own before signing in."""

    email: str
    challenge_session: str


SignInOutcome = SignedIn | NewPasswordRequired


def _client_id(*, settings: Settings) -> str:
    client_id = settings.cognito_client_id
    if not client_id:
        raise ConfigurationError("Console sign-in is not configured (COGNITO_CLIENT_ID).")
    return client_id


def pool_id(*, settings: Settings) -> str:
    pool_id = settings.cognito_user_pool_id
    if not pool_id:
        raise ConfigurationError("Console sign-in is not configured (COGNITO_USER_POOL_ID).")
    return pool_id


def error_code(error: Exception) -> str | None:
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return None
    code = response.get("Error", {}).get("Code")
    return str(code) if code else None


def _translate(error: Exception, *, password_field: str = "password") -> Exception:
    code = error_code(error)
    if code is None:
        return error
    if code in ("NotAuthorizedException", "UserNotFoundException"):
        return Unauthorized(WRONG_CREDENTIALS)
    if code == "PasswordResetRequiredException":
        return Unauthorized("Your password must be reset: use \u201cForgot your password?\u201d.")
    if code == "UserNotConfirmedException":
        return Unauthorized("Your account is not confirmed yet.")
    if code in _THROTTLED:
        return RateLimited("Too many attempts; wait a few minutes and try again.")
    if code == "InvalidPasswordException":
        message = str(error.response["Error"].get("Message") or "The password does not meet the policy.")  # type: ignore[attr-defined]
        return ValidationFailed.for_fields([{"field": password_field, "message": message.split(": ", 1)[-1]}])
    if code in ("CodeMismatchException", "ExpiredCodeException"):
        return ValidationFailed.for_fields([{"field": "code", "message": "The code is wrong or has expired."}])
    if code == "InvalidParameterException":
        return ValidationFailed("Cognito refused the request: " + str(error.response["Error"].get("Message")))  # type: ignore[attr-defined]
    return error


def _call(operation: str, *, password_field: str = "password", **arguments: Any) -> dict[str, Any]:
    client = aws.client("cognito-idp")
    try:
        result: dict[str, Any] = getattr(client, operation)(**arguments)
    except Exception as error:
        translated = _translate(error, password_field=password_field)
        if translated is error:
            raise
        raise translated from None
    return result


def claims_of(id_token: str) -> dict[str, Any]:
    """The payload of a JWT received directly from Cognito (see the module's note)."""
    try:
        payload = id_token.split(".")[1]
        decoded: Any = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        raise Unauthorized("The identity provider answered with a malformed token.") from None
    if not isinstance(decoded, dict):
        raise Unauthorized("The identity provider answered with a malformed token.")
    return decoded


def _outcome(answer: dict[str, Any], email: str) -> SignInOutcome:
    if answer.get("ChallengeName") == "NEW_PASSWORD_REQUIRED":
        return NewPasswordRequired(email=email, challenge_session=str(answer["Session"]))
    result = answer.get("AuthenticationResult") or {}
    if "IdToken" not in result:
        raise Unauthorized("This account needs a sign-in step the console does not support.")
    return SignedIn(claims=claims_of(str(result["IdToken"])))


def sign_in(*, email: str, password: str, settings: Settings) -> SignInOutcome:
    answer = _call(
        "initiate_auth",
        ClientId=_client_id(settings=settings),
        AuthFlow="USER_PASSWORD_AUTH",
        AuthParameters={"USERNAME": email, "PASSWORD": password},
    )
    return _outcome(answer, email)


def set_new_password(*, email: str, challenge_session: str, new_password: str, settings: Settings) -> SignInOutcome:
    """Answer NEW_PASSWORD_REQUIRED; an expired challenge reads as a wrong password (start again)."""
    answer = _call(
        "respond_to_auth_challenge",
        password_field="new_password",
        ClientId=_client_id(settings=settings),
        ChallengeName="NEW_PASSWORD_REQUIRED",
        Session=challenge_session,
        ChallengeResponses={"USERNAME": email, "NEW_PASSWORD": new_password},
    )
    return _outcome(answer, email)


def send_reset_code(*, email: str, settings: Settings) -> None:
    """Ask Cognito to send a reset code. Unknown addresses are not told apart from known ones."""
    try:
        _call("forgot_password", ClientId=_client_id(settings=settings), Username=email)
    except Unauthorized:
        return


def reset_password(*, email: str, code: str, new_password: str, settings: Settings) -> None:
    try:
        _call(
            "confirm_forgot_password",
            password_field="new_password",
            ClientId=_client_id(settings=settings),
            Username=email,
            ConfirmationCode=code,
            Password=new_password,
        )
    except Unauthorized:
        # An unknown user: the same answer as a wrong code, so the form tells nothing away.
        raise ValidationFailed.for_fields([{"field": "code", "message": "The code is wrong or has expired."}]) from None


def invite(*, email: str, name: str | None, temporary_password: str, settings: Settings) -> bool:
    """Give a new person a sign-in: Cognito emails them the temporary password (its invitation
    template); the first sign-in asks for their own. The sign-in names no organization: which
    ones it opens is the memberships' to say. False when the pool already has the person (a
    retried message, or someone invited before, by any organization): nothing changes then."""
    attributes = [
        {"Name": "email", "Value": email},
        {"Name": "email_verified", "Value": "true"},
    ]
    if name:
        attributes.append({"Name": "name", "Value": name})
    try:
        aws.client("cognito-idp").admin_create_user(
            UserPoolId=pool_id(settings=settings),
            Username=email,
            UserAttributes=attributes,
            TemporaryPassword=temporary_password,
            DesiredDeliveryMediums=["EMAIL"],
        )
    except Exception as error:
        if error_code(error) == "UsernameExistsException":
            return False
        raise
    return True


def choose_organization(*, email: str, organization_id: str, settings: Settings) -> None:
    """The organization the person chose at sign-in (an accepted one): their ID tokens name it."""
    aws.client("cognito-idp").admin_update_user_attributes(
        UserPoolId=pool_id(settings=settings),
        Username=email,
        UserAttributes=[{"Name": ORG_ATTRIBUTE, "Value": organization_id}],
    )
