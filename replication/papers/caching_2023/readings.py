r"""The model of [PS23]_ as we read it (Sec. 2-3): the assumptions, and the condition the
proof of Lemma 2 needs beyond them.

* :func:`assumption_readings`: every reading of Assumptions 1-3 (their statements were lost
  in extraction) and of the stronger conditions, on one content.
* :func:`lemma2_condition`, :func:`boost_sums`: the condition the step (12) of the proof of
  Lemma 2 needs, in general and for a birth-death chain; :func:`random_lemma2_content`
  draws contents that meet it.

The references ([PS23]_, [P94]_) are those of the package's docstring.
"""

from __future__ import annotations

import numpy as np

from whittle_lib.models.caching import CachingContent, check_assumptions

__all__ = ["lemma2_condition", "boost_sums", "chain_probabilities", "random_lemma2_content",
           "ASSUMPTION_READINGS", "assumption_readings", "LINEAR_COST_NOTE", "model_note"]


#: Tolerance of the linear inequalities of :func:`lemma2_condition` (probabilities times
#: level differences of order one, exact to ~1e-15).
_CONDITION_TOL = 1e-12


def lemma2_condition(content: CachingContent) -> bool:
    r"""Whether :math:`(P_1 - P_0) V` is non-increasing in ``r`` for every concave non-decreasing
    ``V`` (the step (12) of the proof of Lemma 2, [PS23]_ App. B).

    The proof shows by induction that the caching advantage
    :math:`Q(r, c, 0) - Q(r, c, 1) = (P_0 C)(r) - (1-c) d - \lambda
    + \beta\,[P_0 (V_0 - V_1)](r) - \beta\,[(P_1 - P_0) V_1](r)` is non-decreasing in ``r``
    (costs minimised). The first three terms are, by Assumption 2, the induction hypothesis
    and stochastic monotonicity ([P94]_ Lemma 4.7.2); the last needs
    :math:`(P_1 - P_0) V_1` non-*increasing*, with :math:`V_1` concave and non-decreasing
    (Lemma 1). Assumption 1 (dominance) gives only its sign.

    Checked on the generators of the cone of concave non-decreasing functions on the levels,
    :math:`\min(r, r_j)`, ``j = 2..K`` (constants give 0): the condition is linear in ``V``.

    Returns
    -------
    bool

    Examples
    --------
    >>> lv = np.arange(4.0)
    >>> c = CachingContent.birth_death(lv, np.sqrt(lv), up0=0.2, down0=0.2, up1=0.3,
    ...                                down1=0.2, fetch_cost=1.0)
    >>> lemma2_condition(c)   # constant up-boost only: s = (0.1, 0.1, 0.1, 0)
    True
    >>> lemma2_condition(c.__class__.birth_death(lv, np.sqrt(lv), up0=0.2, down0=0.2,
    ...                  up1=0.3, down1=0.1, fetch_cost=1.0))  # a down-boost: s_0 < s_1
    False
    """
    r = content.levels
    gens = np.minimum.outer(r, r[1:])  # column j-1: min(r, r_j)
    f = (content.P1 - content.P0) @ gens
    return bool(np.all(np.diff(f, axis=0) <= _CONDITION_TOL))


def boost_sums(content: CachingContent) -> np.ndarray:
    r"""The caching boost :math:`s_k = (p^1_k - p^0_k) + (q^0_k - q^1_k)` of a birth-death
    content at each level (``p`` up, ``q`` down; ``q_1 = 0`` at the bottom, ``p_K = 0`` at the
    top, Fig. 1).

    For :math:`V` concave non-decreasing with increments :math:`\Delta_k = V(k+1) - V(k)`,
    :math:`[(P_1 - P_0)V](k) = (p^1_k - p^0_k)\Delta_k + (q^0_k - q^1_k)\Delta_{k-1}`, and over
    the extreme rays of the cone one finds: under Assumption 1, :func:`lemma2_condition` holds
    iff ``s`` is non-increasing in ``k``. With constant probabilities ``s`` is
    :math:`(b_u, b_u + b_d, \dots, b_u + b_d, b_d)`: the condition holds iff the down-boost
    :math:`b_d = q^0 - q^1` is zero (the bottom level, which cannot move down, has no
    down-boost).

    Raises
    ------
    ValueError
        If a chain is not birth-death.
    """
    K = content.n_levels
    for name, P in (("P0", content.P0), ("P1", content.P1)):
        off = np.abs(np.triu(P, 2)).sum() + np.abs(np.tril(P, -2)).sum()
        if off > 0:
            raise ValueError(f"{name} must be a birth-death chain (Fig. 1), got mass {off:g} "
                             "off the three central diagonals")
    up = [np.append(np.diag(P, 1), 0.0) for P in (content.P0, content.P1)]
    down = [np.insert(np.diag(P, -1), 0, 0.0) for P in (content.P0, content.P1)]
    return (up[1] - up[0]) + (down[0] - down[1])[:K]


