"""The emulator's state on disk, so `make run` keeps its data across Ctrl-C, kill -9 and restarts.

Two files under the data directory (`.local/data/` by default, docs/LOCAL.md, "Local data survives restarts"):

- `emulator-state.pickle`: moto's DynamoDB tables (items, indexes, TTL settings), SQS queues with
  their messages (delayed and in-flight ones included) and SES (verified senders, sent mail),
  written every SNAPSHOT_SECONDS when something changed (by a forked child, so requests wait only
  for the fork) and on a clean stop, atomically (temporary file, fsync, rename).
- `journal-<n>.jsonl`: every DynamoDB write moto acknowledged since that snapshot, appended before
  the answer leaves the emulator. A restart loads the snapshot and replays the journal, so a
  kill -9 loses no acknowledged DynamoDB write (and an incident number is never handed out twice);
  SQS and SES changes since the last snapshot (at most SNAPSHOT_SECONDS) are what it can lose.

Consistency: DynamoDB requests already run one at a time under the emulator's DynamoDB lock and
SQS and SES requests under its second lock (moto_server.py); a snapshot holds both while it
forks, so it is one moment of every service. The file names moto's version: a snapshot from
another moto version is refused with a message naming `make run FRESH=1`, never half-loaded.
"""

from __future__ import annotations

import contextlib
import copyreg
import gc
import io
import json
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SNAPSHOT_NAME = "emulator-state.pickle"
JOURNAL_PREFIX = "journal-"
SNAPSHOT_SECONDS = 2.0
FORMAT = 1

# DynamoDB operations that change nothing: neither journalled nor a reason to snapshot.
DYNAMODB_READS = frozenset(
    {
        "GetItem",
        "BatchGetItem",
        "Query",
        "Scan",
        "DescribeTable",
        "DescribeTimeToLive",
        "DescribeContinuousBackups",
        "DescribeEndpoints",
        "DescribeLimits",
        "ListTables",
        "ListTagsOfResource",
        "TransactGetItems",
    }
)
SQS_READS = frozenset(
    {"GetQueueUrl", "GetQueueAttributes", "ListQueues", "ListQueueTags", "ListDeadLetterSourceQueues"}
)


class SnapshotUnreadable(RuntimeError):
    pass


@dataclass(frozen=True)
class Restored:
    snapshot: bool
    replayed_writes: int
    seconds: float


def limited_size_dict(items: dict[str, Any]) -> Any:
    """moto's item attributes (LimitedSizeDict) rebuilt at once: its __setitem__, which pickle would
    call per attribute, re-sizes the whole item each time (a 10,000-incident restore took 4 s, not 1)."""
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict

    rebuilt = LimitedSizeDict.__new__(LimitedSizeDict)
    dict.update(rebuilt, items)  # C-level merge: the override is not called
    return rebuilt


def _pickler(buffer: io.BytesIO) -> pickle.Pickler:
    """moto's SQS queues hold a threading.Condition: stored as "a new one", like every lock."""
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict

    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    table = copyreg.dispatch_table.copy()
    table[LimitedSizeDict] = lambda attributes: (limited_size_dict, (dict(attributes),))
    table[threading.Condition] = lambda _: (threading.Condition, ())
    table[type(threading.Lock())] = lambda _: (threading.Lock, ())
    table[type(threading.RLock())] = lambda _: (threading.RLock, ())
    pickler.dispatch_table = table
    return pickler


def _moto_version() -> str:
    import moto

    return str(moto.__version__)


def _backend_dicts() -> dict[str, Any]:
    from moto.dynamodb.models import dynamodb_backends
    from moto.ses.models import ses_backends
    from moto.sqs.models import sqs_backends

    return {"dynamodb": dynamodb_backends, "sqs": sqs_backends, "ses": ses_backends}


