"""numba kernel for vigil.dispatch: Vigil's foreground walk (alignment, replay, divergence,
alternate switch with slot migration, fallback) over regions flattened into arrays. The
regions are parsed (and recordings run through the pipeline) by the spec first; so is what the
Cipher would make of each region (whether it stores, and the region a load gives back)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import REGISTRY, kernel
from ....spec.core.schema import HASH64
from ....spec.crucible.cipher import E18_5, Cipher
from ....spec.crucible.context import E11_3
from ....spec.crucible.region_cache import CAP
from ....spec.crucible.replay_region import E11_1, Guard
from ....spec.crucible.transaction import E18_9, TXLOG_CAPACITY
from ....spec.crucible.types import NONE32
from ....spec.crucible.vigil import ALIGNMENT_K, E11_2, E11_5, E11_6, cdag_of, region_of
from ....spec.crucible.vigil_ops import call_name, load_regions, parse_stream, region_indices
from .replay import guard_array

NONE = np.int64(NONE32)
TX_CAP = TXLOG_CAPACITY
# scalar state: S[...]
CTX_MODE, MODE, STEP, PENDING, ALIGNING, ALIGN_POS, RESET, ITERS, DIVERGED_N, ACTIVE, \
    ENGINE_R, CURSOR, CURRENT, POOL_BYTES, C_HEAD, C_COUNT, TX_HEAD, TX_ACTIVE, N_EVENTS, \
    N_MIG, N_HANDLES, EVENT, TENTATIVE, TX_COUNT, BG, HEAD_R, CIPHER = range(27)
EV_PUBLISHED, EV_ALIGNED, EV_SWITCHED, EV_FALLBACK, EV_NO_PLAN = 1, 2, 3, 4, 5
EVENTS = {EV_PUBLISHED: "published", EV_ALIGNED: "aligned", EV_SWITCHED: "switched",
          EV_FALLBACK: "fallback", EV_NO_PLAN: "no_plan", 6: "rollback", 7: "persist", 8: "load"}
ITEM_KINDS = {"rollback": 2, "persist": 3, "load": 4}
"""Stream item kinds: 0 an op, 1 a publish, then the API calls; a call's event is kind + 4."""
FLAG_E11_2, FLAG_E11_3, FLAG_E11_5, FLAG_E18_9, FLAG_E11_6 = 0, 1, 2, 3, 4
PIPELINE_ERRATA = ("E6.1", "E6.4", "E6.5", "E7.1", "E8.3", "E8.4", "E10.1")
"""Errata of the pipeline that builds regions from recordings: the spec's parse applies them."""


@njit(cache=True)
def _same(a, i, b, j, levels):
    same = True
    for k in range(levels):
        same = same and a[i, k] == b[j, k]
    return same


@njit(cache=True)
def _advance(S, R, guards, g, gi, levels):
    """ReplayEngine::advance on the engine's region; 0 MATCH, 1 DIVERGED, 2 COMPLETE."""
    r = S[ENGINE_R]
    n = R[r + 1] - R[r]
    if not _same(guards, R[r] + S[CURSOR], g, gi, levels):
        return 1
    S[CURRENT] = S[CURSOR]
    S[CURSOR] += 1
    if S[CURSOR] == n:
        return 2
    return 0


@njit(cache=True)
def _ctx_advance(S, R, guards, g, gi, levels):
    s = _advance(S, R, guards, g, gi, levels)
    if s == 2:
        S[ITERS] += 1
        S[CURSOR] = 0
    elif s == 1:
        S[DIVERGED_N] += 1
    return s


@njit(cache=True)
def _pool_init(S, r, SL, slot_off, slot_ext, pool_bytes, kind, val):
    kind[:] = 0
    for s in range(SL[r + 1] - SL[r]):
        if not slot_ext[SL[r] + s]:
            kind[s] = 1
            val[s] = slot_off[SL[r] + s]
    S[POOL_BYTES] = pool_bytes[r]


