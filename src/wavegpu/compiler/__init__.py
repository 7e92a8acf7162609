"""The compiler: kernels in Python, Rust, C++ or TypeScript (frontends/, one per language in FRONTENDS) -> HIR
-> SSA MIR -> passes -> structured LIR -> Chaitin-Briggs allocation -> .wbin. Everything below HIR is
language-free; `compile_source` is the entry (source, options, file name, language)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..errors import CompileError, Diagnostic
from ..wbin.program import Kernel, Param, Program
from . import hir
from .builtins import I32_ID_LIMIT, WIDE_IDS
from .inline import call_notes, expand
from .lir import ir as lir_ir
from .lir.lower import lower as lower_lir
from .mir import dump as dump_mir
from .mir.legalize import legalize
from .mir.lower import lower as lower_mir
from .mir.verify import verify
from .passes import AFTER_LEGALIZE, PASSES, pipeline, resolve, run_passes
from .passes.vectorize import dissolve as dissolve_vectors
from .regalloc import allocate
from .types import ArrayType

STAGES = ("hir", "mir", *PASSES, "lir", "regalloc")


@dataclass
class Options:
    opt: int = 2
    max_registers: int | None = None
    workgroup: tuple[int, int, int] | None = None
    passes: list[str] | None = None  # an explicit pass list instead of the -O pipeline
    dump_after: set[str] = field(default_factory=set)
    dumps: list[tuple[str, str]] = field(default_factory=list)  # (stage, text) collected for dump_after


def compile_hir(fn: hir.Function, options: Options) -> Kernel:
    try:
        return _compile_hir(fn, options)
    except CompileError as e:  # a place inside an inlined helper: notes at the calls (inline.py)
        if any(d.span is not None and d.span.calls and not d.notes for d in e.diagnostics):
            e.diagnostics = [call_notes(d) for d in e.diagnostics]
            e.args = ("\n".join(d.render() for d in e.diagnostics),)
        raise


def _compile_hir(fn: hir.Function, options: Options) -> Kernel:
    def dump(stage: str, text: Callable[[], str]) -> None:
        if stage in options.dump_after or "all" in options.dump_after:
            options.dumps.append((stage, text()))

    fn = expand(fn)  # helper calls inlined (compiler/inline.py)
    deep = hir.too_deep(fn)
    if deep is not None:  # before any stage that recurses over it (the printer included)
        raise CompileError([Diagnostic(f"kernel {fn.name!r}: {hir.too_deep_message()}", deep)])
    dump("hir", lambda: hir.dump(fn))
    wide = [p for p in fn.params if not isinstance(p.type, ArrayType) and p.type.size > 4]
    if wide:
        raise CompileError(
            [
                Diagnostic(
                    f"kernel {fn.name!r}: scalar parameter {p.name!r} is {p.type}, which does not fit the 32-bit "
                    f"parameter register (DESIGN section 4: parameter i arrives in r(i)); pass it in a "
                    f"one-element {p.type} array",
                    p.span,
                )
                for p in wide
            ]
        )
    mir = lower_mir(fn)
    verify(mir, "lowering")
    dump("mir", lambda: dump_mir(mir))
    names = options.passes if options.passes is not None else pipeline(options.opt)
    resolve(names)  # unknown passes and options are refused before any runs
    settings = {"max_registers": options.max_registers}
    run_passes(mir, names, lambda name, f: dump(name, lambda: dump_mir(f)), settings)
    if legalize(mir) and options.passes is None and options.opt >= 2:
        run_passes(mir, AFTER_LEGALIZE)  # the expanded divisions by constants
    verify(mir, "legalisation")
    # local accesses read [x+c] where reassociation put the constants outside (not at -O0)
    offsets = any(n.split(":", 1)[0] == "reassociate" for n in names)
    lf = lower_lir(mir, offsets)
    try:
        alloc = allocate(lf, options.max_registers or 256)
    except CompileError:
        # a merged access keeps its registers together and unspilled: under a register limit too
        # tight for that, the accesses are selected one by one instead
        if not dissolve_vectors(mir):
            raise
        lf = lower_lir(mir, offsets)
        alloc = allocate(lf, options.max_registers or 256)
    dump("lir", lambda: lir_ir.dump(lower_lir(mir, offsets)))
    dump("regalloc", lambda: lir_ir.dump(lf))
    params = [
        Param(
            p.name,
            "buffer" if isinstance(p.type, ArrayType) else "scalar",
            (p.type.elem if isinstance(p.type, ArrayType) else p.type).data_type,
        )
        for p in fn.params
    ]
    from .emit import emit

    kernel = emit(lf, alloc, params)
    limit = id_limit(fn)
    return kernel if limit is None else replace(kernel, max_global_size=limit)


def id_limit(fn: hir.Function) -> int | None:
    """The most threads along one axis the kernel's ids are correct for (Kernel.max_global_size):
    builtins.I32_ID_LIMIT where it reads a growing id or size as i32, or where its frontend says
    so (fn.options["max_global_size"]: TypeScript's ids carry the range 0..2**31-1); None else."""
    own = fn.options.get("max_global_size")
    limits = [own] if isinstance(own, int) else []
    if hir.i32_id(fn, WIDE_IDS) is not None:
        limits.append(I32_ID_LIMIT)
    return min(limits) if limits else None


def compile_functions(fns: list[hir.Function], options: Options) -> Program:
    """A program of HIR kernels; a kernel's own options (`fn.options`: max_registers, workgroup,
    from its source's decorator or attribute) apply where `options` leaves them open."""
    kernels = []
    for fn in fns:
        opts = fn.options
        o = Options(
            opt=options.opt,
            max_registers=options.max_registers,
            workgroup=options.workgroup,
            passes=options.passes,
            dump_after=options.dump_after,
            dumps=options.dumps,
        )
        own_max = opts.get("max_registers")
        if o.max_registers is None and isinstance(own_max, int):
            o.max_registers = own_max
        wg = o.workgroup or opts.get("workgroup")
        if wg is not None:
            if not isinstance(wg, (int, tuple, list)):
                raise CompileError([Diagnostic(f"kernel {fn.name!r}: workgroup {wg!r} is neither a size nor a tuple")])
            t = (wg,) if isinstance(wg, int) else tuple(wg)
            t = tuple(int(x) for x in t) + (1,) * (3 - len(t))
            fn = replace(fn, workgroup_size=(t[0], t[1], t[2]))
        kernels.append(compile_hir(fn, o))
    return Program(tuple(kernels))


def compile_source(source: object, options: Options, filename: str | None = None, lang: str = "python") -> Program:
    """Source in a language of the FRONTENDS registry (Python also takes a path or a function)."""
    from .frontends import frontend

    fe = frontend(lang)
    load = getattr(fe, "load", None)  # a frontend that takes more than text (Python: paths, functions)
    fns = load(source, filename) if load is not None else fe.parse(str(source), filename or "<string>")
    return compile_functions(fns, options)


def compile_python(source: object, options: Options, filename: str | None = None) -> Program:
    """Python source text, a path to a .py file, or a function (frontends/python.py)."""
    return compile_source(source, options, filename, "python")


__all__ = ["STAGES", "Options", "compile_functions", "compile_hir", "compile_python", "compile_source"]
