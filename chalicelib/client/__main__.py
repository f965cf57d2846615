"""`python -m chalicelib.client ...` runs the `tocsin` command."""

import sys

from chalicelib.client.main import main

sys.exit(main())
