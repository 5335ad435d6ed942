r"""The notebook's instances: its profile of constants, contents from chains, and the quiet
forms of the engine's calls that every part of the record uses.

Every chain is ``(up0, down0, up1, down1)`` of Fig. 1 of [PS23]_; every value of
:class:`Profile` is ours (the paper's numbers were lost in extraction).

The references ([PS23]_, [P94]_) are those of the package's docstring.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from whittle_lib.indices import is_indexable, is_indexable_many, whittle_indices
from whittle_lib.models.caching import CachingContent, CachingProblem, theorem51_bound

__all__ = ["TIE_RTOL", "chain_content", "joint_contents", "Profile", "PROFILES",
           "quietly_indexable", "quietly_indexable_many", "quiet_whittle_indices"]


#: Relative accuracy of the engine's indices: it counts two subsidies closer than
#: ``1e-9 * (s + |lam|)`` as equal (``whittle_lib.indices._SUBSIDY_TOL``).
TIE_RTOL = 1e-9


def chain_content(chain, fetch_cost: float, levels, missing_cost) -> CachingContent:
    """The birth-death content (Fig. 1) of ``chain = (up0, down0, up1, down1)``.

    Examples
    --------
    >>> lv = np.arange(3.0)
    >>> chain_content((0.2, 0.2, 0.3, 0.1), 1.0, lv, np.sqrt(lv)).P1[0].tolist()
    [0.7, 0.3, 0.0]
    """
    up0, down0, up1, down1 = chain
    return CachingContent.birth_death(levels, missing_cost, up0=up0, down0=down0, up1=up1,
                                      down1=down1, fetch_cost=fetch_cost)


def joint_contents(weights, chains, levels, *, fetch_cost: float,
                   exponent: float | None = None) -> list:
    r"""The contents of the joint problem (Figs. 5-6): content ``n`` has the chain
    ``chains[n]`` and the missing cost :math:`w_n \sqrt r` (``exponent=None``, Assumptions
    1-3 hold) or :math:`w_n r^e` (Sec. 4: Assumption 3 may fail).

    Raises
    ------
    ValueError
        If ``weights`` and ``chains`` differ in length.
    """
    if len(weights) != len(chains):
        raise ValueError(f"weights and chains must have one value per content, got lengths "
                         f"{len(weights)} and {len(chains)}")
    lv = np.asarray(levels, dtype=float)
    return [chain_content(ch, fetch_cost, lv, w * np.sqrt(lv) if exponent is None
                          else w * lv ** exponent) for w, ch in zip(weights, chains)]


@dataclass(frozen=True)
class Profile:
    """The detailed settings of the notebook that its parameters cell selects by name
    (``profile``): every chain is ``(up0, down0, up1, down1)`` of Fig. 1, every value ours
    (the paper's numbers did not survive extraction).

    Attributes
    ----------
    base_chain : tuple
        Chain of Figs. 2-3: caching raises popularity (Assumption 1).
    rise_chain, fall_chain : tuple
        Fig. 4: up > down (case 1) and up < down (case 2), cached or not.
    alt_chain : tuple
        A fourth chain of the Figs. 2-3 sweep (fewer down-moves).
    fetch_costs_fig2 : tuple of float
        The two caching costs d of Fig. 2.
    discounts_fig3 : tuple of float
        The two discount factors beta of Fig. 3.
    fetch_cost_fig3 : float
        Caching cost d of Figs. 3, 4 and 7.
    sweep_cost_scales, sweep_fetch_costs, sweep_discounts : tuple of float
        Cost scales a of C(r) = a sqrt(r), fetch costs d and discounts beta of the Figs. 2-3
        sweep (Fig. 2: every pair of d; Fig. 3: every pair of beta).
    grid_discounts : tuple of float
        beta of the grid checks of Theorems 3.1 and 3.2.
    joint_levels : int
        K of the joint problem (Figs. 5-6).
    joint_weights : tuple of float
        Cost weight w_n of each content (Figs. 5-6).
    joint_chains : tuple of tuple
        The chain of each content (Figs. 5-6).
    joint_capacity : int
        Cache size M (Figs. 5-6).
    joint_fetch_cost : float
        Caching cost d of Figs. 5-6.
    fig7_chain : tuple
        Chain of Fig. 7: eps of 0.2 > (1 - 0.9)/0.9.
    cost_exponents_sec4 : tuple of float
        Exponents e of C_n(r) = w_n r^e tried in Sec. 4.
    noncompliant_exponent : float
        The Fig. 6 instance: C_n(r) = w_n r^e.
    sec4_first_level : float
        r_1 of the third reading of Sec. 4 (levels r_1, r_1 + 1, ...).
    """

    base_chain: tuple = (0.2, 0.2, 0.3, 0.1)
    rise_chain: tuple = (0.3, 0.1, 0.4, 0.05)
    fall_chain: tuple = (0.1, 0.3, 0.15, 0.25)
    alt_chain: tuple = (0.2, 0.1, 0.3, 0.05)
    fetch_costs_fig2: tuple = (1.0, 3.0)
    discounts_fig3: tuple = (0.5, 0.9)
    fetch_cost_fig3: float = 1.0
    sweep_cost_scales: tuple = (1.0, 1.5, 2.0, 3.0)
    sweep_fetch_costs: tuple = (0.5, 1.0, 3.0, 5.0)
    sweep_discounts: tuple = (0.5, 0.7, 0.9, 0.99)
    grid_discounts: tuple = (0.5, 0.9, 0.99)
    joint_levels: int = 5
    joint_weights: tuple = (2.0, 3.0, 2.0, 4.0)
    joint_chains: tuple = ((0.2, 0.2, 0.3, 0.1), (0.1, 0.3, 0.2, 0.2), (0.3, 0.1, 0.35, 0.05),
                           (0.1, 0.2, 0.2, 0.1))
    joint_capacity: int = 2
    joint_fetch_cost: float = 4.0
    fig7_chain: tuple = (0.1, 0.3, 0.3, 0.1)
    cost_exponents_sec4: tuple = (1.0, 0.9, 0.8)
    noncompliant_exponent: float = 0.8
    sec4_first_level: float = 1.0

    def __post_init__(self) -> None:
        """Check what the notebook's parameter rules cannot: the two values of each figure's
        pair, one chain per content, and chains, costs and discounts the model accepts.

        Raises
        ------
        ValueError
            Naming the setting.
        """
        for name in ("fetch_costs_fig2", "discounts_fig3"):
            if len(getattr(self, name)) != 2:
                raise ValueError(f"{name} must hold two values (the two curves of its figure), "
                                 f"got {getattr(self, name)}")
        jl = np.arange(self.joint_levels, dtype=float)
        CachingProblem(joint_contents(self.joint_weights, self.joint_chains, jl,
                                      fetch_cost=self.joint_fetch_cost),
                       self.joint_capacity, self.discounts_fig3[-1])
        three = np.arange(3.0)                           # a bottom, an inner, a top level
        for name in ("base_chain", "rise_chain", "fall_chain", "alt_chain", "fig7_chain"):
            for d in (*self.fetch_costs_fig2, *self.sweep_fetch_costs, self.fetch_cost_fig3):
                try:
                    chain_content(getattr(self, name), d, three, three)
                except ValueError as err:
                    raise ValueError(f"{name}: {err}") from None
        for b in (*self.discounts_fig3, *self.grid_discounts, *self.sweep_discounts):
            theorem51_bound(b)


#: The notebook's profiles by name: ``"default"`` is what its stored outputs and
#: ``data/results/04_caching_rmab.csv`` were computed with.
PROFILES = {"default": Profile()}


def quietly_indexable(content: CachingContent, discount: float) -> bool:
    """The engine's exact indexability test (:func:`whittle_lib.indices.is_indexable`) of the
    arm of ``content``, its warnings about non-indexable arms silenced (the verdict is the
    result)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return bool(is_indexable(content.arm(), discount=discount))


def _arm_arrays(P0, P1, expected_cost, fetch_cost, holding_cost):
    """``(P0, P1, R0, R1)`` of :meth:`CachingContent.arm` for stacked chains ``P0, P1`` of
    shape (k, K, K), ``expected_cost`` ``(P0 C)`` of shape (k, K) and costs of shape (k,):
    the same numbers as ``arm()`` (copies and negations only)."""
    k, K = expected_cost.shape
    A0, A1 = np.zeros((k, 2 * K, 2 * K)), np.zeros((k, 2 * K, 2 * K))
    A0[:, :K, :K] = A0[:, K:, :K] = P0
    A1[:, :K, K:] = A1[:, K:, K:] = P1
    R0 = -np.tile(expected_cost, 2)
    fetch = np.broadcast_to(np.asarray(fetch_cost, dtype=float)[:, None], (k, K))
    R1 = -np.concatenate([fetch, np.zeros((k, K))], axis=1)
    R1 -= np.asarray(holding_cost, dtype=float)[:, None]
    return A0, A1, R0, R1


def quietly_indexable_many(contents, discount: float) -> np.ndarray:
    """:func:`quietly_indexable` of every content of ``contents`` (all with the same number of
    levels), by :func:`whittle_lib.indices.is_indexable_many` on their stacked arms."""
    contents = list(contents)
    if not contents:
        return np.zeros(0, dtype=bool)
    arrays = _arm_arrays(np.stack([c.P0 for c in contents]), np.stack([c.P1 for c in contents]),
                         np.stack([c.expected_missing_cost for c in contents]),
                         [c.fetch_cost for c in contents], [c.holding_cost for c in contents])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return is_indexable_many(*arrays, discount=discount)


def quiet_whittle_indices(content: CachingContent, discount: float):
    """:func:`whittle_lib.indices.whittle_indices` of the arm of ``content``, its warnings
    about non-indexable arms silenced (``indexable`` and the violating state are fields of
    the result)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return whittle_indices(content.arm(), discount=discount)
