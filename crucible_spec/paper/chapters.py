"""The chapter plan of the yellowpaper (design §8), in five parts: Part I Crucible, its
chapters numbered as Crucible's own documents number them, then PyC, SympleX, RingKernel and
vyre, each with its own chapters. A chapter names the spec modules whose docstrings and
functions make its text (in this order), and what is not yet specified."""

from __future__ import annotations

from dataclasses import dataclass

from .systems import SYSTEMS, System, system_of


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
    system: str = "crucible"
    note: str = ""
    """What the chapter says when the seed has no code for it."""

    @property
    def slug(self) -> str:
        words = "".join(c if c.isalnum() else "-" for c in self.title.lower())
        return f"{self.number:02d}-" + "-".join(w for w in words.split("-") if w)

    @property
    def filename(self) -> str:
        """The chapter's page, under its part's folder."""
        return f"{self.system}/{self.slug}.md"

    @property
    def label(self) -> str:
        return f"{self.number}. {self.title}"


def _part(system: str, *chapters: Chapter) -> tuple[Chapter, ...]:
    return tuple(Chapter(c.number, c.title, c.modules, c.pending, c.about, system, c.note)
                 for c in chapters)


CRUCIBLE = _part("crucible",
    Chapter(1, "Notation and bits", (
        "bits", "layout", "layout_ops", "schema", "wire_columns", "shapes", "json_schema",
        "steps", "errors", "registry", "errata", "strategies", "lazy_z3")),
    Chapter(2, "Types", ("types",)),
    Chapter(3, "Arena", ("arena",)),
    Chapter(4, "SPSC ring and MetaLog", ("trace_ring", "meta_log", "ring_protocol", "spsc_ops")),
    Chapter(5, "TensorMeta and slots", ("tensor_meta", "tensor_slot")),
    Chapter(6, "Trace graph", (
        "trace_entry", "trace_graph", "background_thread", "build_trace", "trace_build_ops",
        "pipeline", "pipeline_ops", "vis")),
    Chapter(7, "Iteration detection", ("iteration_detector",)),
    Chapter(8, "Hashing", ("hashing", "schema_table", "vessel")),
    Chapter(9, "Merkle DAG", ("merkle_dag", "content_hash", "dag", "dag_ops", "kernel_cache")),
    Chapter(10, "Memory plan", ("memory_plan", "plan_validity")),
    Chapter(11, "Compiled replay", (
        "pool_allocator", "replay_region", "replay_engine", "crucible_context", "vigil",
        "replay_machines", "replay_context_ops", "vigil_ops", "replay_ops")),
    Chapter(12, "Kernels", (
        "ckernel", "ckernel_table", "ckernel_ops", "f32_tensor", "libm", "cpu_kernels",
        "kernel_ops", "kernel_ew_ops", "cpu_kernels_linear", "kernel_linear_ops",
        "cpu_kernels_norm", "kernel_norm_ops", "mt19937", "rng_ops", "seed_compute")),
    Chapter(13, "Cost model", ("cost_model", "cost_ops")),
    Chapter(14, "Graph IR and symbolic algebra", (
        "expr", "expr_arith", "expr_pool", "expr_canon", "expr_divide", "expr_logic", "expr_ops",
        "expr_errata", "expr_semantics", "expr_rules", "expr_rule_table", "swiss_table",
        "swiss_ops", "symbol_table", "symbol_ops", "graph", "graph_ir", "graph_cse", "graph_lower",
        "graph_ir_ops")),
    Chapter(15, "Effects", ("effects", "effects_ops")),
    Chapter(16, "Reflection", ("reflect", "reflect_ops")),
    Chapter(17, "Determinism", ("philox", "philox_ops")),
    Chapter(18, "Persistence", (
        "cdag", "cdag_ops", "crtrace", "crtrace_ops", "cipher", "cipher_ops", "transaction",
        "region_cache")),
    Chapter(19, "Distribution", note=(
        "Crucible's C++ at the seed commit has no code for distribution: no clock, message "
        "protocol or checkpoint of several processes exists in it to specify. The distributed "
        "protocols this spec states are RingKernel's, in [Part IV](../ringkernel/index.md).")),
    Chapter(20, "Proofs", ("machine",), about=(
        "proofs.obligation", "proofs.evidence", "proofs.model", "proofs.runner", "proofs.cache",
        "proofs.mutation", "proofs.patch")),
)

