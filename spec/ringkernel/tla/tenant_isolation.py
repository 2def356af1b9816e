"""Chapter 19: RingKernel's tenant_isolation.tla as an explicit-state machine.

1. Each kernel starts unregistered and may be registered once, to one tenant.
2. Send(f, t) of the next id: rejected when either kernel is unregistered or their tenants
   differ; otherwise delivered into t's inbox. (The host broker, k2k.simulate, delivers only
   into an endpoint registered in the sender's tenant, so it keeps the same isolation.)
3. Invariants: every delivered message joins two kernels registered to one tenant
   (IsolationByConstruction); no id is delivered into two tenants; each sent id is either
   delivered or rejected, never both and never neither; each inbox holds exactly the ids
   delivered to its kernel.

Bounds: the .cfg's (2 tenants, 3 kernels, MAX_MSGS 3). The state is the .tla's variables.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from ...core.machine import Machine

TENANTS = 2
KERNELS = 3
MAX_MSGS = 3
UNREGISTERED = -1

Msg = tuple[int, int, int]


class TenantModel(NamedTuple):
    kernel_tenant: tuple[int, ...]
    inboxes: tuple[frozenset[int], ...]
    delivered: frozenset[Msg]
    rejected: frozenset[Msg]
    next_msg: int


def routed(tf: int, tt: int) -> bool:
    """Whether a send between kernels of tenants tf and tt is delivered."""
    return UNREGISTERED not in (tf, tt) and tf == tt


def tenant_steps(s: TenantModel) -> Iterator[tuple[str, TenantModel]]:
    """RegisterKernel(k, t) and Send(f, t)."""
    for k in range(KERNELS):
        if s.kernel_tenant[k] == UNREGISTERED:
            for t in range(TENANTS):
                yield f"RegisterKernel(k{k + 1}, t{t + 1})", s._replace(
                    kernel_tenant=tuple(t if i == k else x for i, x in
                                        enumerate(s.kernel_tenant)))
    m = s.next_msg
    for f in range(KERNELS):
        for t in range(KERNELS):
            if f == t or m > MAX_MSGS:
                continue
            label = f"Send(k{f + 1}, k{t + 1})"
            if routed(s.kernel_tenant[f], s.kernel_tenant[t]):
                yield label, s._replace(
                    delivered=s.delivered | {(f, t, m)}, next_msg=m + 1,
                    inboxes=tuple(b | {m} if i == t else b for i, b in enumerate(s.inboxes)))
            else:
                yield label, s._replace(rejected=s.rejected | {(f, t, m)}, next_msg=m + 1)


def isolated(s: TenantModel) -> bool:
    """Every delivered message joins two kernels registered to the same tenant."""
    return all(s.kernel_tenant[f] != UNREGISTERED and s.kernel_tenant[f] == s.kernel_tenant[t]
               for f, t, _ in s.delivered)


def tenant_machine() -> Machine:
    """tenant_isolation.tla at 2 tenants, 3 kernels and MAX_MSGS 3."""
    init = TenantModel((UNREGISTERED,) * KERNELS, (frozenset(),) * KERNELS, frozenset(),
                       frozenset(), 1)
    return Machine(
        f"tenant_isolation.tla tenants={TENANTS} kernels={KERNELS} max_msgs={MAX_MSGS}",
        init, tenant_steps, (
            ("IsolationByConstruction", isolated),
            ("NoSameMessageInBothTenants",
             lambda s: len({m for _, _, m in s.delivered}) == len(s.delivered)),
            ("EverySendDeliveredOrRejected", lambda s: sorted(
                m for _, _, m in s.delivered | s.rejected) == list(range(1, s.next_msg))),
            ("InboxesWellFormed", lambda s: all(
                b == {m for _, t, m in s.delivered if t == k} for k, b in enumerate(s.inboxes)))),
        done=lambda s: s.next_msg > MAX_MSGS and UNREGISTERED not in s.kernel_tenant)


def tla_view(s: TenantModel) -> tuple:
    """The .tla's variables (the state itself)."""
    return tuple(s)
