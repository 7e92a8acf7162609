"""The optimisation passes, each selectable by name, and the -O0..-O3 pipelines of the seed."""

from __future__ import annotations

from collections.abc import Callable

from ..mir.ir import Function
from ..mir.verify import verify
from . import cse, dce, licm, mem2reg, sccp, simplify_cfg, strength, unroll

PASSES: dict[str, Callable[[Function], bool]] = {
    "unroll": unroll.run,
    "mem2reg": mem2reg.run,
    "simplify-cfg": simplify_cfg.run,
    "sccp": sccp.run,
    "dce": dce.run,
    "local-cse": cse.run_local,
    "cse": cse.run,
    "licm": licm.run,
    "strength": strength.run,
}

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
        "cse",
        "dce",
        "simplify-cfg",
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
        "sccp",
        "cse",
        "dce",
        "simplify-cfg",
    ],
}


def pipeline(opt: int) -> list[str]:
    return PIPELINES[max(0, min(3, opt))]


def run_passes(
    fn: Function,
    names: list[str],
    after: Callable[[str, Function], None] | None = None,
    max_registers: int | None = None,
) -> None:
    for name in names:
        if name == "unroll":
            unroll.run(fn, max_registers)
        else:
            PASSES[name](fn)
        verify(fn, name)
        if after is not None:
            after(name, fn)
