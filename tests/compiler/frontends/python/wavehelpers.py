"""Helper functions in a module of their own, imported by helper_kernels.py (both ways Python
imports: `from wavehelpers import sq` and `import wavehelpers`)."""

import wavegpu as wg

SCALE = 3.0


def sq(v):
    return v * v


def scaled(v, k=SCALE):
    return v * k


def first_above(x, start, t):
    """The first index from `start` whose element exceeds t, else len(x): a return inside a loop."""
    for j in range(start, len(x)):
        if x[j] > t:
            return j
    return len(x)


def row_sum(m, r):
    """The sum of a 2-D array's row: its extent travels with it."""
    s = 0.0
    for c in range(m.shape[1]):
        s += m[r, c]
    return s


def count_into(counts, v: wg.f32):
    """A helper that returns nothing and writes an array it is given (by reference)."""
    if v > 0.25:
        wg.atomic_add(counts, wg.global_id() % 4, 1)