@njit(cache=True)
def _register_externals(r, R, SL, slot_ext, IN, in_ids, in_null, in_ptr, kind, val):
    for s in range(SL[r + 1] - SL[r]):
        if not slot_ext[SL[r] + s]:
            continue
        ptr = np.uint64(0)
        for o in range(R[r], R[r + 1]):
            if in_null[o]:
                continue
            for j in range(IN[o], IN[o + 1]):
                if in_ids[j] == s:
                    ptr = in_ptr[j]
                    break
            if ptr != 0:
                break
        if ptr != 0:
            kind[s] = 2
            val[s] = ptr


@njit(cache=True)
def _activate(S, r, R, SL, slot_off, slot_ext, pool_bytes, kind, val):
    _pool_init(S, r, SL, slot_off, slot_ext, pool_bytes, kind, val)
    S[ENGINE_R], S[CURSOR], S[CURRENT] = r, 0, -1
    S[ACTIVE], S[CTX_MODE] = r, 1


@njit(cache=True)
def _deactivate(S, kind):
    S[CTX_MODE] = 0
    S[ACTIVE] = -1
    S[POOL_BYTES] = 0
    kind[:] = 0


@njit(cache=True)
def _cache_insert(S, r, content, c_region, c_hash, c_nops, nops_visible):
    for i in range(S[C_COUNT]):
        if c_hash[(S[C_HEAD] - 1 - i) & (CAP - 1)] == content[r]:
            return
    idx = S[C_HEAD] & (CAP - 1)
    c_region[idx], c_hash[idx], c_nops[idx] = r, content[r], nops_visible
    S[C_HEAD] += 1
    S[C_COUNT] = min(S[C_COUNT] + 1, CAP)


@njit(cache=True)
def _align(S, R, guards, g, gi, levels, naive):
    """The matched prefix length after op g (the spec's sliding window, or E11.5's restart)."""
    r, pos = S[ALIGNING], S[ALIGN_POS]
    base = R[r]
    if naive:
        if _same(guards, base + pos, g, gi, levels):
            return pos + 1
        return 1 if _same(guards, base, g, gi, levels) else 0
    for length in range(pos + 1, 0, -1):
        ok = _same(guards, base + length - 1, g, gi, levels)
        for j in range(length - 1):
            if not ok:
                break
            ok = _same(guards, base + pos + 1 - length + j, guards, base + j, levels)
        if ok:
            return length
    return 0


@njit(cache=True)
def _handles(S, at, R, OUT, out_ids, out_null, IN, in_ids, in_null, kind, val, h_at, h_side,
             h_slot, h_kind, h_val):
    o = R[S[ENGINE_R]] + S[CURRENT]
    for side in range(2):
        lo = OUT[o] if side == 0 else IN[o]
        hi = OUT[o + 1] if side == 0 else IN[o + 1]
        null = out_null[o] if side == 0 else in_null[o]
        if null:
            continue
        for j in range(lo, hi):
            sid = out_ids[j] if side == 0 else in_ids[j]
            k = S[N_HANDLES]
            h_at[k], h_side[k], h_slot[k] = at, side, sid
            h_kind[k], h_val[k] = (0, 0) if sid == NONE else (kind[sid], val[sid])
            S[N_HANDLES] += 1


@njit(cache=True)
def _store(S, r, content, storable, stored):
    """cipher.store(region): the hash once an object exists under it (the first writer's),
    else 0; 0 for a zero hash."""
    if content[r] == 0:
        return False
    for q in range(stored.size):
        if stored[q] and content[q] == content[r]:
            return True
    stored[r] = storable[r]
    return storable[r] != 0


