"""Out of SSA (Sreedhar's method I): phis become copies through one fresh variable each.

Each phi gets a copy variable, written at the end of every predecessor and read into the phi's
value at the start of its block, so no copy is lost and no swap can clobber.
"""

from __future__ import annotations

from ..mir.ir import Block, Phi
from .ir import VReg
from .selection import Selector, cls_of


class PhiCopies:
    """The phis' copy variables, and the moves in and out of them."""

    def __init__(self, sel: Selector):
        self.sel = sel
        self.copy: dict[int, VReg] = {}

    def _copy(self, phi: Phi) -> VReg:
        # a register is numbered for every request (kept so that numbering, and so allocation,
        # is as it always was)
        return self.copy.setdefault(phi.dst.id, self.sel.lf.new(cls_of(phi.dst.type)))

    def enter(self, b: Block) -> None:
        """At the start of b: each phi's value is read from its copy."""
        for phi in b.phis:
            cp = self._copy(phi)
            self.sel.move(self.sel.vreg(phi.dst), cp)

    def leave(self, b: Block) -> None:
        """At the end of b: the copy of each successor phi is written with b's incoming value."""
        for s in b.succs:
            for phi in s.phis:
                cp = self._copy(phi)
                self.sel.put(cp, next(v for blk, v in phi.incoming if blk is b))


__all__ = ["PhiCopies"]
