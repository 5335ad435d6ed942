r"""Theorems 3.1 (a threshold policy is optimal) and 3.2 (the arm is indexable) of [PS23]_
checked on three families of contents: our grid of constant chains, random level-dependent
chains, and random ones that also meet the condition of the proof of Lemma 2
(:func:`theorem3_checks`), with the evidence of the rows they give.

The references ([PS23]_, [P94]_) are those of the package's docstring.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from whittle_lib.models.caching import (CachingContent, check_assumptions, check_structure,
                                       is_concave_on, random_content, solve_content)

from .instances import chain_content
from .readings import boost_sums, chain_probabilities, lemma2_condition, random_lemma2_content

__all__ = ["constant_chain_grid", "accepted_contents", "StructureChecks", "check_structures",
           "index_drops", "lemma1_concave_at_failure", "counterexample_table", "failure_notes",
           "tau_identity_gap", "Theorem3Checks", "theorem3_checks", "theorem32_readings",
           "extension_rows"]


def constant_chain_grid(levels, cost_scale: float) -> list:
    r"""The contents of our grid of constant chains that satisfy Assumptions 1-3 (Thms 3.1,
    3.2): ``up0, down0`` in {0.1, 0.2, 0.3}, up-boost and down-boost in {0, 0.1}, missing cost
    :math:`a\sqrt r` or :math:`a\log(1+r)`, fetch cost in {1, 3}: 144 points."""
    levels = np.asarray(levels, dtype=float)
    grid = []
    for up0, down0, bu, bd, f, d in itertools.product((0.1, 0.2, 0.3), (0.1, 0.2, 0.3),
                                                       (0.0, 0.1), (0.0, 0.1), ("sqrt", "log"),
                                                       (1.0, 3.0)):
        cost = cost_scale * (np.sqrt(levels) if f == "sqrt" else np.log1p(levels))
        c = chain_content((up0, down0, up0 + bu, down0 - bd), d, levels, cost)
        if check_assumptions(c).assumptions_1_to_3:
            grid.append(c)
    return grid


def accepted_contents(draw, n_levels: int, n: int, *, rng):
    """Draw contents ``draw(n_levels, rng=rng)`` until ``n`` satisfy Assumptions 1-3.

    Returns
    -------
    (list of CachingContent, int)
        The accepted contents and the number drawn.
    """
    if int(n) != n or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    out, tried = [], 0
    while len(out) < n:
        tried += 1
        c = draw(n_levels, rng=rng)
        if check_assumptions(c).assumptions_1_to_3:
            out.append(c)
    return out, tried


@dataclass(frozen=True, eq=False)
class StructureChecks:
    """Theorems 3.1-3.2 checked (:func:`whittle_lib.models.caching.check_structure`) on contents at
    several discounts, one entry per (content, discount).

    Attributes
    ----------
    contents : tuple of CachingContent
    checks : tuple of StructureCheck
    lemma2 : numpy.ndarray of bool
        :func:`lemma2_condition` of the content.
    """

    contents: tuple
    checks: tuple
    lemma2: np.ndarray

    @property
    def n(self) -> int:
        """Number of checks."""
        return len(self.checks)

    @property
    def threshold(self) -> int:
        """Checks whose optimal policies are all threshold (Theorem 3.1)."""
        return sum(s.threshold for s in self.checks)

    @property
    def indexable(self) -> int:
        """Checks indexable by the engine and by the direct solutions (Theorem 3.2)."""
        return sum(s.index.indexable and s.passive_monotone for s in self.checks)

    def where(self, mask) -> "StructureChecks":
        """The checks where ``mask`` is true."""
        keep = [i for i, m in enumerate(mask) if m]
        return StructureChecks(tuple(self.contents[i] for i in keep),
                               tuple(self.checks[i] for i in keep), self.lemma2[keep])

    def failures(self) -> "StructureChecks":
        """The checks that are not threshold."""
        return self.where([not s.threshold for s in self.checks])


def check_structures(contents, discounts) -> StructureChecks:
    """:func:`whittle_lib.models.caching.check_structure` for every content and discount."""
    checks = tuple(check_structure(c, discount=b) for c in contents for b in discounts)
    lemma2 = np.repeat([lemma2_condition(c) for c in contents], len(discounts))
    return StructureChecks(tuple(c for c in contents for _ in discounts), checks, lemma2)


def index_drops(W, *, tol: float = 1e-9) -> list:
    """``[(c, k)]`` where the index falls from level ``k`` to ``k + 1`` in row ``c`` by more
    than ``tol`` (a break of the threshold structure of Theorem 3.1)."""
    W = np.asarray(W, dtype=float)
    return [(cc, k) for cc in range(W.shape[0]) for k in range(W.shape[1] - 1)
            if W[cc, k + 1] < W[cc, k] - tol]


def lemma1_concave_at_failure(content: CachingContent, check) -> bool | None:
    """At the first penalty of ``check.lams`` where no optimal policy is threshold: is the
    optimal cost ``V(., c)`` concave in ``r`` for both ``c`` (Lemma 1's conclusion)? ``None``
    if every penalty gives a threshold policy."""
    K = content.n_levels
    for lam in check.lams:
        sol = solve_content(content, float(lam), discount=check.index.discount)
        if sol.thresholds is None:
            return all(is_concave_on(content.levels, sol.cost[k * K:(k + 1) * K]) for k in (0, 1))
    return None


def counterexample_table(content: CachingContent, check) -> str:
    """Per level ``k``: the indices ``W(k, 0), W(k, 1)`` of ``check``, the missing cost, the
    birth-death chain (:func:`chain_probabilities`) and the boost sum ``s_k``
    (:func:`boost_sums`) of ``content``: where the threshold structure breaks."""
    W = check.index.indices.reshape(2, -1)
    cols = np.vstack([W, content.missing_cost, chain_probabilities(content), boost_sums(content)])
    lines = [f"{'k':>2s}  {'W(k, 0)':>8s}  {'W(k, 1)':>8s}  {'C(k)':>6s}  {'up0':>6s}  "
             f"{'down0':>6s}  {'up1':>6s}  {'down1':>6s}  {'s_k':>6s}"]
    lines += [f"{k:2d}  {col[0]:8.4f}  {col[1]:8.4f}  " + "  ".join(f"{v:6.3f}" for v in col[2:])
              for k, col in enumerate(cols.T)]
    return "\n".join(lines)


def failure_notes(bad: StructureChecks, bad_c: StructureChecks, concave_c) -> tuple:
    """``(note_b, note_c)``: what the checks of Theorem 3.1 that are not threshold show, for
    the evidence of the extension to level-dependent chains.

    ``bad``: the failures under Assumptions 1-3 (do they violate Lemma 2's condition? where
    does the index fall, :func:`index_drops`); ``bad_c``: the failures with Lemma 2's
    condition, and ``concave_c`` whether Lemma 1's concave value function survives there
    (:func:`lemma1_concave_at_failure`). Empty strings when there are no failures.
    """
    note_b = note_c = ""
    if bad.n:
        n_ok = int(bad.lemma2.sum())
        cc, k = index_drops(bad.checks[0].index.indices.reshape(2, -1))[0]
        note_b = (f" The {bad.n} failures all violate Lemma 2's condition (boost sums s_k not "
                  f"non-increasing); e.g. the index falls from level {k} to {k + 1} (c = {cc}), so "
                  "for penalties between the two values caching is optimal at the lower level only."
                  if not n_ok else f" {n_ok} of the {bad.n} failures satisfy Lemma 2's condition.")
    if bad_c.n:
        note_c = (f" The {bad_c.n} failure(s) with Lemma 2's condition have a value function that "
                  f"is not concave in r at the penalty where the policy is not threshold "
                  f"({bad_c.n - sum(concave_c)} of {bad_c.n}): Lemma 1's conclusion fails, i.e. "
                  "'P0 C and P1 C concave' (our Assumption 3) does not carry the induction of "
                  "Remark 2 on level-dependent chains.")
    return note_b, note_c


def tau_identity_gap(content: CachingContent, penalty: float, discount: float) -> float:
    r"""``max_k |A(k, 1) - A(k, 0) - d|`` for the caching advantage ``A`` of the optimal
    single-content solution at ``penalty``: zero (to rounding) in this model, which is why
    :math:`\tau_1 \le \tau_0` of Theorem 3.1 holds whenever both rows are threshold."""
    K = content.n_levels
    sol = solve_content(content, penalty, discount=discount)
    return float(np.abs(sol.advantage[K:] - sol.advantage[:K] - content.fetch_cost).max())


@dataclass(frozen=True, eq=False)
class Theorem3Checks:
    """Theorems 3.1-3.2 on the three families of the notebook (:func:`theorem3_checks`).

    Attributes
    ----------
    grid : tuple of CachingContent
        (a) our grid of constant chains satisfying Assumptions 1-3
        (:func:`constant_chain_grid`).
    a, b, c : StructureChecks
        (a) the grid at ``grid_discounts``; (b) random level-dependent chains satisfying
        Assumptions 1-3; (c) the same with Lemma 2's condition (:func:`random_lemma2_content`),
        both at beta in {0.9, 0.99}.
    tried_b, tried_c : int
        Random contents drawn to accept ``n_random`` for (b), (c).
    concave_c : tuple of bool or None
        :func:`lemma1_concave_at_failure` of each failure of (c).
    n_random : int
    n_levels : int
        K of the grid.
    cost_scale : float
    grid_discounts : tuple of float
    """

    grid: tuple
    a: StructureChecks
    b: StructureChecks
    c: StructureChecks
    tried_b: int
    tried_c: int
    concave_c: tuple
    n_random: int
    n_levels: int
    cost_scale: float
    grid_discounts: tuple

    @property
    def a2(self) -> StructureChecks:
        """The checks of (a) that meet Lemma 2's condition (no down-boost)."""
        return self.a.where(self.a.lemma2)

    def report(self) -> str:
        """Threshold and indexable counts of the three families."""
        a, a2, b, c = self.a, self.a2, self.b, self.c
        return "\n".join([
            f"(a) constant chains: {len(self.grid)} of 144 grid points satisfy Assumptions 1-3; "
            f"x {len(self.grid_discounts)} discounts = {a.n} checks",
            f"    threshold: {a.threshold}/{a.n};  indexable (engine and direct): "
            f"{a.indexable}/{a.n}",
            "    of which with Lemma 2's condition (no down-boost): threshold "
            f"{a2.threshold}/{a2.n}, "
            f"indexable {a2.indexable}/{a2.n}",
            f"(b) level-dependent chains (ours): {self.n_random} accepted of {self.tried_b} drawn; "
            f"{b.n} checks",
            f"    threshold: {b.threshold}/{b.n};  indexable: {b.indexable}/{b.n};  checks whose "
            f"chain meets Lemma 2's condition: {b.lemma2.sum()}/{b.n}",
            f"(c) level-dependent chains with Lemma 2's condition (ours): {self.n_random} accepted "
            f"of {self.tried_c} drawn",
            f"    threshold: {c.threshold}/{c.n};  indexable: {c.indexable}/{c.n}"])

    def failure_report(self) -> str:
        """Where the threshold structure breaks: the first counterexample of (b) (its chain,
        indices and boost sums, :func:`counterexample_table`), and for the failures of (c)
        whether Lemma 1's concave value function survives. Empty without failures."""
        bad, bad_c, lines = self.b.failures(), self.c.failures(), []
        if bad.n:
            c_bad, s_bad = bad.contents[0], bad.checks[0]
            k_drop = index_drops(s_bad.index.indices.reshape(2, -1))
            lines += [f"the first counterexample: beta = {s_bad.index.discount}, fetch cost d = "
                      f"{c_bad.fetch_cost:.3f}", counterexample_table(c_bad, s_bad),
                      "the index decreases from level k to k+1 at "
                      + ", ".join(f"k = {k} (c = {cc})" for cc, k in k_drop),
                      f"Lemma 2's condition holds for {int(bad.lemma2.sum())} of the {bad.n} "
                      "checks that are not threshold"]
        if bad_c.n:
            lines.append(f"family (c): {bad_c.n} of {self.c.n} checks not threshold; at the "
                         "first non-threshold penalty of each,\n  the optimal cost V(., c) is "
                         f"concave in r (Lemma 1) in {sum(self.concave_c)} of them")
        return "\n".join(lines)


def theorem3_checks(levels, cost_scale: float, grid_discounts, n_random: int, *, rng,
                    rng_lemma2, n_levels_random: int = 6,
                    random_discounts=(0.9, 0.99)) -> Theorem3Checks:
    r"""Check Theorems 3.1 (threshold policies) and 3.2 (indexability) on (a) our grid of
    constant chains on ``levels`` with missing costs scaled by ``cost_scale``, (b)
    ``n_random`` random level-dependent chains satisfying Assumptions 1-3, drawn from ``rng``,
    and (c) ``n_random`` satisfying Lemma 2's condition too, drawn from ``rng_lemma2``
    (:func:`check_structures`)."""
    grid = constant_chain_grid(levels, cost_scale)
    a = check_structures(grid, grid_discounts)
    random_b, tried_b = accepted_contents(random_content, n_levels_random, n_random, rng=rng)
    b = check_structures(random_b, random_discounts)
    random_c, tried_c = accepted_contents(random_lemma2_content, n_levels_random, n_random,
                                          rng=rng_lemma2)
    c = check_structures(random_c, random_discounts)
    bad_c = c.failures()
    concave_c = tuple(lemma1_concave_at_failure(x, s)
                      for x, s in zip(bad_c.contents, bad_c.checks))
    return Theorem3Checks(tuple(grid), a, b, c, tried_b, tried_c, concave_c, int(n_random),
                          len(levels), float(cost_scale), tuple(grid_discounts))


def theorem32_readings(checks: Theorem3Checks) -> tuple[dict, str]:
    """``(verdicts, evidence)`` of Theorem 3.2 (indexable) of [PS23] on the constant chains of
    the paper's setting (Sec. 6), judged under our reading of Assumptions 1-3 and with Lemma 2's
    condition added: the arguments after the key of ``Comparison.claim_by_reading``."""
    a, a2 = checks.a, checks.a2
    return ({f"Assumptions 1-3 as we read them: {a.indexable}/{a.n} checks": a.indexable == a.n,
             f"plus Lemma 2's condition: {a2.indexable}/{a2.n}": a2.indexable == a2.n},
            "The engine's exact test (Gast-Gaujal-Khun) and the passive sets of the direct "
            "solutions agree; grid as for Thm. 3.1.")


def extension_rows(checks: Theorem3Checks) -> dict:
    """``{"Theorem 3.1": (value, note), "Theorem 3.2": (value, note)}``: the two rows of ours
    (``new``) on level-dependent chains, families (b) and (c) of ``checks``."""
    b, c = checks.b, checks.c
    bad_text, bad_c_text = failure_notes(b.failures(), c.failures(), checks.concave_c)
    ext = ("ours, not the paper's setting: Fig. 1 chains with level-dependent up/down "
           "probabilities (the prose gives them without a level index), K = 6, beta in {0.9, 0.99}")
    n = checks.n_random
    return {
        "Theorem 3.1": (
            f"{b.threshold}/{b.n} (A1-A3); {c.threshold}/{c.n} (A1-A3 and Lemma 2)",
            f"{ext}. Under Assumptions 1-3 as we read them ({n} random chains): {b.threshold} "
            f"of {b.n} checks threshold; with Lemma 2's condition added ((P1 - P0)V "
            "non-increasing for concave non-decreasing V, i.e. boost sums non-increasing; "
            f"{n} other random chains): {c.threshold} of {c.n}.{bad_text}{bad_c_text} So on "
            "this extension Assumptions 1-3 as we read them do not suffice, and each failure "
            "breaks a premise of the proof (Lemma 2's condition, or Lemma 1's concave value "
            "function)."),
        "Theorem 3.2": (
            f"{b.indexable}/{b.n} (A1-A3); {c.indexable}/{c.n} (A1-A3 and Lemma 2)",
            f"{ext}. Indexable in every check, including the instances that are not threshold.")}