@njit(cache=True)
def _api_call(S, call, n, R, SL, slot_off, slot_ext, pool_bytes, has_plan, content, storable,
              stored, IN, in_ids, in_null, in_ptr, kind, val, c_region, c_hash, c_nops, flags,
              tx_status, tx_region):
    """rollback (2), persist (3) or load (4) of section 13.5; whether it returned true. A
    loaded region is region n + r, the Cipher's copy of the first region stored as r."""
    if call == 2:
        p = -1
        for i in range(S[TX_COUNT]):  # previous()
            slot = (S[TX_HEAD] - 1 - i) & (TX_CAP - 1)
            if tx_status[slot] == 4:
                p = slot
                break
        if p < 0:
            return False
        if S[TX_ACTIVE] >= 0:
            tx_status[S[TX_ACTIVE]] = 5
        tx_status[p] = 3
        S[TX_ACTIVE] = p
        if S[CTX_MODE] == 1:
            _deactivate(S, kind)
        if not flags[FLAG_E11_6]:
            S[PENDING], S[ALIGNING] = -1, -1
        r = tx_region[p]
        if r >= 0:
            S[BG] = r
            if has_plan[r]:
                _activate(S, r, R, SL, slot_off, slot_ext, pool_bytes, kind, val)
                _register_externals(r, R, SL, slot_ext, IN, in_ids, in_null, in_ptr, kind, val)
        return True
    if not S[CIPHER]:
        return False
    if call == 3:
        r = S[BG]
        if r < 0 or not _store(S, r % n, content, storable, stored):
            return False
        for q in range(n):
            if stored[q] and content[q] == content[r]:
                S[HEAD_R] = q
                break
        return True
    if S[HEAD_R] < 0 or content[S[HEAD_R]] == 0:
        return False
    r = n + S[HEAD_R]
    S[BG], S[MODE] = r, 1
    if has_plan[r]:
        _activate(S, r, R, SL, slot_off, slot_ext, pool_bytes, kind, val)
        _register_externals(r, R, SL, slot_ext, IN, in_ids, in_null, in_ptr, kind, val)
        _cache_insert(S, r, content, c_region, c_hash, c_nops, R[r + 1] - R[r])
    return True


