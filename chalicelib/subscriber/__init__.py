"""Status page subscribers: people and systems that follow a public status page."""
