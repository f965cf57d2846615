"""The local stack: emulator, provisioning, demo data, worker loop and dev server."""