@njit(cache=True)
def vigil_run(kinds, items, pub_start, pub_ids, n_first, R, guards, has_plan, content,
              pool_bytes, SL, slot_off, slot_nbytes, slot_ext, OUT, out_ids, out_null, IN,
              in_ids, in_null, in_ptr, flags, levels, max_slots, S, dec, recorded, ev, mig,
              h_at, h_side, h_slot, h_kind, h_val, c_region, tx_status, tx_region, tx_step,
              n_regions, cipher, storable, stored, call_ok):
    """The foreground over the items (kind 0 an op, 1 a publish, 2.. an API call; the first
    n_first publish lists are published before the stream). dec[i] = action, status,
    op_index; call_ok[i] what a call returned."""
    kind = np.zeros(max_slots, dtype=np.int64)
    val = np.zeros(max_slots, dtype=np.uint64)
    visited = np.zeros(max_slots, dtype=np.uint8)
    c_hash = np.zeros(CAP, dtype=np.uint64)
    c_nops = np.zeros(CAP, dtype=np.int64)
    S[:] = 0
    S[PENDING], S[ALIGNING], S[ACTIVE], S[ENGINE_R], S[CURRENT], S[TX_ACTIVE] = -1, -1, -1, \
        -1, -1, -1
    S[BG], S[HEAD_R], S[CIPHER] = -1, -1, cipher
    for t in range(n_first + kinds.size):
        at = t - n_first
        if t < n_first or kinds[at] == 1:
            for p in range(pub_start[t], pub_start[t + 1]):  # on_region_ready
                r = pub_ids[p]
                step = S[STEP]
                S[STEP] += 1
                if not flags[FLAG_E18_9] and S[TX_ACTIVE] == S[TX_HEAD] & (TX_CAP - 1):
                    S[TX_HEAD] += 1
                slot = S[TX_HEAD] & (TX_CAP - 1)
                S[TX_HEAD] += 1
                S[TX_COUNT] = min(S[TX_COUNT] + 1, TX_CAP)
                tx_status[slot], tx_region[slot], tx_step[slot] = 2, r, step
                if S[TX_ACTIVE] >= 0:
                    tx_status[S[TX_ACTIVE]] = 4
                tx_status[slot] = 3
                S[TX_ACTIVE] = slot
                S[BG], S[PENDING] = r, r
                S[MODE] = 1
                if cipher:
                    _store(S, r, content, storable, stored)
            if t >= n_first:
                S[EVENT] = EV_PUBLISHED
        elif kinds[at] >= 2:
            call_ok[at] = _api_call(S, kinds[at], n_regions, R, SL, slot_off, slot_ext, pool_bytes,
                                    has_plan, content, storable, stored, IN, in_ids, in_null,
                                    in_ptr, kind, val, c_region, c_hash, c_nops, flags,
                                    tx_status, tx_region)
            S[EVENT] = kinds[at] + 4
        else:
            S[EVENT] = 0
            action, status, op_index = 0, 0, NONE
            if S[CTX_MODE] == 1:  # A. replay
                status = _ctx_advance(S, R, guards, items, at, levels)
                if status != 1:
                    action = 1
                else:  # handle_divergence_
                    div_pos, a = S[CURSOR], S[ACTIVE]
                    _cache_insert(S, a, content, c_region, c_hash, c_nops,
                                  R[a + 1] - R[a] if has_plan[a] else 0)
                    alt = -1
                    for i in range(S[C_COUNT]):
                        idx = (S[C_HEAD] - 1 - i) & (CAP - 1)
                        r = c_region[idx]
                        if r != a and div_pos < c_nops[idx] and \
                                _same(guards, R[r] + div_pos, items, at, levels):
                            alt = r
                            break
                    switched = False
                    if alt >= 0 and has_plan[alt]:
                        ok = True
                        if div_pos > 0:
                            ok = div_pos <= R[alt + 1] - R[alt]
                            for i in range(div_pos):
                                if ok and not _same(guards, R[a] + i, guards, R[alt] + i,
                                                    levels):
                                    ok = False
                        if ok and div_pos == 0:
                            _deactivate(S, kind)
                            _activate(S, alt, R, SL, slot_off, slot_ext, pool_bytes, kind, val)
                        elif ok:
                            had_buffer = S[POOL_BYTES] > 0
                            _pool_init(S, alt, SL, slot_off, slot_ext, pool_bytes, kind, val)
                            visited[:] = 0
                            S[TENTATIVE] = S[N_MIG]
                            for i in range(div_pos):
                                o, nw = R[a] + i, R[alt] + i
                                if out_null[o] or out_null[nw]:
                                    continue
                                cnt = min(OUT[o + 1] - OUT[o], OUT[nw + 1] - OUT[nw])
                                for j in range(cnt):
                                    so, sn = out_ids[OUT[o] + j], out_ids[OUT[nw] + j]
                                    if so == NONE or sn == NONE:
                                        continue
                                    if slot_ext[SL[a] + so] or slot_ext[SL[alt] + sn] or \
                                            visited[sn]:
                                        continue
                                    visited[sn] = 1
                                    nb = slot_nbytes[SL[a] + so]
                                    if not flags[FLAG_E11_3]:
                                        nb = min(nb, slot_nbytes[SL[alt] + sn])
                                    if nb > 0 and had_buffer:
                                        m = S[TENTATIVE]
                                        mig[m, 0], mig[m, 1], mig[m, 2] = at, i, so
                                        mig[m, 3], mig[m, 4] = sn, nb
                                        S[TENTATIVE] += 1
                            S[ENGINE_R], S[CURSOR], S[CURRENT], S[ACTIVE] = alt, 0, -1, alt
                            for i in range(div_pos):
                                _advance(S, R, guards, guards, R[alt] + i, levels)
                        if ok:
                            _register_externals(alt, R, SL, slot_ext, IN, in_ids, in_null,
                                                in_ptr, kind, val)
                            status = _ctx_advance(S, R, guards, items, at, levels)
                            switched = True  # alt's op at div_pos has this op's guard
                            action, op_index = 1, S[CURSOR]
                            S[N_MIG] = S[TENTATIVE] if div_pos > 0 else S[N_MIG]
                            S[EVENT] = EV_SWITCHED
                    if not switched:  # the context is still compiled
                        _deactivate(S, kind)
                        S[MODE] = 0 if flags[FLAG_E11_2] else 2
                        S[RESET] = 1
                        S[EVENT] = EV_FALLBACK
                        status = 1
            elif S[PENDING] >= 0 or S[ALIGNING] >= 0:  # B. transition
                if S[PENDING] >= 0:
                    r = S[PENDING]
                    S[PENDING] = -1
                    if R[r + 1] > R[r]:
                        S[ALIGNING], S[ALIGN_POS] = r, 0
                if S[ALIGNING] >= 0:
                    r = S[ALIGNING]
                    S[ALIGN_POS] = _align(S, R, guards, items, at, levels, flags[FLAG_E11_5])
                    n = R[r + 1] - R[r]
                    if S[ALIGN_POS] >= min(n, ALIGNMENT_K):
                        if not has_plan[r]:
                            S[ALIGNING] = -1
                            S[EVENT] = EV_NO_PLAN
                        else:
                            _activate(S, r, R, SL, slot_off, slot_ext, pool_bytes, kind, val)
                            _register_externals(r, R, SL, slot_ext, IN, in_ids, in_null,
                                                in_ptr, kind, val)
                            _cache_insert(S, r, content, c_region, c_hash, c_nops, n)
                            for i in range(S[ALIGN_POS]):
                                _ctx_advance(S, R, guards, guards, R[r] + i, levels)
                            S[MODE] = 1
                            S[ALIGNING] = -1
                            S[EVENT] = EV_ALIGNED
                else:
                    recorded[at] = 1
            else:  # C. record
                recorded[at] = 1
            dec[at, 0], dec[at, 1], dec[at, 2] = action, status, op_index
            if action == 1:
                _handles(S, at, R, OUT, out_ids, out_null, IN, in_ids, in_null, kind, val,
                         h_at, h_side, h_slot, h_kind, h_val)
        if t >= n_first and S[EVENT] != 0:
            e = S[N_EVENTS]
            ev[e, 0], ev[e, 1], ev[e, 2], ev[e, 3] = at, S[EVENT], S[CTX_MODE], S[MODE]
            ev[e, 4] = S[ACTIVE]
            S[N_EVENTS] += 1


