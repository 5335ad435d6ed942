"""Section 3 of the robots draft, the dynamic problem: the transition law (19)-(21) as printed,
Lemma 4 and the multichain example, Proposition 3, eq. (25), and the switching-curve conjecture,
each with the evidence of its verdict and the claim as the results file words it.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from whittle_lib import mdp as _mdp
from whittle_lib.models import robots as _q
from .paper import rounding_bound as _rounding_bound
from .paper import state_tuple as _state_tuple
from .paper import with_verdicts as _with_verdicts

__all__ = ["EQ19", "EQ20", "LEMMA4", "MULTICHAIN_EXAMPLE", "PROPOSITION3", "EQ21", "EQ25",
           "EQ25_EVIDENCE", "CONJECTURE", "F00", "check_transition_law", "eq19_evidence",
           "eq20_evidence", "check_mdp_structure", "lemma4_readings", "multichain_example_evidence",
           "proposition3_evidence", "eq21_evidence", "check_conjecture", "conjecture_evidence",
           "f00_evidence"]

#: The claims of Section 3 of [TLNC99]_ as the results file words them.
EQ19 = "rows of (19) as printed sum to one"
EQ20 = "(20) as printed stays in the state space X"
LEMMA4 = "the MDP is communicating"
MULTICHAIN_EXAMPLE = ("two recurrent classes (levels r=1 and r=2) and transient states: "
                      "the MDP is multichain")
PROPOSITION3 = "the optimal average cost is a constant theta"
EQ21 = "(21) as printed is a transition law on X"
EQ25 = "S_pi and L_pi are the time-average starvation probability and loss rate"

#: The evidence on eq. (25) (:func:`eq25_gaps`); its gaps are rounding, recorded as a bound.
EQ25_EVIDENCE = ("For the optimal and the static policy of each of Figs. 6-8, pi(q=0) and nu "
                 "pi(q=K,s=1) of the uniformised chain equal P(Q=0) and lambda E[R 1(Q=K)] of the "
                 "continuous-time chain within 1e-10 (rounding: the exact gaps depend on the CPU).")


#: ``(K, N)`` of the instances on which Lemma 4 is checked, besides those of Figs. 6-8.
LEMMA4_INSTANCES = tuple((K, N) for K in (2, 3, 5, 10) for N in (1, 2, 5, 10, 20))

#: ``(lam, K, gamma, N)`` of the instances on which Proposition 3 is checked, besides those of
#: Figs. 6-8.
PROPOSITION3_INSTANCES = tuple((lam, K, g, N) for lam in (0.1, 0.5) for K in (2, 5)
                               for g in (0.4, 1.4, 5.0) for N in (1, 2, 5, 10))

#: ``(lam, K, gamma, N)`` of the grid on which the switching-curve conjecture is checked.
CONJECTURE_INSTANCES = tuple(itertools.product((0.05, 0.1, 0.2, 0.5), (2, 3, 5, 10),
                                               (0.2, 0.4, 1.0, 1.4, 2.4, 5.0), (1, 2, 5, 10, 20)))

#: The switching-curve conjecture of Section 3 and its remark (:func:`check_conjecture`).
CONJECTURE = "the optimal policy is a monotone switching curve (conjecture)"
F00 = "f_0(0) >= 1 on the switching curves"


def eq19_printed_row_sums(lam: float, mu: float, N: int) -> np.ndarray:
    """Row sums of eq. (19) as printed, after a departure with ``q > 1``, for ``r = 1 .. N``:
    ``mu/nu + lam r/nu + (1 - (mu - lam r)/nu) = 1 + 2 lam r / nu`` (the sign error)."""
    nu = lam * N + mu
    r = np.arange(1, N + 1)
    return mu / nu + lam * r / nu + (1 - (mu - lam * r) / nu)


@dataclass(frozen=True)
class TransitionLawCheck:
    """The transition law (19)-(20) as printed (:func:`check_transition_law`).

    Attributes
    ----------
    K, N : int
        The buffer and the pool.
    printed_row_sums : ndarray
        Row sums of (19) as printed after a departure, ``r = 1 .. N``
        (:func:`eq19_printed_row_sums`).
    queue_after_arrival_printed : int
        The next queue length that (20) as printed gives from ``q = K``: ``min(K + 1, N)``.
    """

    K: int
    N: int
    printed_row_sums: np.ndarray
    queue_after_arrival_printed: int

    def report(self, cmp=None) -> str:
        """The two checks as the notebook prints them; with ``cmp``, the verdicts
        the notebook recorded there."""
        K, N, q = self.K, self.N, self.queue_after_arrival_printed
        text = (f"row sums of (19) as printed: {self.printed_row_sums[0]:.4f} for r = 1 up to "
                f"{self.printed_row_sums[-1]:.4f} for r = N = {N}\n"
                f"(20) as printed from q = K = {K} with N = {N}: next queue length {q} "
                + ("> K" if q > K else "<= K"))
        return _with_verdicts(text, cmp, ("Eq. (19)", EQ19), ("Eq. (20)", EQ20))


def check_transition_law(lam: float, mu: float, K: int, N: int) -> TransitionLawCheck:
    """Eqs. (19) and (20) of [TLNC99]_ as printed: the row sums of (19) after a departure
    (:func:`eq19_printed_row_sums`) and the queue that (20) gives after an arrival at ``q = K``.

    Examples
    --------
    >>> law = check_transition_law(0.1, 1.0, 5, 16)
    >>> law.queue_after_arrival_printed, round(float(law.printed_row_sums[-1]), 4)
    (6, 2.2308)
    """
    return TransitionLawCheck(K=K, N=N, printed_row_sums=eq19_printed_row_sums(lam, mu, N),
                              queue_after_arrival_printed=min(K + 1, N))


def eq19_evidence(law: TransitionLawCheck) -> str:
    """The evidence on eq. (19) of [TLNC99]_ as printed (:func:`check_transition_law`)."""
    N, sums = law.N, law.printed_row_sums
    return (f"As printed the rows sum to 1 + 2 lambda r/nu (= {sums[-1]:.4f} for r = N = {N}); "
            "the corrected law writes the third probability as 1 - (mu 1(q>1) + lambda "
            f"min(r+a,N))/nu. Searched: the formula as printed (1 reading), on the {sums.size} "
            f"values r = 1..{N} of the Figs. 6-8 instance: each row sum is off 1 by at least "
            f"{sums.min() - 1:.4f}, so any r >= 1 shows the error (only r = 0 would not).")


def eq20_evidence(law: TransitionLawCheck) -> str:
    """The evidence on eq. (20) of [TLNC99]_ as printed (:func:`check_transition_law`)."""
    K, N, q = law.K, law.N, law.queue_after_arrival_printed
    return (f"min{{q+1,N}} from q = K = {K} with N = {N} gives q = {q} > K, outside X; "
            f"min{{q+1,K}} (the first two lines) is meant. Searched: the formula as printed (1 "
            "reading), on the Figs. 6-8 instance; every instance with N > K leaves X the same "
            "way from q = K, while N <= K stays in X but caps the queue at N.")


def paper_multichain_example_classes(lam: float, mu: float, gamma: float, K: int
                                     ) -> list[np.ndarray]:
    """Recurrent classes of the policy of the Section 3 example (``N = 2``).

    "Any stationary policy that selects action 1 in states ``(., r, 1)`` for ``r in {1, 2}``
    and in state ``(1, 0, 0)``, and action 0 otherwise": the paper says it has two recurrent
    classes (levels ``r = 1`` and ``r = 2``) and transient states at ``r = 0``.

    Returns
    -------
    list of ndarray
        The recurrent classes (positions in the state space of ``robots_mdp(..., N=2)``).
    """
    model, space = _q.robots_mdp(lam, mu, gamma, K, 2)
    policy = np.where((space.s == _q.ARRIVAL) & (space.r >= 1), 1, 0)
    policy[space.state(1, 0, _q.DEPARTURE)] = 1
    return _mdp.recurrent_classes(_mdp.policy_transition_matrix(model, policy))


def gain_spread(lam: float, mu: float, gamma: float, K: int, N: int) -> float:
    """``max_x W*(x) - min_x W*(x)`` of the optimal gain (Proposition 3 says it is zero).

    The gain is computed state by state by multichain policy iteration ([P94]_, Alg. 9.2.1),
    which does not assume a constant gain.
    """
    model, space = _q.robots_mdp(lam, mu, gamma, K, N)
    sol = _mdp.policy_iteration(model, policy0=_q.static_policy(space))
    g = -np.asarray(sol.gain_by_state, dtype=float)
    return float(g.max() - g.min())


@dataclass(frozen=True)
class Lemma4Check:
    """Lemma 4 on a grid of instances (:func:`check_lemma4`).

    Attributes
    ----------
    communicating : bool
        One communicating class on every instance (Lemma 4 on the state space as printed).
    communicating_without_entry_free : bool
        On every instance, besides one class, exactly the ``K`` singletons ``(q, N, 2)``,
        ``q >= 1``, that no transition enters.
    n_classes, largest, outside : dict keyed by (K, N)
        Number of classes, size of the largest, and the states outside it.
    """

    communicating: bool
    communicating_without_entry_free: bool
    n_classes: dict
    largest: dict
    outside: dict


def check_lemma4(lam: float, mu: float, gamma: float, instances) -> Lemma4Check:
    """Lemma 4 of [TLNC99]_ ("the MDP is communicating") on each ``(K, N)`` of ``instances``,
    by the communicating classes of the accessibility graph
    (:func:`whittle_lib.mdp.communicating_classes`; [P94]_, Sec. 8.3.1).

    Examples
    --------
    ``K = 2``, ``N = 1``: besides one class, the two states ``(q, N, 2)``, ``q >= 1``, which no
    transition enters.

    >>> check = check_lemma4(0.1, 1.0, 1.4, [(2, 1)])
    >>> check.communicating, check.communicating_without_entry_free, check.outside[(2, 1)]
    (False, True, [(1, 1, 2), (2, 1, 2)])
    """
    literal = trimmed = True
    n_classes, largest, outside = {}, {}, {}
    for K, N in instances:
        model, space = _q.robots_mdp(lam, mu, gamma, K, N)
        comps = _mdp.communicating_classes(model)
        out = sorted(_state_tuple(space, c[0]) for c in comps[1:])
        literal &= len(comps) == 1
        trimmed &= (all(c.size == 1 for c in comps[1:])
                    and out == [(q, N, 2) for q in range(1, K + 1)])
        n_classes[(K, N)], largest[(K, N)], outside[(K, N)] = len(comps), int(comps[0].size), out
    return Lemma4Check(communicating=bool(literal), communicating_without_entry_free=bool(trimmed),
                       n_classes=n_classes, largest=largest, outside=outside)


@dataclass(frozen=True)
class MultichainExample:
    """The example policy of Section 3 (:func:`multichain_example`).

    Attributes
    ----------
    n_classes : int
        Its recurrent classes.
    levels : list of list of int
        The levels ``r`` of each class, sorted.
    transient_at_level_2 : list of tuple
        The states ``(q, 2, s)`` in no recurrent class.
    """

    n_classes: int
    levels: list
    transient_at_level_2: list


def multichain_example(lam: float, mu: float, gamma: float, K: int) -> MultichainExample:
    """The recurrent structure of the Section 3 example (:func:`paper_multichain_example_classes`,
    ``N = 2``): the paper says two recurrent classes, at levels ``r = 1`` and ``r = 2``."""
    classes = paper_multichain_example_classes(lam, mu, gamma, K)
    _, space = _q.robots_mdp(lam, mu, gamma, K, 2)
    levels = sorted(sorted(set(space.r[c].tolist())) for c in classes)
    in_class = np.zeros(space.n_states, dtype=bool)
    for c in classes:
        in_class[c] = True
    transient = sorted(_state_tuple(space, i)
                       for i in np.flatnonzero(~in_class & (space.r == 2)))
    return MultichainExample(n_classes=len(classes), levels=levels, transient_at_level_2=transient)


@dataclass(frozen=True)
class Eq21Check:
    """Eq. (21) as printed against the model's rows at fictitious epochs (:func:`check_eq21`).

    Attributes
    ----------
    n_rows : int
        Fictitious states compared.
    max_deviation : float
        Largest difference between (21) as printed and the model's rows.
    rows_sum_to_one : bool
        Whether the printed rows sum to one.
    """

    n_rows: int
    max_deviation: float
    rows_sum_to_one: bool


def check_eq21(lam: float, mu: float, gamma: float, K: int, N: int) -> Eq21Check:
    """Eq. (21) of [TLNC99]_ as printed: from a fictitious epoch ``(q, r, 2)`` the next epoch
    is a departure w.p. ``mu 1(q > 0)/nu``, an arrival w.p. ``lam r/nu``, fictitious otherwise,
    with ``q`` and ``r`` unchanged; compared with the rows of
    :func:`whittle_lib.models.robots.robots_mdp` under action 0."""
    model, space = _q.robots_mdp(lam, mu, gamma, K, N)
    nu = lam * N + mu
    fic = np.flatnonzero(space.s == 2)
    P0 = model.transitions[0].toarray()
    printed = np.zeros((fic.size, space.n_states))
    for row, i in enumerate(fic):
        q, r = int(space.q[i]), int(space.r[i])
        for s_next, p in ((0, mu * (q > 0) / nu), (1, lam * r / nu),
                          (2, 1 - (mu * (q > 0) + lam * r) / nu)):
            if p > 0:
                printed[row, space.state(q, r, s_next)] += p
    return Eq21Check(n_rows=int(fic.size), max_deviation=float(np.abs(printed - P0[fic]).max()),
                     rows_sum_to_one=bool(np.allclose(printed.sum(axis=1), 1)))


def eq25_gaps(lam: float, mu: float, gammas, K: int, N: int, optima=None) -> list[float]:
    """Eq. (25) for the optimal and the static policy at each ``gamma`` (in that order): the
    larger of the gaps between per-epoch and time averages
    (:func:`whittle_lib.models.robots.time_average_rates`). ``optima`` maps each ``gamma`` to
    its optimum (:func:`whittle_lib.models.robots.robots_dynamic_optimum`), if computed."""
    gaps = []
    for g in gammas:
        opt = optima[g] if optima is not None else _q.robots_dynamic_optimum(lam, mu, g, K, N)
        for policy in (opt.policy, _q.static_policy(opt.space)):
            rates = _q.time_average_rates(lam, mu, g, K, N, policy)
            gaps.append(max(abs(rates.starvation_epochs - rates.starvation_time),
                            abs(rates.loss_epochs - rates.loss_time)))
    return gaps


@dataclass(frozen=True)
class MDPStructureCheck:
    """Lemma 4, the multichain example, Proposition 3, eqs. (21) and (25) of [TLNC99]_ on the
    instances of Figs. 6-8 and small grids (:func:`check_mdp_structure`).

    Attributes
    ----------
    K, N : int
        The buffer and the pool of Figs. 6-8.
    lemma4_instances : tuple of (int, int)
        ``(K, N)`` of Lemma 4's check: :data:`LEMMA4_INSTANCES` and Figs. 6-8.
    lemma4 : Lemma4Check
    example : MultichainExample
        The Section 3 example (``N = 2``) at the buffer ``K``.
    proposition3_instances : int
        Instances of Proposition 3's check: :data:`PROPOSITION3_INSTANCES` and one per ``gamma``
        of Figs. 6-8.
    proposition3_spread : float
        The largest ``max_x W*(x) - min_x W*(x)`` over them (:func:`gain_spread`).
    eq21 : Eq21Check
    eq25_gaps : list of float
        :func:`eq25_gaps`, for the optimal and the static policy at each ``gamma``.
    """

    K: int
    N: int
    lemma4_instances: tuple
    lemma4: Lemma4Check
    example: MultichainExample
    proposition3_instances: int
    proposition3_spread: float
    eq21: Eq21Check
    eq25_gaps: list

    def report(self, cmp=None) -> str:
        """The checks as the notebook prints them; with ``cmp``, the verdicts
        the notebook recorded there."""
        kn, ex = (self.K, self.N), self.example
        text = (f"K = {self.K}, N = {self.N}: {self.lemma4.n_classes[kn]} communicating classes; "
                f"outside the largest ({self.lemma4.largest[kn]} states):\n  "
                f"{self.lemma4.outside[kn]}\nSec. 3 example: {ex.n_classes} recurrent classes, at "
                f"levels {ex.levels};\n  transient besides level 0: "
                f"{ex.transient_at_level_2}\nProposition 3: largest spread max_x W*(x) - min_x "
                f"W*(x) over {self.proposition3_instances} instances: "
                f"{_rounding_bound(self.proposition3_spread, 1e-9)}\neq. (25): largest gap between "
                f"per-epoch and time averages over {len(self.eq25_gaps)} policies: "
                f"{_rounding_bound(max(self.eq25_gaps), 1e-10)}")
        return _with_verdicts(text, cmp, ("Lemma 4", LEMMA4), ("Sec. 3 text", MULTICHAIN_EXAMPLE),
                              ("Proposition 3", PROPOSITION3), ("Eq. (21)", EQ21),
                              ("Eq. (25)", EQ25))


def check_mdp_structure(lam: float, mu: float, gammas, K: int, N: int, *,
                        lemma4_grid=LEMMA4_INSTANCES, proposition3_grid=PROPOSITION3_INSTANCES,
                        optima=None) -> MDPStructureCheck:
    """The structure of the MDP of Section 3 on the instances of Figs. 6-8 (``lam``, ``K``,
    ``N``, one ``gamma`` each; the first for the checks that do not depend on it) and on grids:
    Lemma 4 (:func:`check_lemma4`, also on each ``(K, N)`` of ``lemma4_grid``), the multichain
    example (:func:`multichain_example`), Proposition 3 (:func:`gain_spread`, also on each
    ``(lam, K, gamma, N)`` of ``proposition3_grid``), eq. (21) (:func:`check_eq21`) and
    eq. (25) (:func:`eq25_gaps`, with the ``optima`` of each ``gamma`` if given)."""
    gammas = tuple(gammas)
    lemma4_instances = tuple(lemma4_grid) + ((K, N),)
    prop3 = tuple(proposition3_grid) + tuple((lam, K, g, N) for g in gammas)
    spread = max(gain_spread(l_, mu, g_, K_, N_) for l_, K_, g_, N_ in prop3)
    return MDPStructureCheck(
        K=K, N=N, lemma4_instances=lemma4_instances,
        lemma4=check_lemma4(lam, mu, gammas[0], lemma4_instances),
        example=multichain_example(lam, mu, gammas[0], K),
        proposition3_instances=len(prop3), proposition3_spread=spread,
        eq21=check_eq21(lam, mu, gammas[0], K, N),
        eq25_gaps=eq25_gaps(lam, mu, gammas, K, N, optima))


def lemma4_readings(structure: MDPStructureCheck) -> tuple[dict, str]:
    """Lemma 4 of [TLNC99]_ under two readings of the state space ``X``
    (:func:`check_mdp_structure`): the verdicts and the evidence."""
    lemma4, n = structure.lemma4, len(structure.lemma4_instances)
    verdicts = {"on X as printed": lemma4.communicating,
                "on X without the K states (q,N,2), q>=1, that no transition enters":
                    lemma4.communicating_without_entry_free}
    evidence = (
        "Strong components of the graph x -> y if p_xy(a) > 0 for some allowed a, on "
        f"{n} instances: besides one class, exactly the K singletons "
        "(q,N,2), q>=1 (fictitious probability 1-(mu+lambda N)/nu = 0 there, so proof step (1) "
        "fails at level N). The MDP is weakly communicating, which suffices for Prop. 3. "
        f"Searched: 2 readings of X on {n} instances; the components "
        "come from an exact graph search (no tolerance), so every pair of states that no "
        "policy connects is found.")
    return verdicts, evidence


def multichain_example_evidence(structure: MDPStructureCheck) -> str:
    """The evidence on the example policy of Section 3 (:func:`multichain_example`)."""
    example = structure.example
    return (f"Recurrent classes of the example policy (K = {structure.K}): {example.n_classes}, "
            f"at levels {example.levels}. The level-2 class misses the states "
            f"{example.transient_at_level_2}, transient like level 0 (Lemma 4 above).")


def proposition3_evidence(structure: MDPStructureCheck) -> str:
    """The evidence on Proposition 3 (:func:`gain_spread`); the spread is rounding, recorded as
    a bound."""
    return ("Multichain policy iteration (no constant gain assumed) on "
            f"{structure.proposition3_instances} instances: max_x W*(x) - min_x W*(x) below 1e-9 "
            "on every instance (rounding: its exact size depends on the CPU).")


def eq21_evidence(structure: MDPStructureCheck) -> str:
    """The evidence on eq. (21) as printed (:func:`check_eq21`)."""
    return (f"On the Figs. 6-8 instance the {structure.eq21.n_rows} rows of (21) as printed sum "
            "to one and equal the model's rows (largest difference below 1e-12, rounding); (21) "
            "needs no correction, unlike (19) and (20).")


@dataclass(frozen=True)
class ConjectureCheck:
    """The switching-curve conjecture of Section 3 on a grid (:func:`check_conjecture`).

    Attributes
    ----------
    n_instances, n_switching, n_monotone : int
        Instances, and those whose optimal policy is a switching curve, a monotone one.
    f00_min, f00_max : float
        The range of the departure threshold ``f_0(0)`` over the curves.
    """

    n_instances: int
    n_switching: int
    n_monotone: int
    f00_min: float
    f00_max: float

    def report(self, cmp=None) -> str:
        """The counts as the notebook prints them; with ``cmp``, the verdicts
        the notebook recorded there."""
        return _with_verdicts(
            f"{self.n_instances} instances: switching curve in {self.n_switching}, monotone "
            f"switching curve in {self.n_monotone}\nf_0(0) on the {self.n_instances} curves: "
            f"from {self.f00_min:g} to {self.f00_max:g}",
            cmp, ("Sec. 3 text", CONJECTURE), ("Sec. 3 text", F00))


def check_conjecture(mu: float, instances=CONJECTURE_INSTANCES) -> ConjectureCheck:
    """Is the optimal policy a monotone switching curve (the conjecture of Section 3 of
    [TLNC99]_) on each ``(lam, K, gamma, N)`` of ``instances``
    (:func:`whittle_lib.models.robots.switching_curves`; ties within ``1e-9`` go either way)?

    Examples
    --------
    >>> check_conjecture(1.0, [(0.1, 2, 1.4, 2)]).n_monotone
    1
    """
    curves = [_q.switching_curves(lam, mu, g, K, N) for lam, K, g, N in instances]
    f00 = [c.thresholds[0, 0] for c in curves]
    return ConjectureCheck(n_instances=len(curves),
                           n_switching=sum(c.is_switching_curve for c in curves),
                           n_monotone=sum(c.is_monotone for c in curves),
                           f00_min=float(np.nanmin(f00)), f00_max=float(np.nanmax(f00)))


def conjecture_evidence(conjecture: ConjectureCheck) -> str:
    """The evidence on the switching-curve conjecture (:func:`check_conjecture`)."""
    n, c = conjecture.n_instances, conjecture
    return (f"Holds on all {c.n_monotone} of {n} instances: lambda in {{0.05,0.1,0.2,0.5}}, K in "
            f"{{2,3,5,10}}, gamma in {{0.2,0.4,1,1.4,2.4,5}}, N in {{1,2,5,10,20}}, mu = 1 "
            "(exact optimum by policy iteration; ties within 1e-9 may go either way).")


def f00_evidence(conjecture: ConjectureCheck) -> str:
    """The evidence on the remark "we must also have ``f_0(0) >= 1`` so that
    ``pi*(1,0,0) = 1`` as required" (:func:`check_conjecture`)."""
    return (f"The departure threshold at r = 0 is at least 1 on all {conjecture.n_instances} "
            f"instances (min {conjecture.f00_min:g}): the forced action 1 at (1,0,0) makes it so, "
            "and it agrees with the optimal actions elsewhere.")
