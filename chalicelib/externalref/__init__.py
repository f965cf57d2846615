"""The import ledger: where an organization's objects came from (a vendor and the vendor's id),
so an importer or `tocsin config apply` run again finds what it made, even after a rename."""
