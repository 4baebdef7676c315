"""Prefix sums of item heights: the tree under the transcript's line index.

No Textual, no Rich: tested on its own (tests/test_line_index.py).
"""

from __future__ import annotations

__all__ = ["Fenwick"]


class Fenwick:
    """Prefix sums of item heights with O(log n) update, prefix and row lookup."""

    __slots__ = ("tree", "n")

    def __init__(self, values: list[int]) -> None:
        n = len(values)
        tree = [0] * (n + 1)
        tree[1:] = values
        for i in range(1, n + 1):
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
        self.tree = tree
        self.n = n

    @classmethod
    def extended(cls, old: Fenwick, keep: int, tail: list[int]) -> Fenwick:
        """The tree of ``old``'s first ``keep`` values followed by ``tail``, in
        O(len(tail) + log keep): a node covers only values at or before it."""
        tree = old.tree[:keep + 1]
        tree += tail
        n = keep + len(tail)
        i = keep  # the kept nodes whose parent is past them: keep's prefix path
        while i > 0:
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
            i -= i & -i
        for i in range(keep + 1, n + 1):
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
        new = cls.__new__(cls)
        new.tree, new.n = tree, n
        return new

    def append(self, value: int) -> None:
        self.n += 1
        i = self.n
        low = i - (i & -i)
        self.tree.append(value + self.prefix(i - 1) - self.prefix(low))

    def add(self, index: int, delta: int) -> None:
        i = index + 1
        tree, n = self.tree, self.n
        while i <= n:
            tree[i] += delta
            i += i & -i

    def prefix(self, count: int) -> int:
        """Sum of the first ``count`` values (the first row of item ``count``)."""
        total, tree = 0, self.tree
        i = count
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total

    @property
    def total(self) -> int:
        return self.prefix(self.n)

    def find(self, row: int) -> int:
        """Index of the item that holds ``row`` (``n`` when past the end).

        The largest ``i`` with ``prefix(i) <= row``: zero-height items are skipped."""
        pos, rem, tree, n = 0, row, self.tree, self.n
        step = 1 << n.bit_length()
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] <= rem:
                pos = nxt
                rem -= tree[nxt]
            step >>= 1
        return pos
