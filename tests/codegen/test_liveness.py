"""codegen.liveness against a path-based brute force on random control-flow graphs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from wavegpu.codegen import Numbering, block_liveness, instruction_liveness, liveness_within_block
from wavegpu.codegen.liveness import block_use_def

VARS = 5


@st.composite
def programs(draw: st.DrawFn) -> tuple[list[list[int]], list[set[int]], list[set[int]]]:
    """Random instruction graphs: successors, defs and uses per node (variables 0..VARS-1)."""
    n = draw(st.integers(1, 10))
    succ = [draw(st.lists(st.integers(0, n - 1), max_size=2, unique=True)) for _ in range(n)]
    var_sets = st.sets(st.integers(0, VARS - 1), max_size=2)
    defs = [draw(var_sets) for _ in range(n)]
    uses = [draw(var_sets) for _ in range(n)]
    return succ, defs, uses


def live_in_reference(succ: list[list[int]], defs: list[set[int]], uses: list[set[int]], n0: int, v: int) -> bool:
    """v is live into n0 when some path from n0 reaches a use of v before any definition of it."""
    seen: set[int] = set()
    work = [n0]
    while work:
        x = work.pop()
        if x in seen:
            continue
        seen.add(x)
        if v in uses[x]:
            return True
        if v not in defs[x]:
            work.extend(succ[x])
    return False


def mask(vs: set[int]) -> int:
    return sum(1 << v for v in vs)


@given(programs())
def test_instruction_liveness_matches_paths(prog: tuple[list[list[int]], list[set[int]], list[set[int]]]) -> None:
    succ, defs, uses = prog
    live_in, live_out = instruction_liveness(succ, [mask(d) for d in defs], [mask(u) for u in uses])
    for i in range(len(succ)):
        want_in = {v for v in range(VARS) if live_in_reference(succ, defs, uses, i, v)}
        want_out = {v for s in succ[i] for v in range(VARS) if live_in_reference(succ, defs, uses, s, v)}
        assert live_in[i] == mask(want_in), i
        assert live_out[i] == mask(want_out), i


@st.composite
def block_programs(draw: st.DrawFn) -> tuple[list[list[int]], list[list[tuple[set[int], set[int]]]]]:
    """Random CFGs of basic blocks, each a list of (defs, uses) instructions."""
    n = draw(st.integers(1, 7))
    succ = [draw(st.lists(st.integers(0, n - 1), max_size=2, unique=True)) for _ in range(n)]
    var_sets = st.sets(st.integers(0, VARS - 1), max_size=2)
    body = [draw(st.lists(st.tuples(var_sets, var_sets), max_size=4)) for _ in range(n)]
    return succ, body


@given(block_programs())
def test_block_liveness_matches_the_flattened_program(
    prog: tuple[list[list[int]], list[list[tuple[set[int], set[int]]]]],
) -> None:
    """Block liveness, refined per instruction, equals instruction liveness (and the brute force)
    on the same program flattened into one node per instruction."""
    succ, body = prog
    # flatten: each block is its instructions in sequence (an empty block is one empty node)
    first: list[int] = []
    fsucc: list[list[int]] = []
    fdefs: list[set[int]] = []
    fuses: list[set[int]] = []
    for steps in body:
        first.append(len(fsucc))
        for d, u in steps or [(set(), set())]:
            fsucc.append([len(fsucc) + 1])
            fdefs.append(d)
            fuses.append(u)
        fsucc[-1] = []
    for b, ss in enumerate(succ):
        last = (first[b + 1] if b + 1 < len(first) else len(fsucc)) - 1
        fsucc[last] = [first[s] for s in ss]
    uses, defs = {}, {}
    for b, steps in enumerate(body):
        uses[b], defs[b] = block_use_def(steps)
    result = block_liveness(list(range(len(succ))), succ.__getitem__, uses, defs)
    for b, steps in enumerate(body):
        want_in = {v for v in range(VARS) if live_in_reference(fsucc, fdefs, fuses, first[b], v)}
        assert result.live_in[b] == want_in, b
        assert result.live_out[b] == set().union(*(result.live_in[s] for s in succ[b])), b
        ins, outs = liveness_within_block(result.live_out[b], steps)
        for k in range(len(steps)):
            want = {v for v in range(VARS) if live_in_reference(fsucc, fdefs, fuses, first[b] + k, v)}
            assert ins[k] == want, (b, k)
            assert outs[k] == (ins[k + 1] if k + 1 < len(steps) else result.live_out[b])


def test_numbering_round_trips() -> None:
    num: Numbering[str] = Numbering()
    m = num.mask(["x", "y", "x", "z"])
    assert num.items == ["x", "y", "z"] and m == 0b111 and len(num) == 3
    assert num.members(0b101) == ["x", "z"] and num.index("y") == 1


def test_a_loop_keeps_its_counter_live() -> None:
    # 0: i = 0; 1: use i; 2: i = i + 1, back to 1 or out to 3; 3: ret
    succ = [[1], [2], [1, 3], []]
    live_in, live_out = instruction_liveness(succ, [1, 0, 1, 0], [0, 1, 1, 0])
    assert live_in == [0, 1, 1, 0] and live_out == [1, 1, 1, 0]
