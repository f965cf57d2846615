"""Each integration's event log: every request to it, what it carried (secrets never) and what
became of it; bounded per integration, kept 30 days; a refused event can be replayed.

- `capture` (pure): the headers that may be kept (secrets and signatures only as a state) and
  the body, bounded;
- `outcome` (pure): what a request became (created, deduplicated, ... refused) from the ingest
  result or the error answered;
- `slots` (pure): the time-ordered event ids and the bound per integration and minute;
- `service`: the one write on the request path, the list and the record;
- `replay`: which events may be replayed, and the claim that replays one at most once.
"""
