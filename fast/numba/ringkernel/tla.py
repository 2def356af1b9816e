"""Compiled state-space search over RingKernel's TLA+ spec machines: hlc.tla's machine
(spec/ringkernel/tla/hlc.py) explored over packed states at the .cfg's bound, which the Python
search (proofs/core/model.py, the reference) cannot reach.

1. A state packs into one uint64 (`HlcLayout`): the wall, each clock (physical, logical), the
   number of events, each event (node, physical, logical), the received set as one bit per
   (event, receiver), set on the first event equal to the one received, and, with `history`,
   the spec's last step (a flag, the node and its clock before; after is that node's clock).
2. The rules are the spec's own functions: `tick` and `receive` (errata included) are called
   on every clock, timestamp and wall within the bounds into tables, so a bug planted in
   either changes what is explored. The steps and their guards are `hlc_steps`'.
3. Breadth first: the array of states is the queue, and an open-addressing hash set of packed
   states tells new states from seen ones. The caller allocates both (numpy's large arrays
   get huge pages, arrays allocated in a kernel do not: design §7) and doubles them whenever
   the kernel stops before a state whose successors might not fit (the set at most three
   quarters full).
4. Each new state's invariants are checked, and each step's: the stepping clock's physical
   part does not go down and the clock strictly grows.
5. A violation or a deadlock comes back with its steps from the initial state (the parent
   chain), labelled as `hlc_steps` labels them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import njit

from ....spec.core.errata import NO_ERRATA
from ....spec.ringkernel.tla import hlc

ADVANCE, TICK, RECEIVE = 0, 1, 2
INVARIANTS = ("CausalOrdering", "PhysicalTimeMonotonic", "StepStrictlyAdvances",
              "PerNodeMonotonic", "EventCountsBounded", "PhysicalAtMostWall")
"""hlc_machine's invariants, in its order; a violation code is 1 + the index."""
DEADLOCK, TOO_MANY, GROW = len(INVARIANTS) + 1, len(INVARIANTS) + 2, -1
MAX_STATES = 50_000_000


def _bits(largest: int) -> int:
    return max(1, int(largest).bit_length())


@dataclass(frozen=True)
class HlcLayout:
    """Where each field of an hlc state sits in its packed uint64 (step 1)."""

    nodes: int
    max_physical: int
    max_events: int
    history: bool

    @cached_property
    def fields(self) -> dict[str, int]:
        pb, lb, nb = _bits(self.max_physical), _bits(self.max_events), _bits(self.nodes - 1)
        clocks = pb
        count = clocks + self.nodes * (pb + lb)
        events = count + _bits(self.max_events)
        received = events + self.max_events * (nb + pb + lb)
        last = received + self.max_events * self.nodes
        end = last + (1 + nb + pb + lb if self.history else 0)
        if end > 63:
            raise ValueError(f"{self}: {end} bits do not fit one packed word")
        return {"nodes": self.nodes, "max_physical": self.max_physical,
                "max_events": self.max_events, "history": int(self.history), "pb": pb,
                "lb": lb, "nb": nb, "clocks": clocks, "count": count, "events": events,
                "received": received, "last": last}

    def array(self) -> np.ndarray:
        return np.array(list(self.fields.values()), dtype=np.int64)

    def unpack(self, key: int) -> hlc.HlcModel:
        """The spec's state packed in `key` (its last step only with `history`)."""
        f = self.fields
        pb, lb, nb = f["pb"], f["lb"], f["nb"]
        pm, lm, nm = (1 << pb) - 1, (1 << lb) - 1, (1 << nb) - 1

        def ts(shift: int) -> hlc.Ts:
            return (key >> shift) & pm, (key >> (shift + pb)) & lm

        clocks = tuple(ts(f["clocks"] + n * (pb + lb)) for n in range(self.nodes))
        width, count = nb + pb + lb, (key >> f["count"]) & ((1 << _bits(self.max_events)) - 1)
        events = tuple(((key >> (f["events"] + i * width)) & nm,
                        ts(f["events"] + i * width + nb)) for i in range(count))
        received = frozenset((events[i][0], r, events[i][1]) for i in range(count)
                             for r in range(self.nodes)
                             if key >> (f["received"] + i * self.nodes + r) & 1)
        last = None
        if self.history and key >> f["last"] & 1:
            node = (key >> (f["last"] + 1)) & nm
            last = hlc.Step(node, ts(f["last"] + 1 + nb), clocks[node])
        return hlc.HlcModel(clocks, key & pm, events, received, last)


