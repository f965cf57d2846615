"""Event rules: ordered per organization and per integration, evaluated on each inbound alert."""
