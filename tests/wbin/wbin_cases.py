"""Programs for the container tests: compiled and assembled corpus files, format-1.0 files, and
random programs with read-only buffers and access tables."""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

from hypothesis import strategies as st

import wavegpu as wg
from corpus import EXAMPLES
from strategies import programs

DATA = Path(__file__).resolve().parent.parent / "data" / "wbin"
OLD_FILES = sorted(DATA.glob("*-1.0.wbin"))  # written by the format-1.0 writer, kept as they were


def annotate(prog: wg.Program) -> wg.Program:
    """A deterministic access table and read-only marks, as a compiler would give them: every
    buffer but the last is read-only; loads name the buffers in turn, stores and atomics the last."""
    kernels = []
    for k in prog.kernels:
        buffers = [i for i, p in enumerate(k.params) if p.kind == "buffer"]
        if not buffers:
            kernels.append(k)
            continue
        params = tuple(
            dataclasses.replace(p, writable=i == buffers[-1]) if p.kind == "buffer" else p
            for i, p in enumerate(k.params)
        )
        accesses: list[int | None] = []
        loads = 0
        for inst in k.instructions:
            if not inst.spec.is_global_access:
                accesses.append(None)
            elif inst.spec.side_effects:
                accesses.append(buffers[-1])
            else:
                accesses.append(buffers[loads % len(buffers)])
                loads += 1
        table = tuple(accesses) if any(a is not None for a in accesses) else None
        kernels.append(dataclasses.replace(k, params=params, accesses=table))
    return wg.Program(tuple(kernels))


@cache
def compiled(kernel: str) -> wg.Program:
    """A kernel of examples/kernels/ as the compiler built it (kept as a format-1.0 file, so
    these tests do not depend on the compiler of the day)."""
    return wg.Program.from_bytes((DATA / f"{kernel}-1.0.wbin").read_bytes())


@cache
def corpus_images() -> dict[str, bytes]:
    """Format-1.1 images: compiled kernels (SGEMM, reduction, SAXPY), the same with an access
    table and read-only marks, and the assembled examples with a line table."""
    out = {}
    for name in ("sgemm_tiled", "reduce_sum", "saxpy"):
        prog = compiled(name)
        out[name] = prog.to_bytes()
        out[f"{name}+accesses"] = annotate(prog).to_bytes()
    limited = wg.Program(tuple(dataclasses.replace(k, max_global_size=2**31 - 1) for k in compiled("saxpy").kernels))
    out["saxpy+max_global_size"] = limited.to_bytes()
    for path in EXAMPLES:
        if path.name in ("sgemm_tiled.wave", "vector_add.wave", "reduce.wave"):
            out[path.name] = annotate(wg.assemble(path.read_text(), path.name, debug_lines=True)).to_bytes()
    return out


@st.composite
def annotated_programs(draw: st.DrawFn) -> wg.Program:
    """Random programs whose buffers may be read-only, whose global accesses may name them, and
    whose kernels may record a largest global size."""
    prog = draw(programs())
    kernels = []
    for k in prog.kernels:
        params = tuple(
            dataclasses.replace(p, writable=draw(st.booleans())) if p.kind == "buffer" else p for p in k.params
        )
        readable = [i for i, p in enumerate(params) if p.kind == "buffer"]
        writable = [i for i in readable if params[i].writable]
        accesses: list[int | None] = []
        for inst in k.instructions:
            options = (writable if inst.spec.side_effects else readable) if inst.spec.is_global_access else []
            accesses.append(draw(st.one_of(st.none(), st.sampled_from(options))) if options else None)
        table = tuple(accesses) if any(a is not None for a in accesses) else None
        limit = draw(st.one_of(st.none(), st.sampled_from([1, 2**31 - 1, 2**32 - 1]), st.integers(1, 2**32 - 1)))
        kernels.append(dataclasses.replace(k, params=params, accesses=table, max_global_size=limit))
    return wg.Program(tuple(kernels))
