"""One module per area of the console; each registers its pages and actions on a ConsolePages.
After adding or changing a route, run `python -m chalicelib.api.route_index`."""