def rule_tables(errata: frozenset[str], max_events: int) -> tuple[np.ndarray, np.ndarray]:
    """hlc.tick and hlc.receive on every clock, timestamp and wall of the bounds (step 2):
    tick[p, l, wall] and receive[p, l, ts_p, ts_l, wall] hold (physical, logical)."""
    p, lg = hlc.MAX_PHYSICAL + 1, max_events + 1
    tick = np.empty((p, lg, p, 2), dtype=np.int64)
    receive = np.empty((p, lg, p, lg, p, 2), dtype=np.int64)
    for cp in range(p):
        for cl in range(lg):
            for wall in range(p):
                tick[cp, cl, wall] = hlc.tick((cp, cl), wall)
                for tp in range(p):
                    for tl in range(lg):
                        receive[cp, cl, tp, tl, wall] = hlc.receive((cp, cl), (tp, tl), wall,
                                                                    errata)
    if (tick[..., 1] < 0).any() or (receive[..., 1] < 0).any():
        raise ValueError("a rule gives a negative logical counter: outside the packed states")
    return tick, receive


@njit(cache=True, inline="always")
def _get(key, shift, width):
    return np.int64((key >> np.uint64(shift)) & ((np.uint64(1) << np.uint64(width))
                                                 - np.uint64(1)))


@njit(cache=True, inline="always")
def _put(key, shift, value):
    return key | (np.uint64(value) << np.uint64(shift))


@njit(cache=True, inline="always")
def _mix(key):
    """fmix64, the hash set's slot hash."""
    key ^= key >> np.uint64(33)
    key *= np.uint64(0xFF51AFD7ED558CCD)
    key ^= key >> np.uint64(33)
    key *= np.uint64(0xC4CEB9FE1A85EC53)
    return key ^ (key >> np.uint64(33))


@njit(cache=True)
def _add(table, key):
    """Put key in the hash set (stored as key + 1; 0 is empty): True when it was new."""
    mask = np.uint64(table.size - 1)
    slot = _mix(key) & mask
    stored = key + np.uint64(1)
    while table[slot] != 0:
        if table[slot] == stored:
            return False
        slot = (slot + np.uint64(1)) & mask
    table[slot] = stored
    return True


@njit(cache=True)
def rehash(states, count, table):
    """Put states[:count] into the empty hash set `table`."""
    for i in range(count):
        _add(table, states[i])


@njit(cache=True)
def _unpack(key, lay, cp, cl, en, ep, el, rec):
    """Fill the scratch arrays from `key`; return (wall, number of events)."""
    nodes, pb, lb, nb = lay[0], lay[4], lay[5], lay[6]
    for n in range(nodes):
        shift = lay[7] + n * (pb + lb)
        cp[n], cl[n] = _get(key, shift, pb), _get(key, shift + pb, lb)
    count = _get(key, lay[8], lay[9] - lay[8])
    for i in range(count):
        shift = lay[9] + i * (nb + pb + lb)
        en[i], ep[i], el[i] = _get(key, shift, nb), _get(key, shift + nb, pb), \
            _get(key, shift + nb + pb, lb)
        for r in range(nodes):
            rec[i * nodes + r] = _get(key, lay[10] + i * nodes + r, 1)
    return _get(key, 0, pb), count


@njit(cache=True)
def _pack(lay, wall, count, cp, cl, en, ep, el, rec, node, bp, bl):
    """The packed state of the scratch arrays; its last step `node` (before (bp, bl)) when
    the layout keeps history and node >= 0."""
    nodes, pb, lb, nb = lay[0], lay[4], lay[5], lay[6]
    key = _put(np.uint64(0), 0, wall)
    for n in range(nodes):
        shift = lay[7] + n * (pb + lb)
        key = _put(_put(key, shift, cp[n]), shift + pb, cl[n])
    key = _put(key, lay[8], count)
    for i in range(count):
        shift = lay[9] + i * (nb + pb + lb)
        key = _put(_put(_put(key, shift, en[i]), shift + nb, ep[i]), shift + nb + pb, el[i])
        for r in range(nodes):
            key = _put(key, lay[10] + i * nodes + r, rec[i * nodes + r])
    if lay[3] and node >= 0:
        key = _put(_put(_put(_put(key, lay[11], 1), lay[11] + 1, node), lay[11] + 1 + nb, bp),
                   lay[11] + 1 + nb + pb, bl)
    return key


