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
        "core.bits", "core.layout", "core.layout_ops", "core.schema", "core.wire_columns",
        "core.shapes", "core.json_schema",
        "core.steps", "core.errors", "core.optional", "core.registry", "core.errata",
        "core.strategies",
        "core.lazy_z3")),
    Chapter(2, "Types", ("crucible.types",)),
    Chapter(3, "Arena", ("crucible.arena",)),
    Chapter(4, "SPSC ring and MetaLog", ("crucible.trace_ring", "crucible.meta_log",
    "crucible.ring_protocol", "crucible.spsc_ops")),
    Chapter(5, "TensorMeta and slots", ("crucible.tensor_meta", "crucible.tensor_slot")),
    Chapter(6, "Trace graph", (
        "crucible.trace_entry", "crucible.trace_graph", "crucible.background_thread",
        "crucible.build_trace", "crucible.trace_build_ops",
        "crucible.pipeline", "crucible.pipeline_ops", "crucible.vis")),
    Chapter(7, "Iteration detection", ("crucible.iteration_detector",)),
    Chapter(8, "Hashing", ("crucible.hashing", "crucible.schema_table", "crucible.vessel")),
    Chapter(9, "Merkle DAG", ("crucible.merkle_dag", "crucible.content_hash", "crucible.dag",
    "crucible.dag_ops", "crucible.kernel_cache")),
    Chapter(10, "Memory plan", ("crucible.memory_plan", "crucible.plan_ops",
    "crucible.plan_validity")),
    Chapter(11, "Compiled replay", (
        "crucible.pool_allocator", "crucible.replay_region", "crucible.replay_engine",
        "crucible.context", "crucible.detsafe", "crucible.vigil",
        "crucible.replay_machines", "crucible.replay_context_ops", "crucible.vigil_ops",
        "crucible.replay_ops")),
    Chapter(12, "Kernels", (
        "crucible.ckernel", "crucible.ckernel_table", "crucible.ckernel_ops", "core.f32_tensor",
        "crucible.libm", "crucible.cpu_kernels",
        "crucible.kernel_ops", "crucible.kernel_ew_ops", "crucible.cpu_kernels_linear",
        "crucible.kernel_linear_ops",
        "crucible.cpu_kernels_norm", "crucible.kernel_norm_ops", "crucible.mt19937",
        "crucible.rng_ops", "crucible.seed_compute")),
    Chapter(13, "Cost model", ("crucible.cost_model", "crucible.cost_ops")),
    Chapter(14, "Graph IR and symbolic algebra", (
        "crucible.expr.node", "crucible.expr.arith", "crucible.expr.pool", "crucible.expr.canon",
        "crucible.expr.divide", "crucible.expr.logic", "crucible.expr.ops",
        "crucible.expr.errata", "crucible.expr.semantics", "crucible.expr.rules",
        "crucible.expr.rule_table", "crucible.swiss_table",
        "crucible.swiss_ops", "crucible.symbol_table", "crucible.symbol_ops", "crucible.graph",
        "crucible.graph_ir", "crucible.graph_cse", "crucible.graph_lower",
        "crucible.graph_ir_ops")),
    Chapter(15, "Effects", ("crucible.effects", "crucible.effects_ops")),
    Chapter(16, "Reflection", ("crucible.reflect", "crucible.reflect_ops")),
    Chapter(17, "Determinism", ("crucible.philox", "crucible.philox_ops")),
    Chapter(18, "Persistence", (
        "crucible.cdag", "crucible.cdag_ops", "crucible.crtrace", "crucible.crtrace_ops",
        "crucible.cipher", "crucible.cipher_ops", "crucible.transaction",
        "crucible.region_cache")),
    Chapter(19, "Distribution", note=(
        "Crucible's C++ at the seed commit has no code for distribution: no clock, message "
        "protocol or checkpoint of several processes exists in it to specify. The distributed "
        "protocols this spec states are RingKernel's, in [Part IV](../ringkernel/index.md).")),
    Chapter(20, "Proofs", ("core.machine",), about=(
        "proofs.core.obligation", "proofs.core.evidence", "proofs.core.model",
        "proofs.core.runner", "proofs.core.cache",
        "proofs.core.mutation", "proofs.core.patch")),
)

