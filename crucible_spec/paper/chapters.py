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
        "bits", "layout", "layout_ops", "schema", "wire_columns", "shapes", "json_schema",
        "steps", "errors", "registry", "errata", "strategies", "lazy_z3")),
    Chapter(2, "Types", ("types",)),
    Chapter(3, "Arena", ("arena",)),
    Chapter(4, "SPSC ring and MetaLog", (
        "trace_ring", "meta_log", "ring_protocol", "spsc_ops", "rk_queue", "rk_message",
        "rk_k2k_inbox")),
    Chapter(5, "TensorMeta and slots", ("tensor_meta", "tensor_slot")),
    Chapter(6, "Trace graph", (
        "trace_entry", "trace_graph", "background_thread", "build_trace", "trace_build_ops",
        "pipeline", "pipeline_ops", "vis")),
    Chapter(7, "Iteration detection", ("iteration_detector",)),
    Chapter(8, "Hashing", ("hashing", "schema_table", "vessel")),
    Chapter(9, "Merkle DAG", ("merkle_dag", "content_hash", "dag", "dag_ops", "kernel_cache")),
    Chapter(10, "Memory plan", ("memory_plan", "plan_validity", "pyc_alloc")),
    Chapter(11, "Compiled replay", (
        "pool_allocator", "replay_region", "replay_engine", "crucible_context", "vigil",
        "replay_machines", "replay_context_ops", "vigil_ops", "replay_ops")),
    Chapter(12, "Kernels", (
        "ckernel", "ckernel_table", "ckernel_ops", "f32_tensor", "libm", "cpu_kernels",
        "kernel_ops", "kernel_ew_ops", "cpu_kernels_linear", "kernel_linear_ops",
        "cpu_kernels_norm", "kernel_norm_ops", "mt19937", "rng_ops", "seed_compute", "pyc_wire",
        "pyc_kernels", "pyc_kernel_ops", "pyc_autotune", "pyc_autotune_ops", "pyc_rails",
        "pyc_dispatch", "pyc_decision_log", "vyre_fixed", "vyre_tt")),
    Chapter(13, "Cost model", (
        "cost_model", "cost_ops", "hardware_target", "tile_search", "tile_ops", "egraph_cost"), (
        Pending("PyC's kernel scores as a cost model", "other-seeds.md §1.5"),)),
    Chapter(14, "Graph IR and symbolic algebra", (
        "expr", "expr_arith", "expr_pool", "expr_canon", "expr_divide", "expr_logic", "expr_ops",
        "expr_errata", "expr_semantics", "expr_rules", "expr_rule_table", "swiss_table",
        "swiss_ops", "symbol_table", "symbol_ops", "graph", "graph_ir", "graph_cse", "graph_lower",
        "graph_ir_ops", "pyc_ir", "pyc_fingerprint", "pyc_cache", "pyc_compile_cache",
        "pyc_passes", "pyc_interp", "pyc_pass_ops", "pyc_guard", "dependence", "dependence_ops",
        "symplex_banerjee", "tensor_expr", "egraph_patterns", "egraph_rules", "egraph_saturate",
        "egraph_ops", "vyre_fusion")),
    Chapter(15, "Effects", ("effects", "effects_ops"), (
        Pending("SympleX's purity checker", "other-seeds.md §2.8"),)),
    Chapter(16, "Reflection", ("reflect", "reflect_ops")),
    Chapter(17, "Determinism", ("philox", "philox_ops")),
    Chapter(18, "Persistence", (
        "cdag", "cdag_ops", "crtrace", "crtrace_ops", "cipher", "cipher_ops", "transaction",
        "region_cache")),
    Chapter(19, "Distribution", (
        "hlc", "hlc_ops", "hlc_concurrency", "tla_hlc", "tla_k2k_delivery", "tla_migration",
        "tla_multi_gpu_k2k", "tla_tenant_isolation", "tla_actor_lifecycle", "k2k_broker",
        "k2k_ops", "checkpoint", "checkpoint_delta", "checkpoint_ops")),
    Chapter(20, "Proofs", ("machine",), about=(
        "proofs.obligation", "proofs.evidence", "proofs.model", "proofs.runner", "proofs.cache",
        "proofs.mutation", "proofs.patch")),
)