@njit(cache=True)
def _lt(ap, al, bp, bl):
    return ap < bp or (ap == bp and al < bl)


@njit(cache=True)
def _violated(lay, wall, count, cp, cl, en, ep, el, rec, node, bp, bl):
    """1 + the index of the first invariant of INVARIANTS broken by the state and its last
    step (node < 0: none), or 0."""
    nodes = lay[0]
    for i in range(count):
        for r in range(nodes):
            if rec[i * nodes + r] and not _lt(ep[i], el[i], cp[r], cl[r]):
                return 1
    if node >= 0 and cp[node] < bp:
        return 2
    if node >= 0 and not _lt(bp, bl, cp[node], cl[node]):
        return 3
    for i in range(count):
        for j in range(i + 1, count):
            if en[i] == en[j] and not _lt(ep[i], el[i], ep[j], el[j]):
                return 4
    if count > lay[2]:
        return 5
    for n in range(nodes):
        if cp[n] > wall:
            return 6
    return 0


@njit(cache=True)
def hlc_search(lay, tick, receive, states, parent, action, table, progress, max_states):
    """Breadth-first search of hlc's machine (steps 3 and 4) into the caller's buffers: the
    packed states in BFS order, each one's parent index and step code, and the hash set.
    progress = [head, count, transitions, code, at, step] on entry and on return: the search
    resumes at state `head`, and returns GROW before a state whose successors might not fit
    (the caller enlarges the buffers), else the violation code (0 none) found at state `at`,
    or on step `step` from it (-1: at `at` itself)."""
    nodes, max_physical, max_events = lay[0], lay[1], lay[2]
    head, count, transitions = progress[0], progress[1], progress[2]
    cp, cl = np.zeros(nodes, np.int64), np.zeros(nodes, np.int64)
    en, ep, el = np.zeros(max_events + 1, np.int64), np.zeros(max_events + 1, np.int64), \
        np.zeros(max_events + 1, np.int64)
    rec = np.zeros((max_events + 1) * nodes, np.int64)
    code, at, step = 0, 0, -1
    if count == 0:
        states[0] = _pack(lay, 0, 0, cp, cl, en, ep, el, rec, -1, 0, 0)
        parent[0], action[0], count = -1, -1, 1
        _add(table, states[0])
        code = _violated(lay, 0, 0, cp, cl, en, ep, el, rec, -1, 0, 0)
    pb, lb, nb, history = lay[4], lay[5], lay[6], lay[3]
    one = np.uint64(1)
    clock_mask = (one << np.uint64(pb + lb)) - one
    count_mask = ((one << np.uint64(lay[9] - lay[8])) - one) << np.uint64(lay[8])
    last_mask = ((one << np.uint64(1 + nb + pb + lb)) - one) << np.uint64(lay[11])
    room = 1 + nodes + max_events * nodes
    while code == 0 and head < count:
        if count + room > states.size or 4 * (count + room) > 3 * table.size:
            code = GROW
            break
        wall, length = _unpack(states[head], lay, cp, cl, en, ep, el, rec)
        base = states[head] & ~last_mask if history else states[head]
        moved = False
        for k in range(1 + nodes + length * nodes):
            # step k: AdvanceWall, Tick(n) for n < nodes, then Receive of event i by node r
            node, bp, bl, new_wall, new_len, step = -1, 0, 0, wall, length, ADVANCE
            first, kept, key = 0, 0, base
            if k == 0:
                if wall >= max_physical:
                    continue
                new_wall = wall + 1
                key = base + one
            elif k <= nodes:
                node = k - 1
                bp, bl = cp[node], cl[node]
                p, lg = tick[bp, bl, wall, 0], tick[bp, bl, wall, 1]
                if length >= max_events or lg > max_events:
                    continue
                step = TICK + 4 * node
                cp[node], cl[node] = p, lg
                en[length], ep[length], el[length] = node, p, lg
                rec[length * nodes:(length + 1) * nodes] = 0
                new_len = length + 1
                if 0 <= p <= max_physical:
                    shift = lay[9] + length * (nb + pb + lb)
                    key = _put(_put(_put((key & ~count_mask), lay[8], new_len), shift, node),
                               shift + nb, p | (lg << pb))
            else:
                i, node = (k - 1 - nodes) // nodes, (k - 1 - nodes) % nodes
                bp, bl = cp[node], cl[node]
                p, lg = receive[bp, bl, ep[i], el[i], wall, 0], \
                    receive[bp, bl, ep[i], el[i], wall, 1]
                if node == en[i] or lg > max_events:
                    continue
                step = RECEIVE + 4 * (i + 64 * node)
                first = i
                for j in range(i):
                    if en[j] == en[i] and ep[j] == ep[i] and el[j] == el[i]:
                        first = j
                        break
                kept = rec[first * nodes + node]
                cp[node], cl[node] = p, lg
                rec[first * nodes + node] = 1
                key = _put(key, lay[10] + first * nodes + node, 1)
            moved = True
            transitions += 1
            packable = node < 0 or 0 <= cp[node] <= max_physical
            if node >= 0 and packable:
                shift = lay[7] + node * (pb + lb)
                key = _put(key & ~(clock_mask << np.uint64(shift)), shift,
                           cp[node] | (cl[node] << pb))
                if history:
                    key = _put(key, lay[11], 1 | (node << 1) | (bp << (1 + nb))
                               | (bl << (1 + nb + pb)))
            stepped_badly = node >= 0 and (cp[node] < bp or not _lt(bp, bl, cp[node], cl[node]))
            new = packable and _add(table, key)
            if new or not packable or stepped_badly:
                code = _violated(lay, new_wall, new_len, cp, cl, en, ep, el, rec, node, bp, bl)
            if node >= 0:
                cp[node], cl[node] = bp, bl
            if step % 4 == RECEIVE:
                rec[first * nodes + node] = kept
            if code == 0 and new:
                if count >= max_states:
                    code = TOO_MANY
                else:
                    states[count], parent[count], action[count] = key, head, step
                    count += 1
            if code:
                at = head
                break
        if code == 0 and not moved and wall != max_physical:
            code, at, step = DEADLOCK, head, -1
        if code == 0:
            head += 1
    progress[0], progress[1], progress[2] = head, count, transitions
    progress[3], progress[4], progress[5] = code, at, step