PYC = _part("pyc",
    Chapter(1, "Values on the wire", ("pyc.wire",)),
    Chapter(2, "IR and its meaning", ("pyc.ir", "pyc.interp")),
    Chapter(3, "Pass pipeline", ("pyc.passes", "pyc.pass_ops")),
    Chapter(4, "Memory planner", ("pyc.alloc",)),
    Chapter(5, "Kernel registry and autotune", (
        "pyc.kernels", "pyc.kernel_ops", "pyc.autotune", "pyc.autotune_ops"), (
        Pending("PyC's kernel scores as a cost model", "other-seeds.md §1.5"),)),
    Chapter(6, "Fingerprint and compile cache", ("pyc.fingerprint", "pyc.cache",
                                                 "pyc.compile_cache")),
    Chapter(7, "Guards, the stable-repeat fast path and rails", ("pyc.guard", "pyc.repeat",
                                                                  "pyc.rails")),
    Chapter(8, "Dispatch, decision log and run stats", ("pyc.dispatch", "pyc.decision_log",
                                                         "pyc.run_stats")),
    Chapter(9, "Speculative plans and the phantom graph", ("pyc.speculative", "pyc.phantom")),
)

SYMPLEX = _part("symplex",
    Chapter(1, "Tensor expressions", ("symplex.tensor_expr",)),
    Chapter(2, "E-graph rewriting", ("symplex.egraph.patterns", "symplex.egraph.rules",
    "symplex.egraph.saturate",
                                     "symplex.egraph.ops")),
    Chapter(3, "Extraction cost", ("symplex.egraph.cost", "symplex.fusion_select")),
    Chapter(4, "Polyhedral guardrails", ("symplex.dependence", "symplex.dependence_ops",
    "symplex.banerjee", "symplex.schedule", "symplex.schedule_ops")),
    Chapter(5, "Hardware targets and tile search", ("symplex.hardware_target",
    "symplex.tile_search",
                                                     "symplex.tile_ops")),
    Chapter(6, "Purity", ("symplex.purity",)),
)

RINGKERNEL = _part("ringkernel",
    Chapter(1, "Hybrid logical clock", ("ringkernel.hlc.clock", "ringkernel.hlc.ops",
    "ringkernel.hlc.concurrency")),
    Chapter(2, "Queues, control block and GPU layouts", (
        "ringkernel.queue", "ringkernel.mpsc", "ringkernel.partitioned", "ringkernel.queue_tier",
        "ringkernel.message", "ringkernel.control_block")),
    Chapter(3, "Kernel-to-kernel messaging", ("ringkernel.k2k.inbox", "ringkernel.k2k.broker",
    "ringkernel.k2k.ops")),
    Chapter(4, "Checkpoints", ("ringkernel.checkpoint", "ringkernel.checkpoint_delta",
    "ringkernel.checkpoint_ops", "ringkernel.checkpoint_manager")),
    Chapter(5, "TLA+ specifications", (
        "ringkernel.tla.hlc", "ringkernel.tla.delivery", "ringkernel.tla.migration",
        "ringkernel.tla.multi_gpu_k2k",
        "ringkernel.tla.tenant_isolation", "ringkernel.tla.actor_lifecycle")),
)

VYRE = _part("vyre",
    Chapter(1, "Fixed-point lanes", ("vyre.fixed",)),
    Chapter(2, "Tensor-train contraction", ("vyre.tt", "vyre.program")),
    Chapter(3, "Fusion pressure", ("vyre.fusion",)),
    Chapter(4, "Dispatch contract", ("vyre.dispatch",)),
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
