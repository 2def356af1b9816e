"""Chapter 18: Cipher, the content-addressed object store of regions, as a pure model over an
in-memory directory (path -> bytes).

Layout: `objects/<hex[0:2]>/<hex[2:16]>` holds the CDAG file of the region whose content hash
has the 16 lowercase hex digits `hex`; `HEAD` holds the current hash in hex and a newline; `log`
is append-only, one line `step_id,hash_hex,ts_ns` per advance. A store never overwrites: the
first region stored under a hash wins. Time is not modelled: the model's clock counts
advance_head calls (1, 2, ...) where the code reads steady_clock nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from .cdag import CdagRegion, decode_region, encode_region, serial_estimate

E18_5 = "E18.5"


@dataclass(frozen=True)
class LogEntry:
    step_id: int
    hash: int
    ts: int


def object_path(h: int) -> str:
    """objects/<first 2 hex digits>/<the other 14>."""
    text = f"{h:016x}"
    return f"objects/{text[:2]}/{text[2:]}"


def parse_log(text: str) -> list[LogEntry]:
    """The log's entries; empty lines and lines without two commas are skipped."""
    out = []
    for line in text.split("\n"):
        parts = line.split(",", 2)
        if len(parts) < 3:
            continue
        try:
            out.append(LogEntry(int(parts[0]), int(parts[1], 16), int(parts[2])))
        except ValueError:
            raise InvalidInput(f"log line {line!r}: not step,hex,ts") from None
    return out


@dataclass
class Cipher:
    """An open store: its directory, HEAD and the log read into memory."""

    files: dict[str, bytes] = field(default_factory=dict)
    head: int = 0
    log: list[LogEntry] = field(default_factory=list)
    clock: int = 0

    @classmethod
    def open(cls, files: dict[str, bytes], clock: int = 0) -> Cipher:
        """1. The objects directory exists (directories are implied by the paths here).
        2. Read the log. 3. HEAD's first line, parsed base 16, is the head (an empty line
        leaves 0); without a HEAD file, the last log entry's hash (0 if none)."""
        c = cls(files, clock=clock)
        c.log = parse_log(files.get("log", b"").decode())  # 2
        if "HEAD" in files:  # 3
            first = files["HEAD"].decode().split("\n", 1)[0]
            c.head = int(first, 16) if first else 0
        elif c.log:
            c.head = c.log[-1].hash
        return c

    def store(self, region: CdagRegion, errata: frozenset[str] = NO_ERRATA) -> int:
        """The region's content hash once its file exists, else 0.
        1. A content hash of 0 stores nothing. 2. An existing object is kept as it is (first
        writer wins; contents are not compared). 3. Otherwise write the region's CDAG file.
        The code serializes into a buffer of serial_estimate bytes, which regions of more than
        299 ops (327 with a plan) overflow: it then stores nothing and returns 0 (E18.5)."""
        h = region.content_hash
        if h == 0:  # 1
            return 0
        path = object_path(h)
        if path in self.files:  # 2
            return h
        data = encode_region(region)  # 3
        if E18_5 in errata and len(data) > serial_estimate(region):
            return 0
        self.files[path] = data
        return h

    def load(self, h: int) -> CdagRegion | None:
        """The region stored under h: none for 0, a missing object, or one that does not
        decode."""
        data = self.files.get(object_path(h)) if h else None
        if data is None:
            return None
        try:
            return decode_region(data)
        except InvalidInput:
            return None

    def advance_head(self, h: int, step_id: int) -> None:
        """head = h; HEAD is rewritten as 16 hex digits and a newline; a log line is appended
        with the next clock value."""
        self.head = h
        self.files["HEAD"] = f"{h:016x}\n".encode()
        self.clock += 1
        self.log.append(LogEntry(step_id, h, self.clock))
        line = f"{step_id},{h:016x},{self.clock}\n".encode()
        self.files["log"] = self.files.get("log", b"") + line

    def hash_at_step(self, step_id: int) -> int:
        """Binary search of the log for the last entry with step_id <= the given one, as the
        code does it (it assumes steps never decrease); 0 if there is none."""
        lo, hi, result = 0, len(self.log), 0
        while lo < hi:
            mid = lo + (hi - lo) // 2
            if self.log[mid].step_id <= step_id:
                result, lo = self.log[mid].hash, mid + 1
            else:
                hi = mid
        return result

    def empty(self) -> bool:
        return self.head == 0


def estimate_boundary(has_plan: bool) -> int:
    """The most ops a region can have and still fit the code's buffer: the estimate exceeds
    the real size by 96 - 53 + 256 (+ 28 with a plan) - 1 byte per op."""
    return 64 + 32 + 256 - 32 - 21 + (64 - 36 if has_plan else 0)


erratum(
    E18_5, "Cipher sizes its buffer for 40 bytes per op where 41 are written",
    seed="crucible@8d2680a2", location="include/crucible/Cipher.h estimate_serial_size",
    ops=("cipher.simulate",),
    witness={"args": {"steps": [{"op": "store", "region": {
                 "ops": [{"schema_hash": "0x1"}] * 300, "has_plan": False,
                 "content_hash": "0x1234"}}]},
             "spec": {"results": [{"hash": "0x0000000000001234"}]},
             "seed": {"results": [{"hash": "0x0000000000000000"}]}},
    flag="result",
    detail="estimate_serial_size counts 40 bytes for the fixed part of each op; v7 writes 41 "
           "(the op_flags byte), so the estimate's slack of 299 bytes (327 with a plan) runs out "
           "at 300 ops (328 with a plan): serialize_region overflows, returns 0, and store() "
           "returns 0 without writing anything. Real models have more ops (the test ResNet has "
           "175, a transformer thousands). The spec stores a region of any size.",
)
