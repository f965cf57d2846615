"""Inbound integrations: the pure part (payload parsers and signature checks). No AWS, no I/O.

- `alert`: the normalized alert every parser returns, shared helpers (the errors
  a parser raises are chalicelib.errors' `DeliveryRejected` family).
- `signing`: custom webhook signing (X-Service-Signature / X-Service-Timestamp) and Sentry's.
- `parsers`: one module per source and the `parse(source_type, headers, body, ...)` dispatcher.
"""
