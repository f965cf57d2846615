"""The Opsgenie Alert API drop-in: an Opsgenie integration's alerts as Opsgenie shows them (tiny ids,
the fields a create sent), the alert actions by id, alias or tiny id, what each request became, and
heartbeat pings by name. Opsgenie's bodies are read by chalicelib.integration.parsers.opsgenie."""
