"""Proposition 4 of the robots draft as the paper ran it: relative value iteration from many
reference states at once, under both readings of its stopping rule and two initial values, and
the search for one reading that gives every iteration count the draft prints.

The draft gives neither the reference state ``x_hat`` nor ``h_0``, and its stopping rule
"max_x |(h_{k+1}(x) - h_k(x)) / h_k(x)| < 1e-5" divides by ``h_k(x_hat) = 0``. One batched run
of :func:`whittle_lib.mdp.relative_value_iteration_many` watches both readings of the rule on
the same iterates (:class:`ReadingsRule`, a callable stopping rule of the library).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from whittle_lib import mdp as _mdp
from whittle_lib.models import robots as _q
from .paper import has_state as _has_state
from .paper import one_step_cost as _one_step_cost
from .paper import state_tuple as _state_tuple

__all__ = ["STOPPING_READINGS", "H0_READINGS", "ReadingsRule", "rvi_readings",
           "single_reading_search"]

#: The two readings of the stopping rule "max_x |(h_{k+1}(x) - h_k(x)) / h_k(x)| < 1e-5"
#: (Sec. 3; Sec. 4: "the relative error between two consecutive iterates was (uniformly) less
#: than 1e-5"), each with the name of its rule in :data:`whittle_lib.mdp.STOPPING_RULES`.
#: ``"pointwise"``: the ratio state by state, over ``x != x_hat`` (at ``x_hat`` both iterates
#: are 0); ``"norm"``: ``max_x |h_{k+1} - h_k| / max_x |h_k|``.
STOPPING_READINGS = {"pointwise": "relative", "norm": "norm"}


@dataclass(frozen=True)
class ReadingRun:
    """Relative value iteration from several reference states, stopped by one reading of the
    rule (:class:`ReadingsRule`): column ``j`` is the run from ``reference_states[j]``.

    Attributes
    ----------
    iterations : ndarray of int, shape (m,)
        The update ``k`` at which the reading first held (``max_iter`` if it never did).
    residual : ndarray, shape (m,)
        The reading's statistic then (its last value if it never held).
    bias : ndarray, shape (n, m)
        The iterates ``h_k`` at that update.
    reference_states : ndarray of int, shape (m,)
    model : FiniteMDP
    """

    iterations: np.ndarray
    residual: np.ndarray
    bias: np.ndarray
    reference_states: np.ndarray
    model: object

    @property
    def gain(self) -> np.ndarray:
        """``T h_k(x_hat)`` of each column (computed when asked: the sweeps need only the
        counts); the cost estimate is ``-gain`` (the model's rewards are ``-c``)."""
        return np.array([self.model.q_values(self.bias[:, j])[x].max()
                         for j, x in enumerate(self.reference_states)])


class ReadingsRule:
    """Several stopping rules watched on the iterates of one run of
    :func:`whittle_lib.mdp.relative_value_iteration_many`: its callable stopping rule.

    Each iteration the library calls the rule with the columns still running, in their order;
    this rule evaluates every reading on them, records for each the update ``k`` and the iterate
    ``h_new`` at which it first holds, and holds a column (a statistic of ``inf``) until every
    reading has held once (then ``0``). Each reading's result is thus the iterate at which it
    first held, exactly as in a run stopped by that reading alone (the same iterates, bit for
    bit), and the run goes on only as long as the slowest reading needs.

    Parameters
    ----------
    rules : sequence of callable
        The readings, each a stopping rule of :data:`whittle_lib.mdp.STOPPING_RULES`' form.
    tol : float
        The threshold of every reading (the run's ``tol`` too).
    n_states, n_columns : int
        The shape of the run's iterates.
    """

    def __init__(self, rules, tol: float, n_states: int, n_columns: int, max_iter: int):
        self.rules = tuple(rules)
        self.tol = tol
        self.k = 0
        self.active = np.arange(n_columns)
        shape = (len(self.rules), n_columns)
        self.iterations = np.full(shape, max_iter, dtype=np.int64)
        self.statistic = np.full(shape, np.inf)
        self.stopped = np.zeros(shape, dtype=bool)
        self.frozen = [None] * len(self.rules)      # rows (n_columns, n_states), when needed
        self.n_states = n_states

    def __call__(self, h_new, h, Th, refs):
        self.k += 1
        active = self.active
        stats = [np.asarray(rule(h_new, h, Th, refs), dtype=float).reshape(active.size)
                 for rule in self.rules]
        for i, stat in enumerate(stats):
            watching = ~self.stopped[i, active]
            self.statistic[i, active[watching]] = stat[watching]
            done = watching & (stat < self.tol)
            if done.any():
                self.iterations[i, active[done]] = self.k
                self.stopped[i, active[done]] = True
                if self.frozen[i] is None:
                    self.frozen[i] = np.zeros((self.stopped.shape[1], self.n_states))
                self.frozen[i][active[done]] = h_new.T[done]     # rows: the loop's layout
        still = ~self.stopped[:, active].all(axis=0)
        self.active = active[still]
        return np.where(still, np.inf, 0.0)

    def runs(self, model: _mdp.FiniteMDP, batch) -> list:
        """One :class:`ReadingRun` per reading, from the run's result ``batch`` (whose last
        iterates are those of the readings that never held)."""
        out = []
        for i in range(len(self.rules)):
            H = np.ascontiguousarray(batch.bias.T) if self.frozen[i] is None else self.frozen[i]
            H[~self.stopped[i]] = batch.bias.T[~self.stopped[i]]
            out.append(ReadingRun(iterations=self.iterations[i], residual=self.statistic[i],
                                  bias=np.ascontiguousarray(H.T),
                                  reference_states=batch.reference_states, model=model))
        return out


def rvi_readings(model: _mdp.FiniteMDP, reference_states, *, tau: float, tol: float,
                 h0: str = "zero") -> dict:
    """Proposition 4 of [TLNC99]_ from every state of ``reference_states`` at once, under both
    readings of the stopping rule, in one pass of
    :func:`whittle_lib.mdp.relative_value_iteration_many` watched by :class:`ReadingsRule`
    (``h_0 = 0``, or ``h_0 = c`` the one-step cost for ``h0="cost"``, each with
    ``h_0(x_hat) = 0``).

    Returns
    -------
    dict of str to ReadingRun
        For each reading of :data:`STOPPING_READINGS`, the run stopped by it; the cost
        estimate ``T(h)(x_hat)`` is ``-gain`` (the model's rewards are ``-c``).
    """
    if h0 not in ("zero", "cost"):
        raise ValueError(f"h0 must be 'zero' or 'cost', got {h0!r}")
    start = None if h0 == "zero" else _one_step_cost(model)
    refs = np.asarray(reference_states, dtype=np.int64)
    max_iter = 100_000
    watch = ReadingsRule([_mdp.STOPPING_RULES[rule] for rule in STOPPING_READINGS.values()],
                         tol, model.n_states, refs.size, max_iter)
    batch = _mdp.relative_value_iteration_many(model, refs, tau=tau, tol=tol, stopping=watch,
                                               h0=start, max_iter=max_iter)
    return dict(zip(STOPPING_READINGS, watch.runs(model, batch)))


#: The initial values ``h_0`` that :func:`single_reading_search` and Table 1's runs try
#: (the paper: "``h_0(x_hat) = 0`` but otherwise ``h_0`` is arbitrary"): ``"zero"`` and
#: ``"cost"`` (``h_0 = c``, the one-step cost, with ``h_0(x_hat) = 0``).
H0_READINGS = ("zero", "cost")


@dataclass(frozen=True)
class SingleReadingSearch:
    """Is there one reading of the paper's run that gives every printed iteration count?
    (:func:`single_reading_search`).

    A reading is a reference state ``x_hat`` (a state ``(q, r, s)`` of the first instance), an
    initial value ``h_0`` (:data:`H0_READINGS`), a reading of the stopping rule
    (:data:`STOPPING_READINGS`) and an offset ``d``: the printed count is ``k + d``, ``k`` the
    updates when the rule first holds, one ``d`` for every instance.

    Attributes
    ----------
    states : tuple of tuple
        The candidate ``x_hat``: every state of the first instance, in its order.
    full_counts : dict of (str, str) to ndarray of int, shape (n_full, n_states)
        For each ``(h0, rule)``, ``k`` from every candidate on each of the first ``n_full``
        instances (swept in full).
    alive : tuple of int
        After each instance, the readings that fit every printed count so far.
    survivors : tuple of (str, str, tuple, int)
        ``(h0, rule, x_hat, d)`` of the readings that fit every instance.
    """

    states: tuple
    full_counts: dict
    alive: tuple
    survivors: tuple

    @property
    def n_readings(self) -> int:
        """Readings tried: candidate states times initial values times stopping rules (each
        with whatever offset ``d`` its first count gives)."""
        return len(self.states) * len(H0_READINGS) * len(STOPPING_READINGS)


def single_reading_search(instances, *, tau: float, tol: float, n_full: int = 1
                          ) -> SingleReadingSearch:
    """Search every reading ``(x_hat, h_0, stopping rule, d)`` of relative value iteration
    (Proposition 4 of [TLNC99]_, :func:`whittle_lib.mdp.relative_value_iteration`) for one
    that gives every printed
    count ``k + d`` of ``instances``.

    Parameters
    ----------
    instances : sequence of (lam, mu, gamma, K, N, printed)
        The instances and their printed counts. The first ``n_full`` share ``K`` and ``N``;
        they are run from every state (the candidates ``x_hat``). Each later one is run only
        from the readings still alive, so put the cheap and selective ones first.
    tau, tol : float
        Damping and threshold of the stopping rule.
    n_full : int
        How many leading instances to run from every state.

    Returns
    -------
    SingleReadingSearch

    Notes
    -----
    The search is exhaustive over the family: a reading survives only if it gives every
    printed count, and an instance without its ``x_hat`` among its states rules it out. It
    cannot see readings outside the family (another ``h_0``, another stopping rule, a
    reference state chosen by its position in another ordering of the states).

    Examples
    --------
    >>> found = single_reading_search([(0.1, 1.0, 1.4, 2, 1, 9)], tau=0.99999, tol=1e-5)
    >>> found.n_readings == 4 * len(found.states) and found.alive[0] == found.n_readings
    True
    """
    inst = [tuple(i) for i in instances]
    if not inst:
        raise ValueError("instances must not be empty")
    if not 1 <= n_full <= len(inst):
        raise ValueError(f"n_full must lie in 1..{len(inst)}, got {n_full}")
    K0, N0 = inst[0][3], inst[0][4]
    if any((i[3], i[4]) != (K0, N0) for i in inst[:n_full]):
        raise ValueError(f"the first n_full = {n_full} instances must share K and N")
    space0 = _q.robots_state_space(K0, N0)
    states = tuple(_state_tuple(space0, i) for i in range(space0.n_states))
    full = {}
    for h0 in H0_READINGS:
        its = [rvi_readings(_q.robots_mdp(*i[:5])[0], np.arange(len(states)), tau=tau,
                            tol=tol, h0=h0) for i in inst[:n_full]]
        for rule in STOPPING_READINGS:
            full[(h0, rule)] = np.array([it[rule].iterations for it in its])
    printed_full = np.array([i[5] for i in inst[:n_full]])[:, None]
    alive = [sum(int(np.all(printed_full[:m] - k[:m] == printed_full[0] - k[0], axis=0).sum())
                 for k in full.values()) for m in range(1, n_full + 1)]
    cands = {}
    for (h0, rule), k in full.items():
        d = printed_full - k
        for j in np.flatnonzero(np.all(d == d[0], axis=0)):
            cands[(h0, rule, states[j])] = int(d[0, j])
    for lam, mu, gamma, K, N, printed in inst[n_full:]:
        model, space = _q.robots_mdp(lam, mu, gamma, K, N)
        kept = {}
        for h0 in H0_READINGS:
            xs = sorted({x for (h, _, x) in cands if h == h0 and _has_state(space, x)})
            if not xs:
                continue
            sw = rvi_readings(model, [space.state(*x) for x in xs], tau=tau, tol=tol, h0=h0)
            at = {x: j for j, x in enumerate(xs)}
            kept.update({(h, rule, x): d for (h, rule, x), d in cands.items()
                         if h == h0 and x in at and printed - sw[rule].iterations[at[x]] == d})
        cands = kept
        alive.append(len(cands))
    return SingleReadingSearch(states=states, full_counts=full, alive=tuple(alive),
                               survivors=tuple((h, rule, x, d)
                                               for (h, rule, x), d in cands.items()))
