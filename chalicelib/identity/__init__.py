"""People's sign-in identities: the Cognito user pool behind the console (chalicelib.identity.cognito)."""