def chain_probabilities(content: CachingContent) -> np.ndarray:
    """``(up0, down0, up1, down1)`` of a birth-death content at each level, shape (4, K):
    ``up = P_a(k, k+1)`` (0 at the top), ``down = P_a(k, k-1)`` (0 at the bottom)."""
    up = [np.append(np.diag(P, 1), 0.0) for P in (content.P0, content.P1)]
    down = [np.insert(np.diag(P, -1), 0, 0.0) for P in (content.P0, content.P1)]
    return np.array([up[0], down[0], up[1], down[1]])


def random_lemma2_content(n_levels: int, *, rng) -> CachingContent:
    r"""A random birth-death content with level-dependent probabilities (our extension of
    Fig. 1) satisfying Assumption 1 and :func:`lemma2_condition` by construction.

    ``up0``, ``down0`` uniform in [0, 0.5) per level; the boost sums ``s_k``
    (:func:`boost_sums`) drawn uniform, sorted non-increasing, capped by what each level
    allows and made non-increasing again; each ``s_k`` split at random into an up-boost and a
    down-boost within the room of the level (``up1 <= 0.5``, ``down1 >= 0``). Missing cost
    concave non-decreasing and fetch cost uniform in [0, 10), as
    :func:`whittle_lib.models.caching.random_content`. Assumption 3 and stochastic monotonicity are
    not built in: filter with :func:`whittle_lib.models.caching.check_assumptions`.

    ``n_levels`` (``K >= 2``) levels ``0, ..., K-1``; ``rng`` (keyword-only) a generator or a
    seed. Returns a :class:`~whittle_lib.models.caching.CachingContent`.
    """
    K = int(n_levels)
    if K != n_levels or K < 2:
        raise ValueError(f"n_levels must be an integer >= 2, got {n_levels!r}")
    rng = np.random.default_rng(rng)
    d = 10.0 * rng.random()
    up0 = 0.5 * rng.random(K)
    down0 = 0.5 * rng.random(K)
    up0[-1], down0[0] = 0.0, 0.0
    room_up = np.append(0.5 - up0[:-1], 0.0)          # no up-boost at the top
    room_down = down0.copy()                          # none at the bottom (down0[0] = 0)
    s = np.sort(rng.random(K))[::-1] * 0.5
    s = np.minimum.accumulate(np.minimum(s, room_up + room_down))
    lo = np.maximum(0.0, s - room_down)               # up-boost bounds given s
    hi = np.minimum(s, room_up)
    bu = lo + (hi - lo) * rng.random(K)
    bd = s - bu
    slopes = np.sort(rng.random(K - 1))[::-1] * 3.0
    cost = np.concatenate([[0.0], np.cumsum(slopes)])
    levels = np.arange(K, dtype=float)
    return CachingContent.birth_death(levels, cost, up0=up0, down0=down0, up1=up0 + bu,
                                      down1=np.maximum(down0 - bd, 0.0), fetch_cost=d)


#: The readings of the paper's assumptions printed for the base content (Sec. 2):
#: (field of :class:`~whittle_lib.models.caching.AssumptionReport` or ``"lemma2"``, label).
ASSUMPTION_READINGS = (("assumption1", "Assumption 1: P1(k, .) dominates P0(k, .)"),
                       ("monotone_chains", "  and both chains stochastically monotone"),
                       ("assumption2", "Assumption 2: C non-decreasing and concave"),
                       ("assumption3", "Assumption 3: P0 C and P1 C concave"),
                       ("lemma2", "Lemma 2's step: (P1 - P0)V non-increasing"),
                       ("preserves_concavity", "stronger: P0, P1 preserve concavity"))


def assumption_readings(content: CachingContent) -> dict:
    """``{label: holds}`` for every reading of :data:`ASSUMPTION_READINGS` on ``content``."""
    rep = check_assumptions(content)
    return {label: bool(lemma2_condition(content) if field == "lemma2" else getattr(rep, field))
            for field, label in ASSUMPTION_READINGS}


#: The note of the row "assumption 3 holds" for the linear missing cost (Sec. 2 model).
LINEAR_COST_NOTE = ("ours: the linear missing cost violates Assumption 3 (our reading) at the "
                    "bottom level, as argued in Sec. 1 of the notebook")


def model_note(cost_scale: float) -> str:
    r"""The note of the row "assumptions 1-3 hold" of our model (Sec. 2): the missing cost
    :math:`a\sqrt r` (``a = cost_scale``) and the chains are ours, the paper's values lost."""
    return (f"ours: levels r = 0..K-1, C(r) = {cost_scale:g} sqrt(r), birth-death chains (up0, "
            "down0, up1, down1); the paper's values were lost")
