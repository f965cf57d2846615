"""`tocsin import opsgenie|pagerduty`: read a vendor account, translate it into the configuration
document (chalicelib.client.document), and hand it to the one reconciler (docs/MIGRATING.md).

Readers fetch (vendor HTTP, paging, 401/429); translators are pure (vendor JSON -> document and
the notes on what could not be carried over exactly); the command plans, applies and prints the
cut-over sheet."""
