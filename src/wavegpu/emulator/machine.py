"""The run loop: one batch of workgroups compiled into closures and executed in lockstep.

Every lane of the batch runs the same instruction stream under lane masks (emulator.state);
each instruction is compiled once into a closure by its operation's handler (emulator.ops) and
the loop calls them in order, following the next pc a control row returns. When no lane is left
active, execution skips to the closer of the innermost construct. Since all lanes of a workgroup
execute each instruction together, barriers order memory trivially, wave operations view the
lanes as [waves, W], and atomics apply in ascending lane order, which is ascending global thread
order.

A finished batch drops its closures (`close`), which refer back to it, so its arrays are freed
as soon as the batch is, not at the next garbage collection.
"""

from __future__ import annotations

import numpy as np

from ..isa.vocabulary import InstrClass
from ..wbin.program import Kernel
from .checker import Checker
from .memory import Memory, pad16
from .ops import HANDLERS, compile_instruction
from .state import Launch, State, Step
from .stats import Stats


class Batch(State):
    """One batch of consecutive workgroups, executed to completion by `run`."""

    def __init__(
        self,
        kernel: Kernel,
        launch: Launch,
        first_wg: int,
        n_wg: int,
        device: Memory,
        constant: Memory,
        stats: Stats,
    ):
        super().__init__(kernel, launch, first_wg, n_wg, device, constant, stats)
        self.checker = Checker(self) if launch.check else None
        self.ops: list[Step] = [compile_instruction(self, i, pc) for pc, i in enumerate(kernel.instructions)]

    def run(self) -> None:
        """Execute the batch to its end (or a trap), then drop the closures (`close`)."""
        try:
            self._run()
        finally:
            self.close()

    def close(self) -> None:
        """Break the reference cycles through the compiled closures and the checker."""
        self.ops = []
        self.checker = None
        self.frames = []
        self.snapshot = None

    def _run(self) -> None:
        ops = self.ops
        n = len(ops)
        insts = self.k.instructions
        closer = self.closer
        pc = 0
        budget = self.launch.max_instructions
        issued = 0
        with np.errstate(all="ignore"):
            while pc < n:
                nxt = ops[pc]()
                issued += 1
                self.issued = issued
                if issued > budget:
                    raise self.trap(
                        pc,
                        f"instruction budget exhausted: a thread issued more than {budget:,} instructions "
                        f"(max_instructions={budget}); an endless loop? If the kernel needs more, raise "
                        "it: emulate(..., max_instructions=N), a kernel call's max_instructions=N, or "
                        "wave run --max-instructions N",
                        self.first_active_lane(),
                    )
                pc = pc + 1 if nxt is None else nxt
                if self.n_active == 0 and pc < n and insts[pc].spec.cls is not InstrClass.CONTROL:
                    pc = closer[pc]


__all__ = ["HANDLERS", "Batch", "Launch", "Memory", "pad16"]