def _region_backends(service: str) -> Iterator[tuple[str, str, Any]]:
    for account_id, regions in list(_backend_dicts()[service].items()):
        for region, backend in list(regions.items()):
            yield account_id, region, backend


def capture_state() -> dict[str, Any]:
    """The parts of moto's backends that hold data (the caller holds the emulator's locks)."""
    return {
        "dynamodb": {(a, r): backend.tables for a, r, backend in _region_backends("dynamodb")},
        "sqs": {(a, r): backend.queues for a, r, backend in _region_backends("sqs")},
        "ses": {(a, r): dict(backend.__dict__) for a, r, backend in _region_backends("ses")},
    }


def install_state(state: dict[str, Any]) -> None:
    backends = _backend_dicts()
    for (account_id, region), tables in state["dynamodb"].items():
        backends["dynamodb"][account_id][region].tables = tables
    for (account_id, region), queues in state["sqs"].items():
        backends["sqs"][account_id][region].queues = queues
    for (account_id, region), attributes in state["ses"].items():
        backends["ses"][account_id][region].__dict__.update(attributes)


class StateStore:
    """Snapshots and the DynamoDB journal of one data directory."""

    def __init__(self, directory: Path, locks: tuple[threading.Lock, ...], interval: float = SNAPSHOT_SECONDS) -> None:
        self.directory = directory
        self.locks = locks  # taken in this order; a request only ever holds one of them
        self.interval = interval
        self.changes = 0  # bumped by every request that may have changed state
        self._saved_changes = 0
        self._journal_number = 0
        self._journal: io.TextIOWrapper | None = None
        self._save_lock = threading.Lock()  # one snapshot at a time (the loop and the final one)
        self.last_snapshot_seconds = 0.0

    @property
    def snapshot_path(self) -> Path:
        return self.directory / SNAPSHOT_NAME

    def _journal_path(self, number: int) -> Path:
        return self.directory / f"{JOURNAL_PREFIX}{number:08d}.jsonl"

    def _journals_from(self, number: int) -> list[tuple[int, Path]]:
        found = []
        for path in self.directory.glob(f"{JOURNAL_PREFIX}*.jsonl"):
            with contextlib.suppress(ValueError):
                found.append((int(path.stem.removeprefix(JOURNAL_PREFIX)), path))
        return sorted(entry for entry in found if entry[0] >= number)

    # ------------------------------------------------------------------ start
    def restore(self, replay: Callable[[dict[str, str], bytes], None]) -> Restored:
        """Load the snapshot, replay the journals written after it, then open a new journal."""
        started = time.monotonic()
        self.directory.mkdir(parents=True, exist_ok=True)
        first_journal = 0
        had_snapshot = self.snapshot_path.exists()
        if had_snapshot:
            try:
                gc.disable()  # a million objects at once: collections would triple the load time
                stored = pickle.loads(self.snapshot_path.read_bytes())
            except Exception as error:  # any unpickling failure means the same thing to a person
                raise SnapshotUnreadable(f"{self.snapshot_path} cannot be read ({error!r})") from error
            finally:
                gc.enable()
            if stored.get("format") != FORMAT or stored.get("moto") != _moto_version():
                raise SnapshotUnreadable(
                    f"{self.snapshot_path} was written by moto {stored.get('moto')} (format {stored.get('format')}); "
                    f"this is moto {_moto_version()}"
                )
            install_state(stored["state"])
            first_journal = int(stored["journal"])
        replayed = 0
        last = first_journal - 1
        for number, path in self._journals_from(first_journal):
            replayed += _replay_file(path, replay)
            last = number
        self._journal_number = last + 1
        self._open_journal()
        if replayed:
            self.changes += 1  # fold the replayed writes into the next snapshot
        return Restored(had_snapshot, replayed, time.monotonic() - started)

    def _open_journal(self) -> None:
        if self._journal is not None:
            self._journal.close()
        self._journal = self._journal_path(self._journal_number).open("a", encoding="utf-8")

    # ------------------------------------------------------------------ while serving
    def record_write(self, headers: dict[str, str], body: bytes) -> None:
        """One acknowledged DynamoDB write; the caller holds the DynamoDB lock (so the order is moto's)."""
        if self._journal is None:
            return
        line = json.dumps({"headers": headers, "body": body.decode("utf-8")}, separators=(",", ":"))
        self._journal.write(line + "\n")
        self._journal.flush()  # in the OS's hands: a killed process loses nothing written

    def snapshot(self, *, in_background: bool = True) -> bool:
        """Write a snapshot if anything changed since the last one; returns whether it wrote.

        In the background, the locks are held only for a fork(): the child process pickles its
        copy-on-write image of that moment and writes the file while the emulator serves on
        (pickling 10,000 incidents takes about a second; requests would have waited that long)."""
        with self._save_lock:
            if self.changes == self._saved_changes:
                return False
            started = time.monotonic()
            with contextlib.ExitStack() as held:
                for lock in self.locks:
                    held.enter_context(lock)
                changes = self.changes
                next_journal = self._journal_number + 1
                header = {"format": FORMAT, "moto": _moto_version(), "journal": next_journal, "saved_at": time.time()}
                self._journal_number = next_journal
                self._open_journal()  # writes from now on belong after this snapshot
                if in_background:
                    child = os.fork()
                    if child == 0:
                        self._write_in_child(header)  # never returns
                else:
                    buffer = io.BytesIO()
                    _pickler(buffer).dump({**header, "state": capture_state()})
            if in_background:
                if not _child_succeeded(child, deadline=time.monotonic() + 300):
                    print("snapshot failed in its child process; the journals are kept", file=sys.stderr, flush=True)
                    return False
            else:
                self._write_file(buffer.getbuffer())
            for number, path in self._journals_from(0):
                if number < next_journal:
                    path.unlink(missing_ok=True)
            self._saved_changes = changes
            self.last_snapshot_seconds = time.monotonic() - started
            return True

    def _write_in_child(self, header: dict[str, Any]) -> None:
        """In the forked child: the only thread left. Holds no descriptor of the parent's (a kept
        socket would hold a client's connection, or the port, open) and never returns."""
        code = 1
        try:
            gc.disable()  # a collection would touch, and so copy, every page of the parent's image
            os.closerange(3, _max_descriptors())
            buffer = io.BytesIO()
            _pickler(buffer).dump({**header, "state": capture_state()})
            self._write_file(buffer.getbuffer())
            code = 0
        finally:
            os._exit(code)

    def _write_file(self, data: memoryview) -> None:
        temporary = self.snapshot_path.with_suffix(".tmp")
        with temporary.open("wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        temporary.replace(self.snapshot_path)
        _fsync_directory(self.directory)

    def run(self, stop: threading.Event) -> None:
        """Snapshot every interval while changes arrive."""
        while not stop.wait(self.interval):
            try:
                self.snapshot()
            except OSError as error:  # a full disk must not stop the emulator; the journal still grows
                print(f"snapshot failed: {error}", file=sys.stderr, flush=True)

    def close(self) -> None:
        """The last snapshot, in this process (nothing is served any more)."""
        self.snapshot(in_background=False)
        if self._journal is not None:
            self._journal.close()
            self._journal = None


def _replay_file(path: Path, replay: Callable[[dict[str, str], bytes], None]) -> int:
    count = 0
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.endswith("\n"):
                break  # the process died while writing this line: moto never answered it
            entry = json.loads(line)
            replay(entry["headers"], entry["body"].encode("utf-8"))
            count += 1
    return count


def _child_succeeded(pid: int, deadline: float) -> bool:
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return False


def _max_descriptors() -> int:
    try:
        return min(int(os.sysconf("SC_OPEN_MAX")), 1 << 20)
    except (OSError, ValueError):
        return 4096


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
