"""The optimisation passes as named objects with typed options, and the -O0..-O3 pipelines.

Each pass is a `Pass`: its name (what `--passes`, `--dump-after` and the pipelines say), a
one-line description, its options (`Option`: name, type, default) and its run function,
called `run(fn, **options) -> changed`. A pipeline is a list of pass names; a pass is written
`name` or `name:option=value:option=value` (`unroll:max_trip=8`). Options that the compiler
knows for the whole kernel (`max_registers`) reach every pass declaring an option of that name,
unless the pass's spelling sets it. MIR is verified after every pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ...errors import CompileError, Diagnostic
from ..mir.ir import Function
from ..mir.verify import verify
from . import cse, dce, licm, mem2reg, reassociate, sccp, simplify_cfg, strength, unroll, vectorize


@dataclass(frozen=True)
class Option:
    """One typed option of a pass: `type` is int, bool or str; `default` may be None for an
    option the compiler fills from the kernel's settings (an absent setting stays None)."""

    name: str
    type: type
    default: object
    doc: str

    def parse(self, text: str, pass_name: str) -> object:
        """The option's value from its spelling in a pass list."""
        try:
            if self.type is bool:
                if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(text)
                return text.lower() in ("true", "1", "yes")
            return self.type(text)
        except ValueError:
            raise CompileError(
                [Diagnostic(f"pass {pass_name!r}: option {self.name} wants {self.type.__name__}, not {text!r}")]
            ) from None


@dataclass(frozen=True)
class Pass:
    """A MIR pass: `run(fn, **options)` rewrites fn in place and says whether it changed."""

    name: str
    doc: str
    run: Callable[..., bool]
    options: tuple[Option, ...] = ()
    # run only when asked for by name (no -O pipeline includes it), with the reason
    opt_in: str | None = None

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)


@dataclass(frozen=True)
class PassCall:
    """A pass with the options its spelling set (`unroll:max_trip=8`)."""

    pass_: Pass
    options: Mapping[str, object] = field(default_factory=dict)

    def run(self, fn: Function, settings: Mapping[str, object] | None = None) -> bool:
        values = {o.name: o.default for o in self.pass_.options}
        for k, v in (settings or {}).items():
            if k in values and v is not None:
                values[k] = v
        values.update(self.options)
        return self.pass_.run(fn, **values)


REGISTRY: tuple[Pass, ...] = (
    Pass(
        "unroll",
        "fully unroll counted loops with a small trip count (before mem2reg)",
        unroll.run,
        (
            Option("max_registers", int, None, "the kernel's register limit: unroll less under a tight one"),
            Option("max_trip", int, unroll.MAX_TRIP, "unroll loops of at most this many iterations"),
            Option("max_insts", int, unroll.MAX_INSTS, "and at most this many instructions once unrolled"),
            Option(
                "max_pressure",
                int,
                None,
                "and at most this many variables used in the loop (default: half of max_registers)",
            ),
        ),
    ),
    Pass("mem2reg", "promote variable slots to SSA values (phis at dominance frontiers)", mem2reg.run),
    Pass("simplify-cfg", "drop unreachable blocks, merge straight-line blocks, skip empty jumps", simplify_cfg.run),
    Pass("sccp", "sparse conditional constant propagation through the shared semantics", sccp.run),
    Pass("dce", "delete instructions whose results are unused and that have no effects", dce.run),
    Pass(
        "local-cse",
        "common subexpression elimination inside each block",
        cse.run_local,
        opt_in="the global cse subsumes it; kept for debugging a pipeline",
    ),
    Pass("cse", "common subexpression elimination over the dominator tree", cse.run),
    Pass("licm", "hoist loop-invariant pure instructions into a preheader", licm.run),
    Pass("strength", "strength reduction: multiplications and divisions by constants", strength.run),
    Pass(
        "reassociate",
        "move integer constants out of shifts and products ((x + c) << s to (x << s) + (c << s))",
        reassociate.run,
    ),
    Pass(
        "vectorize",
        "merge 2 or 4 aligned accesses of consecutive 32-bit elements into one .v2/.v4 access",
        vectorize.run,
    ),
)

PASSES: dict[str, Pass] = {p.name: p for p in REGISTRY}

PIPELINES: dict[int, list[str]] = {
    0: [],
    1: ["dce", "cse", "simplify-cfg"],
    2: [
        "mem2reg",
        "simplify-cfg",
        "sccp",
        "dce",
        "cse",
        "licm",
        "strength",
        "reassociate",
        "cse",
        "dce",
        "simplify-cfg",
        "vectorize",
    ],
    3: [
        "unroll",
        "mem2reg",
        "simplify-cfg",
        "sccp",
        "dce",
        "cse",
        "licm",
        "strength",
        "reassociate",
        "sccp",
        "cse",
        "dce",
        "simplify-cfg",
        "vectorize",
    ],
}

# After legalisation expanded divisions by constants (-O2 and up): clean up what it produced.
AFTER_LEGALIZE: list[str] = ["strength", "cse", "dce"]


def pipeline(opt: int) -> list[str]:
    """The pass names of -O`opt` (clamped to 0..3)."""
    return PIPELINES[max(0, min(3, opt))]


def resolve(specs: Sequence[str]) -> list[PassCall]:
    """Pass spellings (`name` or `name:opt=value:...`) to calls; unknown passes or options and
    ill-typed values are a CompileError naming them and what exists."""
    unknown = [s.split(":", 1)[0] for s in specs if s.split(":", 1)[0] not in PASSES]
    if unknown:
        raise CompileError([Diagnostic(f"unknown pass(es): {', '.join(unknown)}; passes: {', '.join(PASSES)}")])
    calls = []
    for spec in specs:
        name, *settings = spec.split(":")
        p = PASSES[name]
        values: dict[str, object] = {}
        for s in settings:
            key, eq, text = s.partition("=")
            opt = p.option(key.strip())
            have = ", ".join(o.name for o in p.options) or "none"
            if opt is None:
                raise CompileError([Diagnostic(f"pass {name!r} has no option {key.strip()!r} (its options: {have})")])
            if not eq:
                raise CompileError([Diagnostic(f"pass {name!r}: cannot read option {s!r} (write {key}=value)")])
            values[opt.name] = opt.parse(text.strip(), name)
        calls.append(PassCall(p, values))
    return calls


def run_passes(
    fn: Function,
    specs: Sequence[str],
    after: Callable[[str, Function], None] | None = None,
    settings: Mapping[str, object] | None = None,
) -> None:
    """Run passes in order, verifying MIR after each; `after(name, fn)` sees each result (the
    compiler's --dump-after); `settings` are the kernel's values for options of that name."""
    for call in resolve(specs):
        call.run(fn, settings)
        verify(fn, call.pass_.name)
        if after is not None:
            after(call.pass_.name, fn)


__all__ = ["AFTER_LEGALIZE", "PASSES", "PIPELINES", "Option", "Pass", "PassCall", "pipeline", "resolve", "run_passes"]
