"""Figs. 6-8 of the robots draft: which reference state ``x_hat`` gives the iteration counts
their captions print. The paper gives none; relative value iteration as the paper ran it
(``h_0 = 0``, its relative stopping rule) is run from every state of the captions' instance
(the notebook's Part I does it), and the states that give all three counts are ``x_hat*``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from whittle_lib.models import robots as _q
from .paper import figure_of as _figure_of
from .paper import figure_setting as _figure_setting
from .paper import state_tuple as _state_tuple

__all__ = ["CaptionCounts"]


@dataclass(frozen=True)
class CaptionCounts:
    """Relative value iteration's count ``k`` from every reference state on the instance of the
    captions of Figs. 6-8, against the counts the captions print.

    Attributes
    ----------
    lam, mu, K, N : float, float, int, int
        The captions' instance (``mu`` the notebook's), one figure per ``gamma``.
    tau, tol : float
        Damping and threshold of the runs.
    printed : dict of float to int
        For each ``gamma``, the count its caption prints.
    counts : dict of float to ndarray of int
        For each ``gamma``, ``k`` from every state ``x_hat``, in the order of the state space.

    Examples
    --------
    >>> found = CaptionCounts(0.1, 1.0, 2, 1, 0.99999, 1e-5, {1.4: 9},
    ...                       {1.4: np.arange(12) + 3})
    >>> found.matches, found.star
    ({1.4: {(1, 1, 2)}}, (1, 1, 2))
    """

    lam: float
    mu: float
    K: int
    N: int
    tau: float
    tol: float
    printed: dict
    counts: dict

    @classmethod
    def from_sweep(cls, captions, counts, *, mu: float, tau: float, tol: float
                   ) -> CaptionCounts:
        """From the captions' table (``printed_values()["Figs. 6-8"]``: one row per figure with
        its ``N``, ``K``, ``lam``, ``gamma`` and printed ``iterations``) and the counts from every
        state of each figure (keyed by the figure's name, as the table's index)."""
        rows = list(captions.itertuples())
        lam, K, N = rows[0].lam, int(rows[0].K), int(rows[0].N)
        if any((r.lam, r.K, r.N) != (lam, K, N) for r in rows):
            raise ValueError("the captions of Figs. 6-8 must share lam, K and N")
        return cls(lam=lam, mu=mu, K=K, N=N, tau=tau, tol=tol,
                   printed={r.gamma: int(r.iterations) for r in rows},
                   counts={r.gamma: np.asarray(counts[r.Index]) for r in rows})

    @property
    def space(self):
        """The states ``(q, r, s)`` of the instance."""
        return _q.robots_state_space(self.K, self.N)

    def setting(self, gamma: float) -> str:
        """The ``setting`` of the figure at ``gamma``."""
        return _figure_setting(self.N, self.K, self.lam, self.mu, gamma)

    def key(self, gamma: float) -> tuple[str, str, str]:
        """The key of the figure's printed count in the expected table."""
        return (_figure_of(gamma), self.setting(gamma), "iterations")

    def count_from(self, gamma: float, state) -> int:
        """``k`` from the reference state ``(q, r, s)`` on the figure at ``gamma``."""
        return int(self.counts[gamma][self.space.state(*state)])

    @property
    def matches(self) -> dict:
        """For each figure, the states ``(q, r, s)`` from which ``k`` is the printed count."""
        space = self.space
        return {g: {_state_tuple(space, i) for i in np.flatnonzero(self.counts[g] == n)}
                for g, n in self.printed.items()}

    @property
    def common(self) -> set:
        """The states that give every printed count."""
        found = self.matches
        return set.intersection(*found.values()) if found else set()

    @property
    def star(self):
        """``x_hat*``: the smallest state of :attr:`common` (``None`` if there is none)."""
        return min(self.common) if self.common else None

    @property
    def instances(self) -> list:
        """``(lam, mu, gamma, K, N, printed)`` of each figure, for the search of one reading
        (:func:`~replication.papers.robots_1999.readings.single_reading_search`)."""
        return [(self.lam, self.mu, g, self.K, self.N, n) for g, n in self.printed.items()]

    def report(self) -> str:
        """The matches as the notebook prints them."""
        found = self.matches
        lines = [f"{_figure_of(g)}: printed {n} iterations from x_hat in {sorted(found[g])}"
                 for g, n in self.printed.items()]
        lines.append("reference states that give all three printed counts: "
                     f"{sorted(self.common)};\n  we use x_hat* = {self.star}")
        return "\n".join(lines)