def _ragged(lists):
    starts = np.zeros(len(lists) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(x or []) for x in lists])
    flat = np.array([v for x in lists for v in (x or [])], dtype=np.int64)
    return starts, flat


def _handle_wire(kind: int, sid: int, value: int):
    if sid == NONE:
        return None
    if kind == 1:
        return {"slot": sid, "offset": value}
    return {"slot": sid, "external": HASH64.encode(value) if kind == 2 else None}


def fast_items(stream, n: int) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Item kinds (1 = publish), every item's guard row and publish list: plain op objects go
    through one columnar parse; anything unusual through the spec's parser."""
    try:
        if any(call_name(o) for o in stream):
            raise ValueError("calls")
        kinds = np.array([isinstance(o, dict) and "publish" in o for o in stream],
                         dtype=np.int64)
        lists: list[list[int]] = [[] for _ in stream]
        for i in np.flatnonzero(kinds).tolist():
            if len(stream[i]) != 1:
                raise ValueError(i)
            lists[i] = region_indices(stream[i]["publish"], n, f"args.stream[{i}].publish")
        guards = np.zeros((len(stream), 4), dtype=np.uint64)
        guards[kinds == 0] = guard_array([o for o, k in zip(stream, kinds.tolist(),
                                                            strict=True) if not k])
        return kinds, guards, lists
    except (ValueError, AttributeError, TypeError):
        items = parse_stream(stream, n)
        kinds = np.array([ITEM_KINDS[x] if isinstance(x, str) else isinstance(x, list)
                          for x in items], dtype=np.int64)
        guards = np.array([tuple(x) if isinstance(x, Guard) else (0, 0, 0, 0) for x in items]
                          or np.zeros((0, 4)), dtype=np.uint64).reshape(-1, 4)
        return kinds, guards, [x if isinstance(x, list) else [] for x in items]


