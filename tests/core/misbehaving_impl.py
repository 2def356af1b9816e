"""A wire-protocol implementation that misbehaves on purpose, for the conformance runner's tests.

Usage: python misbehaving_impl.py MODE [EVERY]

It answers `hello` and every request the vectors of profile `crucible` hold with the vectors'
own answer (so a well-behaved answer passes), except that every EVERY-th op request this process
receives (default: every one) is answered according to MODE:

  null-id         the right answer with "id": null
  wrong-id        the right answer for an id never sent (the request's id + 1000)
  extra-line      the right answer, written twice
  flood           the right answer, then lines for the same id without end
  hang            no answer, ever
  crash           exit with status 3
  garbage         a line that is not JSON
  resource-limit  {"ok": false, "error": {"code": "resource_limit"}}
  slow            the right answer after 0.15 s
  swap            the right answer, held back until the next request is answered (out of
                  order)

It imports nothing of crucible-spec, so it starts in a few milliseconds, like a native binary.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

VECTORS = Path(__file__).resolve().parents[2] / "conformance" / "vectors" / "crucible"


def key(args: dict) -> str:
    return json.dumps(args, sort_keys=True, separators=(",", ":"))


def answers(op: str, cache: dict[str, dict[str, dict]]) -> dict[str, dict]:
    """args -> the vectors' answer body ({"ok", "result"} or {"ok", "error"}) for one op."""
    if op not in cache:
        table = {}
        for path in VECTORS.glob(f"*/{op}.jsonl"):
            for line in path.read_text().split("\n"):
                if line:
                    case = json.loads(line)
                    table[key(case["args"])] = (
                        {"ok": True, "result": case["result"]} if "result" in case else
                        {"ok": False, "error": {"code": case["error"], "message": "vector"}})
        cache[op] = table
    return cache[op]


def right_answer(req: dict, cache: dict) -> dict:
    if req["op"] == "hello":
        return {"ok": True, "result": {"impl": "misbehaving", "profile": "crucible",
                                       "spec_version": "", "ops": [], "device": "cpu"}}
    body = answers(req["op"], cache).get(key(req["args"]))
    return body or {"ok": False, "error": {"code": "internal", "message": "not in the vectors"}}


def write(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def misbehave(mode: str, req: dict, answer: dict, held: list) -> None:
    """Answer `req` (whose right answer is `answer`, without its id) the MODE way."""
    rid = req["id"]
    if mode == "null-id":
        write({"id": None} | answer)
    elif mode == "wrong-id":
        write({"id": rid + 1000} | answer)
    elif mode == "extra-line":
        write({"id": rid} | answer)
        write({"id": rid} | answer)
    elif mode == "flood":
        while True:
            write({"id": rid} | answer)
    elif mode == "hang":
        time.sleep(3600)
    elif mode == "crash":
        sys.exit(3)
    elif mode == "garbage":
        sys.stdout.write("this is not JSON\n")
        sys.stdout.flush()
    elif mode == "slow":
        time.sleep(0.15)
        write({"id": rid} | answer)
    elif mode == "swap":
        held.append({"id": rid} | answer)
    elif mode == "resource-limit":
        write({"id": rid, "ok": False, "error": {"code": "resource_limit",
                                                 "message": "needs more memory than there is"}})
    else:
        sys.exit(f"unknown mode {mode!r}")


def main(argv: list[str]) -> None:
    mode, every = argv[0], int(argv[1]) if len(argv) > 1 else 1
    cache: dict = {}
    count = 0
    held: list[dict] = []
    for line in sys.stdin:
        req = json.loads(line)
        answer = right_answer(req, cache)
        if req["op"] != "hello":
            count += 1
            if count % every == 0:
                misbehave(mode, req, answer, held)
                continue
        write({"id": req["id"]} | answer)
        while held:
            write(held.pop())


if __name__ == "__main__":
    main(sys.argv[1:])
