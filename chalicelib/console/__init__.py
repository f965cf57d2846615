"""The responder console: server-rendered pages under /app over the same services as the API.

`web.py` is the request pipeline (session cookie, CSRF, permissions, errors as pages),
`sessions.py` the server-side sessions, `pages/` one module per area; templates live in
chalicelib/templates/console.
"""
