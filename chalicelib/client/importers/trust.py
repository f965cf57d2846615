"""Which certificate authorities the vendor clients trust: the system's, plus every bundle the
environment names (SSL_CERT_FILE, SSL_CERT_DIR, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE), so a
private CA (an EU proxy, a test stand-in) named by either convention works for both clients."""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping

FILES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


def context(environ: Mapping[str, str] | None = None) -> ssl.SSLContext:
    environ = os.environ if environ is None else environ
    made = ssl.create_default_context()
    seen: set[str] = set()
    for name in FILES:
        path = environ.get(name)
        if path and path not in seen and os.path.isfile(path):
            seen.add(path)
            made.load_verify_locations(cafile=path)
    directory = environ.get("SSL_CERT_DIR")
    if directory and os.path.isdir(directory):
        made.load_verify_locations(capath=directory)
    return made