def vigil_one(regions, recordings, published, stream, handles, cipher, errata) -> dict:
    """Flatten, run the kernel, and put the wire result together."""
    rs = load_regions(regions, recordings, errata)
    kinds, stream_g, lists = fast_items(stream, len(rs))
    n, calls = len(rs), bool((kinds >= 2).any())
    cdags = [cdag_of(r) for r in rs] if calls else []
    storable = np.zeros(n, dtype=np.uint8)
    if cipher:
        storable[:len(cdags)] = [Cipher().store(d, errata) != 0 for d in cdags]
    if (kinds == ITEM_KINDS["load"]).any():
        rs = rs + [region_of(d, r.rid) for d, r in zip(cdags, rs, strict=True)]
    first = list(range(n)) if published is None else region_indices(published, n,
                                                               "args.published")
    ops = [op for r in rs for op in r.ops]
    R = np.zeros(len(rs) + 1, dtype=np.int64)
    R[1:] = np.cumsum([r.num_ops for r in rs])
    guards = np.array([tuple(op.guard) for op in ops] or np.zeros((0, 4)), dtype=np.uint64)
    guards = guards.reshape(len(ops), 4)
    slots = [r.plan.slots if r.plan else [] for r in rs]
    SL = np.zeros(len(rs) + 1, dtype=np.int64)
    SL[1:] = np.cumsum([len(s) for s in slots])
    flat = [s for ss in slots for s in ss]
    OUT, out_ids = _ragged([op.output_slot_ids for op in ops])
    IN, in_ids = _ragged([op.input_slot_ids for op in ops])
    in_ptr = np.array([(op.input_ptrs[j] if j < len(op.input_ptrs) else 0)
                       for op in ops for j in range(len(op.input_slot_ids or []))],
                      dtype=np.uint64)
    pub_start, pub_ids = _ragged([first, *lists])
    m = kinds.size
    per_op = max([len(op.output_slot_ids or []) + len(op.input_slot_ids or [])
                  for op in ops] or [0])
    max_slots = max([len(s) for s in slots] or [0]) + 1
    outs = max([len(op.output_slot_ids or []) for op in ops] or [0])
    S = np.zeros(27, dtype=np.int64)
    call_ok = np.zeros(m, dtype=np.uint8)
    dec = np.zeros((m, 3), dtype=np.int64)
    recorded = np.zeros(m, dtype=np.uint8)
    ev = np.zeros((m, 5), dtype=np.int64)
    mig = np.zeros((m * max(1, outs) * (max(r.num_ops for r in rs) if rs else 1) + 1, 5),
                   dtype=np.int64)
    hn = m * per_op + 1
    h_at, h_side, h_slot, h_kind = (np.zeros(hn, dtype=np.int64) for _ in range(4))
    h_val = np.zeros(hn, dtype=np.uint64)
    c_region = np.full(CAP, -1, dtype=np.int64)
    tx_status = np.zeros(TX_CAP, dtype=np.int64)
    tx_region = np.full(TX_CAP, -1, dtype=np.int64)
    tx_step = np.zeros(TX_CAP, dtype=np.int64)
    flags = np.array([E11_2 in errata, E11_3 in errata, E11_5 in errata, E18_9 in errata,
                      E11_6 in errata], dtype=np.uint8)
    content = np.array([r.content_hash for r in rs], dtype=np.uint64)
    vigil_run(kinds, stream_g, pub_start, pub_ids, 1, R, guards,
              np.array([r.plan is not None for r in rs], dtype=np.uint8),
              content, np.array([r.plan.pool_bytes if r.plan else 0 for r in rs], dtype=np.int64),
              SL, np.array([s.offset_bytes for s in flat], dtype=np.int64),
              np.array([s.nbytes for s in flat], dtype=np.int64),
              np.array([s.is_external for s in flat], dtype=np.uint8),
              OUT, out_ids, np.array([op.output_slot_ids is None for op in ops], dtype=np.uint8),
              IN, in_ids, np.array([op.input_slot_ids is None for op in ops], dtype=np.uint8),
              in_ptr, flags, 2 if E11_1 in errata else 4, max_slots, S, dec, recorded, ev, mig,
              h_at, h_side, h_slot, h_kind, h_val, c_region, tx_status, tx_region,
              tx_step, n, int(cipher), storable, np.zeros(n, dtype=np.uint8), call_ok)
    by_item: dict[int, tuple[list, list]] = {}
    for k in range(int(S[N_HANDLES])):
        side = by_item.setdefault(int(h_at[k]), ([], []))[int(h_side[k])]
        side.append(_handle_wire(int(h_kind[k]), int(h_slot[k]), int(h_val[k])))
    decisions = []
    for i in range(m):
        if kinds[i] != 0:
            continue
        d = {"action": int(dec[i, 0]), "status": int(dec[i, 1]), "op_index": int(dec[i, 2])}
        if handles and d["action"] == 1:
            outs_, ins_ = by_item.get(i, ([], []))
            d |= {"outputs": outs_, "inputs": ins_}
        decisions.append(d)
    calls = [{"at": i, "call": EVENTS[int(kinds[i]) + 4], "ok": bool(call_ok[i])}
             for i in np.flatnonzero(kinds >= 2).tolist()]
    changes = [{"at": int(e[0]), "event": EVENTS[int(e[1])], "ctx_mode": int(e[2]),
                "mode": int(e[3]), "region": None if e[4] < 0 else int(e[4]) % n}
               for e in ev[:int(S[N_EVENTS])]]
    head, count = int(S[C_HEAD]), int(S[C_COUNT])
    txa = int(S[TX_ACTIVE])
    return {"decisions": decisions, "changes": changes,
            "recorded": [i for i in range(m) if recorded[i]],
            "migrations": [{"at": int(x[0]), "op": int(x[1]), "old_slot": int(x[2]),
                            "new_slot": int(x[3]), "nbytes": int(x[4])}
                           for x in mig[:int(S[N_MIG])]], "calls": calls,
            "ctx_mode": int(S[CTX_MODE]), "mode": int(S[MODE]),
            "compiled_iterations": int(S[ITERS]), "diverged_count": int(S[DIVERGED_N]),
            "active_region": None if S[ACTIVE] < 0 else int(S[ACTIVE]) % n,
            "region_cache": [int(c_region[(head - 1 - i) & (CAP - 1)]) % n for i in range(count)],
            "step": int(S[STEP]), "reset_requested": bool(S[RESET]),
            "active_tx_region": int(tx_region[txa]) if txa >= 0 and tx_status[txa] == 3
            else None,
            "active_tx_step": int(tx_step[txa]) if txa >= 0 and tx_status[txa] == 3 else None,
            "cipher_head": int(content[S[HEAD_R]]) if S[HEAD_R] >= 0 else 0}


@kernel("vigil.dispatch", "numba",
        models=(E11_1, E11_2, E11_3, E11_5, E11_6, E18_5, E18_9, *PIPELINE_ERRATA))
def vigil_dispatch_batch(regions, recordings, published, stream, handles, cipher,
                         errata=frozenset()):
    rows = [vigil_one(*a, bool(h), bool(c), errata) for a, h, c in
            zip(zip(regions, recordings, published, stream, strict=True), handles, cipher,
                strict=True)]
    out = {k: [row[k] for row in rows] for k in REGISTRY.ops["vigil.dispatch"].result.fields}
    for k in ("ctx_mode", "mode", "compiled_iterations", "diverged_count"):
        out[k] = np.array(out[k], dtype=np.uint32)
    out["step"] = np.array(out["step"], dtype=np.uint64)
    return out
