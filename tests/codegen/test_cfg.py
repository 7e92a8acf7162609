"""codegen.cfg, codegen.dominance and codegen.loops against brute-force definitions on random graphs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from wavegpu.codegen import (
    dominates,
    dominator_tree,
    frontiers,
    idoms,
    loop_depths,
    natural_loops,
    postdominators,
    predecessors,
    reachable,
    rpo,
)


@st.composite
def graphs(draw: st.DrawFn, max_nodes: int = 9) -> list[list[int]]:
    """Successor lists of a random graph on 0..n-1 (node 0 is the entry)."""
    n = draw(st.integers(1, max_nodes))
    return [draw(st.lists(st.integers(0, n - 1), max_size=3, unique=True)) for _ in range(n)]


def reach_without(succ: list[list[int]], entry: int, removed: int | None) -> set[int]:
    seen: set[int] = set()
    work = [entry] if entry != removed else []
    while work:
        x = work.pop()
        if x in seen:
            continue
        seen.add(x)
        work.extend(s for s in succ[x] if s != removed)
    return seen


DIAMOND_LOOP = [[1], [2, 3], [4], [4], [1, 5], []]  # 0 -> 1 -> {2,3} -> 4 -> {1, 5}


def test_rpo_and_predecessors_on_a_loop() -> None:
    order = rpo(0, lambda n: DIAMOND_LOOP[n])
    assert order[0] == 0 and order.index(1) < order.index(2) < order.index(4)
    assert order.index(3) < order.index(4) < order.index(5)
    assert sorted(order) == list(range(6))
    preds = predecessors(range(6), lambda n: DIAMOND_LOOP[n])
    assert preds == {0: [], 1: [0, 4], 2: [1], 3: [1], 4: [2, 3], 5: [4]}


def test_dominance_loops_and_frontiers_on_a_loop() -> None:
    succs = DIAMOND_LOOP.__getitem__
    idom = idoms(0, succs)
    assert idom == {0: None, 1: 0, 2: 1, 3: 1, 4: 1, 5: 4}
    assert {n: sorted(k) for n, k in dominator_tree(idom).items()} == {
        0: [1],
        1: [2, 3, 4],
        2: [],
        3: [],
        4: [5],
        5: [],
    }
    df = frontiers(range(6), predecessors(range(6), succs), idom)
    assert df == {0: set(), 1: {1}, 2: {4}, 3: {4}, 4: {1}, 5: set()}
    (lp,) = natural_loops(range(6), succs, predecessors(range(6), succs), idom)
    assert lp.header == 1 and lp.blocks == {1, 2, 3, 4} and lp.exits == {5} and lp.depth == 1
    assert loop_depths(range(6), [lp]) == {0: 0, 1: 1, 2: 1, 3: 1, 4: 1, 5: 0}
    assert postdominators(range(6), succs, 5) == {5: None, 4: 5, 2: 4, 3: 4, 1: 4, 0: 1}


def test_nested_loops_know_their_parents() -> None:
    succ = [[1], [2], [2, 3], [1, 4], []]  # outer 1..3, inner self-loop at 2
    idom = idoms(0, succ.__getitem__)
    ls = natural_loops(range(5), succ.__getitem__, predecessors(range(5), succ.__getitem__), idom)
    outer, inner = ls
    assert outer.blocks == {1, 2, 3} and inner.blocks == {2}
    assert inner.parent is outer and outer.children == [inner] and inner.depth == 2
    assert loop_depths(range(5), ls) == {0: 0, 1: 1, 2: 2, 3: 1, 4: 0}


@given(graphs())
def test_dominators_match_the_definition(succ: list[list[int]]) -> None:
    """a dominates b exactly when b cannot be reached from the entry once a is removed."""
    idom = idoms(0, succ.__getitem__)
    live = reach_without(succ, 0, None)
    assert set(idom) == live == reachable(0, succ.__getitem__)
    order = rpo(0, succ.__getitem__)
    assert order[0] == 0 and set(order) == live
    for a in live:
        cut = reach_without(succ, 0, a)
        for b in live:
            assert dominates(idom, a, b) == (a == b or b not in cut), (a, b)
    for b, d in idom.items():  # the immediate dominator is a strict dominator dominated by all others
        if d is not None:
            assert d != b and dominates(idom, d, b)
            assert all(dominates(idom, o, d) for o in live if o != b and dominates(idom, o, b))


@given(graphs())
def test_frontiers_match_the_definition(succ: list[list[int]]) -> None:
    """y is in DF(x) when x dominates a predecessor of y but does not strictly dominate y (the
    entry has no predecessors, as frontiers() requires)."""
    succ = [[s for s in ss if s != 0] for ss in succ]
    idom = idoms(0, succ.__getitem__)
    preds = predecessors(range(len(succ)), succ.__getitem__)
    df = frontiers(range(len(succ)), preds, idom)
    for x in idom:
        want = {
            y
            for y in idom
            if any(p in idom and dominates(idom, x, p) for p in preds[y]) and not (x != y and dominates(idom, x, y))
        }
        assert df[x] == want, x


@given(graphs())
def test_natural_loops_match_the_definition(succ: list[list[int]]) -> None:
    """A loop's body is its header plus what reaches a back edge's source avoiding the header."""
    idom = idoms(0, succ.__getitem__)
    preds = predecessors(range(len(succ)), succ.__getitem__)
    ls = natural_loops(range(len(succ)), succ.__getitem__, preds, idom)
    headers = {h for b in idom for h in succ[b] if dominates(idom, h, b)}
    assert {lp.header for lp in ls} == headers
    for lp in ls:
        body = {lp.header}
        for b in idom:
            if lp.header in succ[b] and dominates(idom, lp.header, b):
                # nodes that reach b in the reversed graph without crossing the header
                rev = {x: [p for p in preds[x] if p in idom] for x in idom}
                body |= reach_without([rev.get(x, []) for x in range(len(succ))], b, lp.header)
        assert lp.blocks == body
        assert all(lp.header in lp.blocks and dominates(idom, lp.header, b) for b in lp.blocks)
        if lp.parent is not None:
            assert lp.blocks < lp.parent.blocks and lp in lp.parent.children
    depth = loop_depths(range(len(succ)), ls)
    for b in range(len(succ)):
        assert depth[b] == sum(1 for lp in ls if b in lp.blocks)


@given(graphs())
def test_postdominators_match_the_definition(succ: list[list[int]]) -> None:
    """a postdominates b exactly when every path from b to the exit passes a (the exit is the
    last node; nodes that cannot reach it have no postdominators)."""
    exit_ = len(succ) - 1
    n = len(succ)
    ipdom = postdominators(range(n), succ.__getitem__, exit_)

    def reaches_exit(b: int, removed: int | None) -> bool:
        return exit_ in reach_without(succ, b, removed) if b != removed else False

    can = {b for b in range(n) if reaches_exit(b, None)}
    assert set(ipdom) == can
    for a in can:
        for b in can:
            want = a == b or not reaches_exit(b, a)
            assert dominates(ipdom, a, b) == want, (a, b)
