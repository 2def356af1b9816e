"""The chapter plan of the yellowpaper (design §8): each chapter's title, the spec modules
whose docstrings and functions make its text (in this order), and what is not yet specified."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pending:
    """A part of a seed the spec does not state yet, and the facts section that describes it."""

    what: str
    facts: str


@dataclass(frozen=True)
class Chapter:
    number: int
    title: str
    modules: tuple[str, ...] = ()
    pending: tuple[Pending, ...] = ()
    about: tuple[str, ...] = ()
    """Modules outside spec/ whose docstrings the chapter also reads (the tools it describes)."""

    @property
    def slug(self) -> str:
        words = "".join(c if c.isalnum() else "-" for c in self.title.lower())
        return f"{self.number:02d}-" + "-".join(w for w in words.split("-") if w)

    @property
    def filename(self) -> str:
        return f"{self.slug}.md"


CHAPTERS: tuple[Chapter, ...] = (
    Chapter(1, "Notation and bits", (
        "core.bits", "core.layout", "core.layout_ops", "core.schema", "core.wire_columns",
        "core.shapes", "core.json_schema",
        "core.steps", "core.errors", "core.registry", "core.errata", "core.strategies",
        "core.lazy_z3")),
    Chapter(2, "Types", ("crucible.types",)),
    Chapter(3, "Arena", ("crucible.arena",)),
    Chapter(4, "SPSC ring and MetaLog", (
        "crucible.trace_ring", "crucible.meta_log", "crucible.ring_protocol", "crucible.spsc_ops",
        "ringkernel.queue", "ringkernel.message",
        "ringkernel.k2k_inbox")),
    Chapter(5, "TensorMeta and slots", ("crucible.tensor_meta", "crucible.tensor_slot")),
    Chapter(6, "Trace graph", (
        "crucible.trace_entry", "crucible.trace_graph", "crucible.background_thread",
        "crucible.build_trace", "crucible.trace_build_ops",
        "crucible.pipeline", "crucible.pipeline_ops", "crucible.vis")),
    Chapter(7, "Iteration detection", ("crucible.iteration_detector",)),
    Chapter(8, "Hashing", ("crucible.hashing", "crucible.schema_table", "crucible.vessel")),
    Chapter(9, "Merkle DAG", ("crucible.merkle_dag", "crucible.content_hash", "crucible.dag",
    "crucible.dag_ops", "crucible.kernel_cache")),
    Chapter(10, "Memory plan", ("crucible.memory_plan", "crucible.plan_validity", "pyc.alloc")),
    Chapter(11, "Compiled replay", (
        "crucible.pool_allocator", "crucible.replay_region", "crucible.replay_engine",
        "crucible.crucible_context", "crucible.vigil",
        "crucible.replay_machines", "crucible.replay_context_ops", "crucible.vigil_ops",
        "crucible.replay_ops")),
    Chapter(12, "Kernels", (
        "crucible.ckernel", "crucible.ckernel_table", "crucible.ckernel_ops", "core.f32_tensor",
        "crucible.libm", "crucible.cpu_kernels",
        "crucible.kernel_ops", "crucible.kernel_ew_ops", "crucible.cpu_kernels_linear",
        "crucible.kernel_linear_ops",
        "crucible.cpu_kernels_norm", "crucible.kernel_norm_ops", "crucible.mt19937",
        "crucible.rng_ops", "crucible.seed_compute", "pyc.wire",
        "pyc.kernels", "pyc.kernel_ops", "pyc.autotune", "pyc.autotune_ops", "pyc.rails",
        "pyc.dispatch", "pyc.decision_log", "vyre.fixed", "vyre.tt")),
    Chapter(13, "Cost model", (
        "crucible.cost_model", "crucible.cost_ops", "symplex.hardware_target",
        "symplex.tile_search", "symplex.tile_ops", "symplex.egraph.cost"), (
        Pending("PyC's kernel scores as a cost model", "other-seeds.md §1.5"),)),
    Chapter(14, "Graph IR and symbolic algebra", (
        "crucible.expr.node", "crucible.expr.arith", "crucible.expr.pool", "crucible.expr.canon",
        "crucible.expr.divide", "crucible.expr.logic", "crucible.expr.ops",
        "crucible.expr.errata", "crucible.expr.semantics", "crucible.expr.rules",
        "crucible.expr.rule_table", "crucible.swiss_table",
        "crucible.swiss_ops", "crucible.symbol_table", "crucible.symbol_ops", "crucible.graph",
        "crucible.graph_ir", "crucible.graph_cse", "crucible.graph_lower",
        "crucible.graph_ir_ops", "pyc.ir", "pyc.fingerprint", "pyc.cache", "pyc.compile_cache",
        "pyc.passes", "pyc.interp", "pyc.pass_ops", "pyc.guard", "symplex.dependence",
        "symplex.dependence_ops",
        "symplex.banerjee", "symplex.tensor_expr", "symplex.egraph.patterns",
        "symplex.egraph.rules", "symplex.egraph.saturate",
        "symplex.egraph.ops", "vyre.fusion")),
    Chapter(15, "Effects", ("crucible.effects", "crucible.effects_ops"), (
        Pending("SympleX's purity checker", "other-seeds.md §2.8"),)),
    Chapter(16, "Reflection", ("crucible.reflect", "crucible.reflect_ops")),
    Chapter(17, "Determinism", ("crucible.philox", "crucible.philox_ops")),
    Chapter(18, "Persistence", (
        "crucible.cdag", "crucible.cdag_ops", "crucible.crtrace", "crucible.crtrace_ops",
        "crucible.cipher", "crucible.cipher_ops", "crucible.transaction",
        "crucible.region_cache")),
    Chapter(19, "Distribution", (
        "ringkernel.hlc", "ringkernel.hlc_ops", "ringkernel.hlc_concurrency",
        "ringkernel.tla.hlc", "ringkernel.tla.k2k_delivery", "ringkernel.tla.migration",
        "ringkernel.tla.multi_gpu_k2k", "ringkernel.tla.tenant_isolation",
        "ringkernel.tla.actor_lifecycle", "ringkernel.k2k_broker",
        "ringkernel.k2k_ops", "ringkernel.checkpoint", "ringkernel.checkpoint_delta",
        "ringkernel.checkpoint_ops")),
    Chapter(20, "Proofs", ("core.machine",), about=(
        "proofs.obligation", "proofs.evidence", "proofs.model", "proofs.runner", "proofs.cache",
        "proofs.mutation", "proofs.patch")),
)