@dataclass(frozen=True)
class Search:
    """What the compiled search found, as explore reports it, and the packed states."""

    states: int
    transitions: int
    violation: str | None
    trace: list[str] | None
    keys: np.ndarray


def label(layout: HlcLayout, key: int, step: int) -> str:
    """The spec's label of step code `step` from the packed state `key`."""
    kind, arg = step % 4, step // 4
    if kind == ADVANCE:
        return "AdvanceWall"
    if kind == TICK:
        return f"Tick(n{arg + 1})"
    sender, ts = layout.unpack(key).events[arg % 64]
    return f"Receive(n{sender + 1}, n{arg // 64 + 1}, {ts})"


def search_hlc(errata: frozenset[str] = NO_ERRATA, max_events: int = hlc.MAX_EVENTS,
               history: bool = False, max_states: int = MAX_STATES) -> Search:
    """hlc's machine at `max_events`: with `history` the spec's states (with the last step),
    without it the .tla's variables, which TLC counts (steps 1-5)."""
    layout = HlcLayout(hlc.NODES, hlc.MAX_PHYSICAL, max_events, history)
    tick, receive = rule_tables(errata, max_events)
    states, parent, action = np.empty(1 << 10, np.uint64), np.empty(1 << 10, np.int32), \
        np.empty(1 << 10, np.int32)
    table = np.zeros(1 << 11, np.uint64)
    progress = np.zeros(6, np.int64)
    while True:
        hlc_search(layout.array(), tick, receive, states, parent, action, table, progress,
                   max_states)
        count, transitions, code, at, step = (int(v) for v in progress[1:])
        if code != GROW:
            break
        states, parent, action = (np.concatenate((a, np.empty_like(a)))
                                  for a in (states, parent, action))
        table = np.zeros(2 * table.size, np.uint64)
        rehash(states, count, table)
        progress[3] = 0
    keys = states[:count]
    if code == 0:
        return Search(count, transitions, None, None, keys)
    if code == TOO_MANY:
        return Search(count, transitions, f"more than {max_states} states: bound the model",
                      None, keys)
    trace = [] if step < 0 else [label(layout, int(states[at]), step)]
    while parent[at] >= 0:
        trace.append(label(layout, int(states[parent[at]]), int(action[at])))
        at = int(parent[at])
    violation = INVARIANTS[code - 1] if code <= len(INVARIANTS) else "deadlock"
    return Search(count, transitions, violation, trace[::-1], keys)
