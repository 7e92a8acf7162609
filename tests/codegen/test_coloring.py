"""codegen.coloring: random interference graphs are coloured legally (hypothesis), spills fall on
the cheapest nodes, copies are coalesced, and the colourability test is sound for tuples."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wavegpu.codegen import InterferenceGraph, build_interference, color
from wavegpu.codegen.coloring import blocked, positions
from wavegpu.codegen.interference import INF

SHAPES = [(1, 1), (2, 2), (2, 1), (3, 1), (4, 4), (4, 2)]  # (size, align): scalars, pairs, tuples


@st.composite
def problems(draw: st.DrawFn, limits: bool = True) -> tuple[InterferenceGraph, int]:
    K = draw(st.integers(4, 12))
    g = InterferenceGraph()
    n = draw(st.integers(1, 14))
    used_pins: list[tuple[int, int]] = []
    for _ in range(n):
        size, align = draw(st.sampled_from(SHAPES))
        limit = draw(st.integers(size, K)) if limits and draw(st.integers(0, 3)) == 0 else None
        top = K if limit is None else limit
        pin = None
        if draw(st.integers(0, 5)) == 0:
            r = draw(st.integers(0, (top - size) // align)) * align
            if all(r + size <= a or b <= r for a, b in used_pins):  # pinned nodes never overlap
                pin = r
                used_pins.append((r, r + size))
        g.add_node(size, align, draw(st.sampled_from([0.0, 1.0, 10.0, 100.0, INF])), pin, limit)
    pinned = list(g.pinned)
    for a, b in itertools.combinations(pinned, 2):
        g.add_edge(a, b)
    for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n)):
        g.add_edge(a, b)
    for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=n)):
        g.add_move(a, b)
    return g, K


@given(problems())
def test_colouring_is_legal(problem: tuple[InterferenceGraph, int]) -> None:
    g, K = problem
    before = [set(s) for s in g.adj]
    res = color(g, K)
    assert g.adj == before  # the graph is left as it was
    spilled = {m for group in res.spilled for m in group}
    assert spilled.isdisjoint(res.colors) and spilled | set(res.colors) == set(range(len(g)))
    for j, r in res.colors.items():
        assert r >= 0 and r + g.size[j] <= min(K, g.limit.get(j, K)) and r % g.align[j] == 0
        if j in g.pinned:
            assert r == g.pinned[j]
    for a in res.colors:
        for b in g.adj[a]:
            if b in res.colors:  # interfering nodes never share a register
                ra, rb = res.colors[a], res.colors[b]
                assert ra + g.size[a] <= rb or rb + g.size[b] <= ra, (a, b)
    for j in range(len(g)):  # coalesced nodes share one fate
        assert (j in spilled) == (res.rep[j] in spilled)
        if j in res.colors:
            assert res.colors[j] == res.colors[res.rep[j]]


@given(problems(limits=False))
def test_enough_registers_means_no_spill(problem: tuple[InterferenceGraph, int]) -> None:
    g, _ = problem
    roomy = sum(s + a for s, a in zip(g.size, g.align)) + 8
    assert color(g, roomy).complete


def test_a_clique_spills_its_cheapest_node() -> None:
    g = InterferenceGraph()
    for cost in (5.0, 1.0, 7.0, 9.0):
        g.add_node(cost=cost)
    for a, b in itertools.combinations(range(4), 2):
        g.add_edge(a, b)
    res = color(g, 3)
    assert res.spilled == [[1]] and sorted(res.colors.values()) == [0, 1, 2]


def test_copies_coalesce_and_tuples_align() -> None:
    g = InterferenceGraph()
    a, b, c = g.add_node(), g.add_node(), g.add_node(2, 2)
    g.add_move(b, a)
    g.add_edge(a, c)
    g.add_edge(b, c)
    res = color(g, 4)
    assert res.complete and res.colors[a] == res.colors[b] and res.rep[b] == res.rep[a]
    assert res.colors[c] % 2 == 0 and res.colors[c] != res.colors[a] // 2 * 2


def test_a_limit_keeps_a_node_low() -> None:
    g = InterferenceGraph()
    a, b = g.add_node(), g.add_node(limit=2)
    c = g.add_node(pinned=0)
    for x, y in ((a, b), (a, c), (b, c)):
        g.add_edge(x, y)
    res = color(g, 8)
    assert res.colors[c] == 0 and res.colors[b] == 1 and res.colors[a] == 2
    g2 = InterferenceGraph()
    p, q = g2.add_node(limit=1), g2.add_node(limit=1)
    g2.add_edge(p, q)
    assert len(color(g2, 8).spilled) == 1  # two values below register 1: one must spill
    with pytest.raises(ValueError, match="cannot lie below"):
        g2.add_node(2, limit=1)


def test_pinned_nodes_keep_their_register() -> None:
    g = InterferenceGraph()
    p = g.add_node(pinned=3)
    q = g.add_node()
    g.add_edge(p, q)
    g.add_move(q, p)  # interfering: not coalesced
    res = color(g, 4)
    assert res.colors[p] == 3 and res.colors[q] != 3


def test_bad_nodes_are_refused() -> None:
    g = InterferenceGraph()
    with pytest.raises(ValueError, match="size"):
        g.add_node(0)
    with pytest.raises(ValueError, match="multiple"):
        g.add_node(2, 2, pinned=3)
    g.add_node(2, 2, pinned=4)
    with pytest.raises(ValueError, match="outside the 5 registers"):
        color(g, 5)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_colourability_bound_is_sound(shape: tuple[int, int]) -> None:
    """When the neighbours can block fewer aligned positions than a node has, every placement of
    them leaves the node a free aligned range (checked exhaustively for small K)."""
    size, align = shape
    for K in range(size, 9):
        for nb in itertools.combinations_with_replacement(SHAPES, 3):
            nb = tuple(s for s in nb if s[0] <= K)
            if sum(blocked(size, align, s, a) for s, a in nb) >= positions(K, size, align):
                continue
            starts = [range(0, K - s + 1, a) for s, a in nb]
            for place in itertools.product(*starts):
                taken = {r + k for (s, _), r in zip(nb, place) for k in range(s)}
                assert any(all(r + k not in taken for k in range(size)) for r in range(0, K - size + 1, align)), (
                    K,
                    shape,
                    nb,
                    place,
                )


def test_build_interference_follows_chaitins_rule() -> None:
    # 0: a = ...; 1: b = a (copy); 2: c = a + b; live after each: {a}, {a, b}, {c}
    g = InterferenceGraph()
    a, b, c = (g.add_node() for _ in range(3))
    build_interference(g, [1 << a, 1 << a | 1 << b, 1 << c], [[a], [b], [c]], [None, (b, a), None])
    assert not g.interferes(a, b)  # the copy's source does not interfere with its target
    assert g.moves == [(b, a)] and not g.interferes(c, a)
    g2 = InterferenceGraph()
    x, y = g2.add_node(), g2.add_node()
    build_interference(g2, [0], [[x, y]])  # two results of one instruction
    assert g2.interferes(x, y)
