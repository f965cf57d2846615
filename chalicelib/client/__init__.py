"""`tocsin`: a client of the public HTTP API (configuration as code, importers). Imports nothing
from the rest of chalicelib: it talks to any Tocsin over HTTP (docs/CONFIG.md)."""