PYC = _part("pyc",
    Chapter(1, "Values on the wire", ("pyc_wire",)),
    Chapter(2, "IR and its meaning", ("pyc_ir", "pyc_interp")),
    Chapter(3, "Pass pipeline", ("pyc_passes", "pyc_pass_ops")),
    Chapter(4, "Memory planner", ("pyc_alloc",)),
    Chapter(5, "Kernel registry and autotune", (
        "pyc_kernels", "pyc_kernel_ops", "pyc_autotune", "pyc_autotune_ops"), (
        Pending("PyC's kernel scores as a cost model", "other-seeds.md §1.5"),)),
    Chapter(6, "Fingerprint and compile cache", ("pyc_fingerprint", "pyc_cache",
                                                 "pyc_compile_cache")),
    Chapter(7, "Guards and rails", ("pyc_guard", "pyc_rails")),
    Chapter(8, "Dispatch and decision log", ("pyc_dispatch", "pyc_decision_log")),
)

SYMPLEX = _part("symplex",
    Chapter(1, "Tensor expressions", ("tensor_expr",)),
    Chapter(2, "E-graph rewriting", ("egraph_patterns", "egraph_rules", "egraph_saturate",
                                     "egraph_ops")),
    Chapter(3, "Extraction cost", ("egraph_cost",)),
    Chapter(4, "Polyhedral guardrails", ("dependence", "dependence_ops", "symplex_banerjee")),
    Chapter(5, "Hardware targets and tile search", ("hardware_target", "tile_search",
                                                     "tile_ops")),
    Chapter(6, "Purity", pending=(Pending("SympleX's purity checker", "other-seeds.md §2.8"),)),
)

RINGKERNEL = _part("ringkernel",
    Chapter(1, "Hybrid logical clock", ("hlc", "hlc_ops", "hlc_concurrency")),
    Chapter(2, "SPSC queue and GPU layouts", ("rk_queue", "rk_message")),
    Chapter(3, "Kernel-to-kernel messaging", ("rk_k2k_inbox", "k2k_broker", "k2k_ops")),
    Chapter(4, "Checkpoints", ("checkpoint", "checkpoint_delta", "checkpoint_ops")),
    Chapter(5, "TLA+ specifications", (
        "tla_hlc", "tla_k2k_delivery", "tla_migration", "tla_multi_gpu_k2k",
        "tla_tenant_isolation", "tla_actor_lifecycle")),
)

VYRE = _part("vyre",
    Chapter(1, "Fixed-point lanes", ("vyre_fixed",)),
    Chapter(2, "Tensor-train contraction", ("vyre_tt",)),
    Chapter(3, "Fusion pressure", ("vyre_fusion",)),
)

PARTS: dict[str, tuple[Chapter, ...]] = {
    "crucible": CRUCIBLE, "pyc": PYC, "symplex": SYMPLEX, "ringkernel": RINGKERNEL,
    "vyre": VYRE}
CHAPTERS: tuple[Chapter, ...] = tuple(c for s in SYSTEMS for c in PARTS[s.key])


def part_index(system: System) -> str:
    """The part's index page."""
    return f"{system.key}/index.md"


def misplaced_modules() -> list[tuple[str, str]]:
    """(module, part) for every module planned in a part other than its system's."""
    return [(m, c.system) for c in CHAPTERS for m in c.modules if system_of(m) != c.system]
