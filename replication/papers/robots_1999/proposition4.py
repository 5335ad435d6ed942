"""Proposition 4 of the robots draft, relative value iteration and its ``theta = tau T(h)(x_hat)``:
three readings at fixed points far from ``tau = 1``, the remark of Sec. 4 on ``tau``, and the
forms of ``theta`` judged by the ``C_d`` that Table 1 prints at the paper's ``tau``.
"""
from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from whittle_lib import mdp as _mdp
from whittle_lib.models import robots as _q
from .paper import COMPACT_HEAD as _COMPACT_HEAD
from .paper import compact_setting as _compact_setting
from .paper import decimals_of as _decimals_of
from .paper import format_verdicts as _format_verdicts
from .paper import prints_as as _prints_as
from .paper import table_row_parameters as _table_row_parameters

__all__ = ["PROPOSITION4", "TAU_REMARK", "TAU_VALUES", "PROPOSITION4_READINGS", "check_theta",
           "proposition4_readings", "rvi_iterations_by_tau", "tau_remark_holds",
           "tau_remark_evidence", "format_proposition4", "theta_at_paper_tau",
           "proposition4_verdicts"]

#: Proposition 4's conclusion and the remark of Sec. 4 on ``tau``, as the results file words
#: them.
PROPOSITION4 = "theta = tau T(h)(x_hat)"
TAU_REMARK = "the closer tau is to 1 the faster relative value iteration converges"
#: The dampings ``tau`` of the check of the Sec. 4 remark (:func:`rvi_iterations_by_tau`).
TAU_VALUES = (0.5, 0.9, 0.99, 0.999, 0.99999, 1.0)


def rvi_iterations_by_tau(lam: float, mu: float, gamma: float, K: int, N: int, taus, *,
                          tol: float, reference_state) -> dict:
    """Iterations of relative value iteration (Proposition 4) to the paper's stopping rule,
    for each damping ``tau`` (the Sec. 4 remark: the closer to 1, the faster)."""
    return {t: _q.robots_dynamic_optimum(lam, mu, gamma, K, N, method="relative_value_iteration",
                                         tau=t, tol=tol, reference_state=reference_state
                                         ).iterations for t in taus}


@dataclass(frozen=True)
class ThetaCheck:
    """Proposition 4's ``theta`` at a damping ``tau`` far from 1 (:func:`check_theta`).

    Attributes
    ----------
    lam, mu, gamma, K, N
        The instance.
    tau : float
        The damping.
    exact_cost : float
        The optimal average cost, by policy iteration.
    T_h : float
        ``T(h)(x_hat)`` at the fixed point of relative value iteration, as a cost.
    """

    lam: float
    mu: float
    gamma: float
    K: int
    N: int
    tau: float
    exact_cost: float
    T_h: float


def check_theta(lam: float, mu: float, gamma: float, K: int, N: int, reference_state, *,
                tau: float = 0.5, tol: float = 1e-10, exact_cost: float | None = None
                ) -> ThetaCheck:
    """Proposition 4 of [TLNC99]_ says ``theta = tau T(h)(x_hat)``: relative value iteration
    with damping ``tau`` run to a fixed point (span rule ``tol``), against the exact optimum
    (``exact_cost``, by policy iteration if not given).

    Examples
    --------
    >>> th = check_theta(0.1, 1.0, 1.4, 3, 4, (0, 1, 2))
    >>> bool(np.isclose(th.T_h, th.exact_cost, rtol=1e-6))
    True
    """
    model, space = _q.robots_mdp(lam, mu, gamma, K, N)
    if exact_cost is None:
        exact_cost = _q.robots_dynamic_optimum(lam, mu, gamma, K, N).cost
    run = _mdp.relative_value_iteration(model, tau=tau, tol=tol, stopping="span",
                                        reference_state=space.state(*reference_state))
    return ThetaCheck(lam=lam, mu=mu, gamma=gamma, K=K, N=N, tau=tau,
                      exact_cost=float(exact_cost), T_h=float(-run.gain))


#: The three readings of Proposition 4's ``theta = tau T(h)(x_hat)`` (an independent referee's,
#: issue 21): the iteration as printed; ``tau`` on the expectation only (Bertsekas' form,
#: :func:`whittle_lib.mdp.relative_value_iteration` with ``damping="expectation"``); and
#: ``theta`` read as the gain of the aperiodicity-transformed model ``(tau c, (1-tau) I + tau P)``,
#: whose relative value iteration is the printed one.
PROPOSITION4_READINGS = ("(i) the printed iteration", "(ii) tau on the expectation only",
                         "(iii) the transformed model")


@dataclass(frozen=True)
class Proposition4Readings:
    """Proposition 4's ``theta = tau T(h)(x_hat)`` of [TLNC99]_ under its three readings
    (:data:`PROPOSITION4_READINGS`), at fixed points (:func:`proposition4_readings`).

    Attributes
    ----------
    lam, mu, K, N
        The instance; one per ``gamma``.
    gammas, taus : tuple of float
    reference_states : tuple of tuple
        ``x_hat``: one with ``c(x_hat) = 0`` first (``x_hat*``), then one with ``c(x_hat) > 0``.
    optimum : dict of float to float
        ``theta`` for each ``gamma``: the optimal average cost, by policy iteration.
    transformed : dict of (float, float) to float
        For each ``(tau, gamma)``, the optimal average cost of the transformed model
        ``(tau c, (1 - tau) I + tau P)``, by policy iteration on that model.
    cost : dict of (float, tuple) to float
        ``c(x_hat)`` for each ``(gamma, x_hat)``.
    T_h : dict of (str, float, float, tuple) to float
        ``T(h)(x_hat)`` (``T`` as Proposition 4 defines it, as a cost) at the fixed point of
        relative value iteration, for each ``(damping, tau, gamma, x_hat)``; ``damping`` is
        ``"update"`` (the printed iteration) or ``"expectation"`` (Bertsekas' form).
    tol : float
        The span rule that stopped each run: the gain is within ``tol`` of its limit.
    """

    lam: float
    mu: float
    K: int
    N: int
    gammas: tuple
    taus: tuple
    reference_states: tuple
    optimum: dict
    transformed: dict
    cost: dict
    T_h: dict
    tol: float

    def rows(self) -> list:
        """``(reading, tau, x_hat, formula, {gamma: (value, optimum)})``, one per line of the
        table: (i) ``tau T(h)(x_hat)`` from each ``x_hat`` and ``T(h)(x_hat)`` from ``x_hat*``,
        (ii) ``tau T(h)(x_hat)`` from each ``x_hat``, (iii) ``tau T(h)(x_hat*)`` against the
        transformed model's optimum."""
        i, ii, iii = PROPOSITION4_READINGS
        star = self.reference_states[0]
        out = []
        for t in self.taus:
            def line(reading, damping, x, formula, scale, optimum):
                return (reading, t, x, formula,
                        {g: (scale * self.T_h[(damping, t, g, x)], optimum(g))
                         for g in self.gammas})
            theta = self.optimum.get
            for x in self.reference_states:
                out.append(line(i, "update", x, "tau T(h)(x_hat)", t, theta))
            out.append(line(i, "update", star, "T(h)(x_hat)", 1.0, theta))
            for x in self.reference_states:
                out.append(line(ii, "expectation", x, "tau T(h)(x_hat)", t, theta))
            out.append(line(iii, "update", star, "tau T(h)(x_hat)", t,
                            lambda g: self.transformed[(t, g)]))
        return out

    @staticmethod
    def _equal(value: float, optimum: float) -> bool:
        # 1e-6 relative: far above the span rule's 1e-10 and far below the factor tau
        return bool(np.isclose(value, optimum, rtol=1e-6, atol=0.0))

    def holds(self, reading: str, x_hat: tuple | None = None,
              formula: str = "tau T(h)(x_hat)") -> bool:
        """Whether ``formula`` gives the optimum (of the transformed model, for (iii)) in
        every line of ``reading`` (from ``x_hat`` only, if given) at every ``tau`` and
        ``gamma``."""
        lines = [r for r in self.rows() if r[0] == reading and r[3] == formula
                 and (x_hat is None or r[2] == tuple(x_hat))]
        return bool(lines) and all(self._equal(v, o) for r in lines for v, o in r[4].values())

    @property
    def setting(self) -> str:
        """The row of the verdict: the middle instance of ``gammas`` (Fig. 7's)."""
        gamma = self.gammas[len(self.gammas) // 2]
        return f"N={self.N};K={self.K};lambda={self.lam};mu={self.mu};gamma={gamma}"

    def to_frame(self):
        """The lines of :meth:`rows` as a pandas DataFrame: reading, ``tau``, ``x_hat``,
        ``c(x_hat)``, the formula for ``theta``; per ``gamma`` its value and the optimum; and
        whether the formula gives the optimum for every ``gamma``."""
        import pandas as pd
        records = []
        for reading, t, x, formula, by_gamma in self.rows():
            c = {self.cost[(g, x)] for g in self.gammas}
            rec = {("reading", ""): reading, ("tau", ""): t, ("x_hat", ""): str(x),
                   ("c(x_hat)", ""): "0" if c == {0.0} else "gamma",
                   ("theta formula", ""): formula}
            for g, (v, o) in by_gamma.items():
                rec[(f"gamma = {g:g}", "value")] = round(v, 6)
                rec[(f"gamma = {g:g}", "optimum")] = round(o, 6)
            rec[("= optimum", "")] = ("yes" if all(self._equal(v, o) for v, o in
                                                    by_gamma.values()) else "no")
            records.append(rec)
        frame = pd.DataFrame(records)
        frame.columns = pd.MultiIndex.from_tuples(frame.columns)
        return frame


def proposition4_readings(lam: float, mu: float, gammas, K: int, N: int, *,
                          taus=(0.5, 0.1), reference_states=((1, 1, 1), (0, 1, 2)),
                          tol: float = 1e-10, optima: Mapping | None = None
                          ) -> Proposition4Readings:
    """Proposition 4 of [TLNC99]_ under its three readings (:data:`PROPOSITION4_READINGS`):
    relative value iteration with each damping (:func:`whittle_lib.mdp.relative_value_iteration`,
    ``damping="update"`` as printed and ``"expectation"``, Bertsekas' form) run to a fixed point
    (span rule ``tol``) from each reference state, against the optimum by policy iteration,
    and against the optimum of the transformed model ``(tau c, (1 - tau) I + tau P)``.
    ``optima`` maps each ``gamma`` to its optimal cost, if already computed.

    Examples
    --------
    >>> pr = proposition4_readings(0.1, 1.0, (1.4,), 3, 4, taus=(0.5,))
    >>> [pr.holds(r) for r in PROPOSITION4_READINGS]
    [False, False, True]
    >>> pr.holds(PROPOSITION4_READINGS[1], (1, 1, 1)), pr.holds(PROPOSITION4_READINGS[1], (0, 1, 2))
    (True, False)
    """
    gammas, taus = tuple(gammas), tuple(taus)
    refs = tuple(tuple(x) for x in reference_states)
    optimum, transformed, cost, T_h = {}, {}, {}, {}
    for g in gammas:
        model, space = _q.robots_mdp(lam, mu, g, K, N)
        optimum[g] = float(optima[g] if optima is not None else
                           _q.robots_dynamic_optimum(lam, mu, g, K, N).cost)
        pos = [space.state(*x) for x in refs]
        c = -model.rewards.max(axis=1)
        cost.update({(g, x): float(c[j]) for x, j in zip(refs, pos)})
        eye = sparse.identity(space.n_states, format="csr")
        for t in taus:
            damped = _mdp.FiniteMDP(tuple((1 - t) * eye + t * P for P in model.transitions),
                                    t * model.rewards, model.allowed)
            transformed[(t, g)] = -float(_mdp.policy_iteration(damped).gain)
            for damping in ("update", "expectation"):
                run = _mdp.relative_value_iteration_many(model, pos, tau=t, tol=tol,
                                                         stopping="span", damping=damping)
                for k, (x, j) in enumerate(zip(refs, pos)):   # T as Prop. 4 defines it
                    T_h[(damping, t, g, x)] = -float(model.q_values(run.bias[:, k])[j].max())
    return Proposition4Readings(lam=lam, mu=mu, K=K, N=N, gammas=gammas, taus=taus,
                                reference_states=refs, optimum=optimum,
                                transformed=transformed, cost=cost, T_h=T_h, tol=tol)


def format_iterations_by_tau(iterations: Mapping) -> str:
    """:func:`rvi_iterations_by_tau` as a two-line table, under a title line."""
    return ("relative value iteration on this instance, iterations to the paper's stopping rule "
            f"by tau:\n  {'tau':10s}" + "".join(f"{t:>9g}" for t in iterations)
            + f"\n  {'iterations':10s}" + "".join(f"{n:9d}" for n in iterations.values()))


def tau_remark_holds(iterations: Mapping) -> bool:
    """The Sec. 4 remark "the closer ``tau`` is to 1 the faster": the count never rises as
    ``tau`` grows (``iterations``: :func:`rvi_iterations_by_tau`, ``tau`` increasing)."""
    taus = list(iterations)
    return all(iterations[a] >= iterations[b] for a, b in zip(taus, taus[1:]))


def format_proposition4(cmp, iterations: Mapping) -> str:
    """The iterations by ``tau`` (:func:`format_iterations_by_tau`) and the verdict
    the notebook recorded (:data:`TAU_REMARK`), as the notebook prints them (the verdict on
    Proposition 4 waits for Table 1: :func:`proposition4_verdicts`)."""
    taus = list(iterations)
    last = iterations[taus[-1]]
    flat = next(t for t in taus if all(iterations[u] == last for u in taus[taus.index(t):]))
    trend = ("the count never rises as tau grows" if tau_remark_holds(iterations)
             else "the count rises somewhere as tau grows")
    return (format_iterations_by_tau(iterations) + f"\n  {trend}; it is {last} for every "
            f"tau >= {flat:g}\n"
            + _format_verdicts(cmp, ("Sec. 4 text", TAU_REMARK)))


def tau_remark_evidence(iterations: Mapping) -> str:
    """The evidence on the Sec. 4 remark (``iterations``: :func:`rvi_iterations_by_tau`,
    ``tau`` increasing; the verdict: :func:`tau_remark_holds`)."""
    return ("Iterations to the paper's stopping rule on the Fig. 7 instance, tau = 0.5 .. 1: "
            + ", ".join(f"{t}: {n}" for t, n in iterations.items())
            + ". The damping only guards against periodicity; this chain is aperiodic already.")


#: The forms of ``theta`` compared with Table 1's printed ``C_d``: ``T(h)(x_hat)`` (the gain, at
#: the fixed point), Proposition 4's ``tau T(h)(x_hat)``, and ``tau^2 T(h)(x_hat)`` (its ``T``
#: read as the damped operator ``(1 - tau) h + tau T h`` of the iteration).
THETA_FORMS = ("T", "tau T", "tau^2 T")


@dataclass(frozen=True)
class ThetaAtPaperTau:
    """Proposition 4's ``theta`` at the paper's ``tau``, judged by the ``C_d`` that Table 1
    prints (:func:`theta_at_paper_tau`).

    Attributes
    ----------
    tau : float
        The paper's damping.
    reference_state : tuple
        ``x_hat*`` of Figs. 6-8, from which relative value iteration ran.
    expected : dict of str to Row
        For each row of Table 1 (its ``setting``), the printed ``C_d`` and its tolerance.
    T_h : dict of str to float
        For each row, ``T(h)(x_hat*)`` as a cost where relative value iteration as the paper ran
        it stops (``h_0 = 0``, pointwise rule; :attr:`Table1Row.rvi`).
    fixed_point : ThetaCheck
        Relative value iteration at ``tau`` run to a fixed point on the Fig. 7 instance
        (:func:`check_theta`).
    counts : dict of str to (int, int)
        For each row, the printed ``N_iter`` and ``k``, the updates of the printed iteration
        when the rule first holds.
    expectation : dict of str to (int, float)
        For each row, ``k`` and ``tau T(h)(x_hat*)`` (a cost) where the iteration with ``tau``
        on the expectation only (reading (ii), :data:`PROPOSITION4_READINGS`) stops, from the
        same ``x_hat*``, ``h_0 = 0`` and rule.
    figure_counts : dict of float to (int, int, int)
        For each figure of Figs. 6-8 with a printed count: the count, and ``k`` of the printed
        iteration and of reading (ii) from ``x_hat*``.
    """

    tau: float
    reference_state: tuple
    expected: dict
    T_h: dict
    fixed_point: ThetaCheck
    counts: dict = None
    expectation: dict = None
    figure_counts: dict = None

    def counts_frame(self):
        """Readings (i) and (ii) at the paper's ``tau`` against everything the paper printed
        from relative value iteration, as a pandas DataFrame: the figures' counts as ``k``,
        Table 1's as ``k + 1``, and Table 1's ``C_d`` as ``tau T(h)(x_hat*)`` and ``T(h)``."""
        import pandas as pd
        i, ii = PROPOSITION4_READINGS[:2]
        n, nf = len(self.T_h), len(self.figure_counts or {})
        figs = self.figure_counts or {}
        rows = []
        for reading, fig_k, t1_k, tau_T, T in (
                (i, [f[1] for f in figs.values()], {s: c[1] for s, c in self.counts.items()},
                 {s: self.value(s, "tau T") for s in self.T_h}, {s: self.T_h[s] for s in self.T_h}),
                (ii, [f[2] for f in figs.values()], {s: e[0] for s, e in self.expectation.items()},
                 {s: e[1] for s, e in self.expectation.items()},
                 {s: e[1] / self.tau for s, e in self.expectation.items()})):
            rows.append({
                "reading": reading, "tau": self.tau, "x_hat": str(self.reference_state),
                f"Figs. 6-8: count = k (of {nf})": sum(k == f[0] for k, f in
                                                      zip(fig_k, figs.values())),
                f"Table 1: N_iter = k + 1 (of {n})": sum(t1_k[s] + 1 == self.counts[s][0]
                                                         for s in self.counts),
                f"Table 1: C_d = tau T(h)(x_hat) (of {n})": sum(
                    _prints_as(self.expected[s], tau_T[s]) for s in self.T_h),
                f"Table 1: C_d = T(h)(x_hat) (of {n})": sum(
                    _prints_as(self.expected[s], T[s]) for s in self.T_h)})
        return pd.DataFrame(rows)

    def value(self, setting: str, form: str) -> float:
        """``theta`` of row ``setting`` under ``form`` (:data:`THETA_FORMS`)."""
        return self.T_h[setting] * self.tau ** THETA_FORMS.index(form)

    def prints(self, form: str) -> dict:
        """For each row, whether ``form`` prints the paper's ``C_d`` (within its tolerance)."""
        return {s: _prints_as(self.expected[s], self.value(s, form)) for s in self.T_h}

    def n_prints(self, form: str) -> int:
        return sum(self.prints(form).values())

    @property
    def separating(self) -> list:
        """The rows whose printed digits tell ``T(h)`` from ``tau T(h)``: exactly one of the two
        prints the paper's ``C_d``."""
        a, b = self.prints("T"), self.prints("tau T")
        return [s for s in self.T_h if a[s] != b[s]]

    def holds(self, form: str) -> bool | None:
        """Whether Table 1 supports ``theta = form``: ``False`` if some row's printed ``C_d`` is
        not ``form``; ``None`` (undetermined) if every row prints both ``form`` and ``T(h)``, so
        that the digits cannot tell them apart; ``True`` otherwise."""
        if not all(self.prints(form).values()):
            return False
        return None if all(self.prints("T").values()) else True

    @property
    def gaps(self) -> np.ndarray:
        """``(1 - tau) T(h)(x_hat*)``, the distance between the two forms, row by row."""
        return (1 - self.tau) * np.array(list(self.T_h.values()))

    @property
    def decimals_needed(self) -> int:
        """Decimals a table needs so that its last unit is below every gap: then the printed
        digits tell the two forms apart in every row."""
        return math.ceil(-math.log10(self.gaps.min()))

    def precision(self) -> str:
        """The sizes that decide what the printed digits can tell, in words."""
        decimals = min(_decimals_of(r.paper) for r in self.expected.values())
        unit = 10.0 ** -decimals
        return (f"(1 - tau) T(h)(x_hat*) is {self.gaps.min():.1e} to {self.gaps.max():.1e}, "
                f"{self.gaps.min() / unit:.2f} to {self.gaps.max() / unit:.2f} of a unit in the "
                f"last of the {decimals} printed decimals: telling the two forms apart in every "
                f"row needs {self.decimals_needed} decimals, and the printed ones separate them "
                f"only where a rounding boundary falls between ({len(self.separating)} of "
                f"{len(self.T_h)} rows)")

    def report(self) -> str:
        """The counts, the separating rows and the fixed point, as the notebook prints them."""
        fp, rows = self.fixed_point, list(self.T_h)
        lines = [f"Proposition 4 at the paper's tau = {self.tau:g}: Table 1's printed C_d against "
                 f"RVI as the paper ran it", f"(x_hat* = {self.reference_state}, h_0 = 0), to "
                 "the printed digits: the printed C_d is",
                 "  " + ", ".join(f"{f}(h)(x_hat*) in {self.n_prints(f)}" for f in THETA_FORMS)
                 + f" of {len(rows)} rows"]
        lines += textwrap.wrap(self.precision() + ":", 98, initial_indent="  ",
                               subsequent_indent="  ")
        lines.append(f"  {'row':>3s} {_COMPACT_HEAD} {'paper':>8s} " + " ".join(
            f"{f + '(h)':>11s}" for f in THETA_FORMS))
        for s in self.separating:
            lines.append(f"  {rows.index(s) + 1:3d} {_compact_setting(s)} "
                         f"{self.expected[s].paper:>8s} "
                         + " ".join(f"{self.value(s, f):11.7f}" for f in THETA_FORMS))
        printed_T = [s for s in self.separating if self.prints("T")[s]]
        lines.append(f"  the paper printed T(h)(x_hat*) in {len(printed_T)} of these "
                     f"{len(self.separating)} rows")
        lines.append(f"at the fixed point (tau = {fp.tau:g}, Fig. 7 instance): T(h)(x_hat) = "
                     f"{fp.T_h:.7f} (policy iteration:\n  {fp.exact_cost:.7f}), tau T(h)(x_hat) = "
                     f"{fp.tau * fp.T_h:.7f}")
        return "\n".join(lines)


def theta_at_paper_tau(cmp, changed: Mapping, t1, fixed_point: ThetaCheck, captions=None
                       ) -> ThetaAtPaperTau | None:
    """Proposition 4's ``theta = tau T(h)(x_hat)`` of [TLNC99]_ at the paper's ``tau`` (the
    ``tau`` of ``t1``, a :class:`~replication.papers.robots_1999.table1.Table1Results`): which
    form prints each ``C_d`` of Table 1, from ``x_hat*`` and ``h_0 = 0``, under the printed
    iteration and under ``tau`` on the expectation only (reading (ii), run here on every row
    and on the figures of ``captions``, a
    :class:`~replication.papers.robots_1999.figures.CaptionCounts`), and the counts each gives.
    ``fixed_point`` is :func:`check_theta` at that ``tau``. ``None`` if ``tau`` or ``mu`` is
    not the paper's (``changed``: the parameters off their defaults), or Table 1 prints no
    ``C_d``."""
    if {"tau", "mu"} & set(changed):
        return None
    expected = {s: cmp.paper("Table 1", s, "C_d") for s in t1.rows if cmp.has("Table 1", s, "C_d")}
    if not expected:
        return None
    star = t1.star

    def expectation_run(lam, g, K, N):
        model, space = _q.robots_mdp(lam, fixed_point.mu, g, K, N)
        run = _mdp.relative_value_iteration(model, tau=t1.tau, tol=t1.tol, damping="expectation",
                                            reference_state=space.state(*star))
        return run.iterations, -t1.tau * float(model.q_values(run.bias)[space.state(*star)]
                                             .max())

    counts, expectation = {}, {}
    for s in expected:
        if cmp.has("Table 1", s, "N_iter"):
            counts[s] = (int(cmp.paper("Table 1", s, "N_iter").paper), t1.rows[s].rvi[star][0])
        lam, K, g = _table_row_parameters(s)
        expectation[s] = expectation_run(lam, g, K, t1.rows[s].static.N)
    figure_counts = {}
    for g, n in (captions.printed.items() if captions is not None else ()):
        figure_counts[g] = (n, captions.count_from(g, star),
                            expectation_run(captions.lam, g, captions.K, captions.N)[0])
    return ThetaAtPaperTau(tau=t1.tau, reference_state=star, expected=expected,
                           T_h={s: t1.rows[s].rvi[star][1] for s in expected},
                           fixed_point=fixed_point, counts=counts, expectation=expectation,
                           figure_counts=figure_counts)


def proposition4_verdicts(readings: Proposition4Readings,
                          paper_tau: ThetaAtPaperTau | None) -> tuple[dict, str]:
    """Proposition 4's ``theta = tau T(h)(x_hat)`` of [TLNC99]_ under its three readings
    (:data:`PROPOSITION4_READINGS`): at fixed points far from ``tau = 1`` (``readings``:
    :func:`proposition4_readings`) and at the paper's ``tau`` judged by Table 1's printed
    ``C_d`` and the printed counts (``paper_tau``: :func:`theta_at_paper_tau`, left out off the
    paper's setting). The verdicts and the evidence for
    :meth:`~replication.records.Comparison.claim_by_reading`, on the Fig. 7 instance
    (:attr:`Proposition4Readings.setting`)."""
    i, ii, iii = PROPOSITION4_READINGS
    pr, star, other = readings, readings.reference_states[0], readings.reference_states[-1]
    taus = " and ".join(f"{t:g}" for t in pr.taus)

    def values(formula_of, t):
        return "/".join(f"{formula_of(g):.6f}" for g in pr.gammas)

    t0 = pr.taus[0]
    theta = values(pr.optimum.get, t0)
    ok_i, ok_ii, ok_ii_pos, ok_iii = (pr.holds(i), pr.holds(ii, star), pr.holds(ii, other),
                                      pr.holds(iii))
    at_paper = ""
    if paper_tau is not None:
        pt, n = paper_tau, len(paper_tau.T_h)
        frame = pt.counts_frame().set_index("reading")
        cols = list(frame.columns)
        f_i, f_ii = frame.loc[i], frame.loc[ii]
        ok_i = ok_i and pt.holds("tau T") is not False
        ok_ii = ok_ii and f_ii[cols[-2]] == n and all(f_ii[c] == f_i[c] for c in cols[2:4])
        at_paper = (f" At the paper's tau = {pt.tau:g} from x_hat* = {pt.reference_state} "
                    f"(h_0 = 0, pointwise rule): (i) gives the figures' counts as k in "
                    f"{f_i[cols[2]]} of {len(pt.figure_counts)}, Table 1's N_iter as k + 1 in "
                    f"{f_i[cols[3]]} of {n}, and Table 1's C_d as T(h)(x_hat*) in "
                    f"{f_i[cols[5]]}, as tau T(h)(x_hat*) in {f_i[cols[4]]}; (ii) gives the "
                    f"same counts ({f_ii[cols[2]]} and {f_ii[cols[3]]}) and C_d as "
                    f"tau T(h)(x_hat*) in {f_ii[cols[4]]} of {n}. The two forms differ by "
                    f"(1 - tau) T(h)(x_hat*), {pt.gaps.min():.1e} to {pt.gaps.max():.1e}: the "
                    f"printed digits separate them in {len(pt.separating)} rows only.")
    text = (f"Three readings, at fixed points (span rule {pr.tol:g}) at tau = {taus} on the "
            f"{len(pr.gammas)} instances of Figs. 6-8 (gamma = "
            + "/".join(f"{g}" for g in pr.gammas) + f"; optimum theta = {theta} by policy "
            f"iteration). (i) The printed iteration h_(k+1) = (1 - tau) h_k + tau (T h_k - "
            f"T h_k(x_hat)): its limit gives theta = T(h)(x_hat), so tau T(h)(x_hat) is off by "
            f"the factor tau (tau = {t0:g}: "
            f"{values(lambda g: t0 * pr.T_h[('update', t0, g, star)], t0)}). (ii) tau on the "
            "expectation only (Bertsekas' form, h_(k+1) = (1 - tau) h_k + T_tau h_k - "
            "T_tau h_k(x_hat), T_tau h = c + tau min_a P_a h): tau T(h)(x_hat) = theta - "
            f"(1 - tau) c(x_hat), exact when c(x_hat) = 0: from x_hat* = {star} "
            f"{values(lambda g: t0 * pr.T_h[('expectation', t0, g, star)], t0)} at tau = "
            f"{t0:g}, from {other} (c = gamma) "
            f"{values(lambda g: t0 * pr.T_h[('expectation', t0, g, other)], t0)}. (iii) On the "
            "aperiodicity-transformed model (tau c, (1 - tau) I + tau P), whose relative value "
            "iteration is the printed one, tau T(h)(x_hat) is that model's gain tau theta "
            f"(policy iteration on it: {values(lambda g: pr.transformed[(t0, g)], t0)}), not the "
            "theta of Prop. 3." + at_paper + " So the printed iteration and the printed "
            "conclusion disagree by the factor tau (a typo between two printed lines); the "
            f"conclusion holds as printed under (ii) from a reference state of zero cost, such "
            f"as the x_hat* that fits the counts. Searched: {len(PROPOSITION4_READINGS)} "
            f"readings x 2 reference states (c = 0 and c = gamma) at tau = {taus} on "
            f"{len(pr.gammas)} instances"
            + (f", and (i), (ii) at the paper's tau on Table 1's {len(paper_tau.T_h)} rows and "
               f"the {len(paper_tau.figure_counts)} figure counts" if paper_tau is not None
               else "")
            + "; a formula off the optimum by more than 1e-6 relative at a fixed point would "
            "have been found.")
    verdicts = {
        f"{i}: theta = tau T(h)(x_hat)": ok_i,
        f"{ii} (Bertsekas' form), x_hat with c(x_hat) = 0, such as x_hat* = {star}": ok_ii,
        f"{ii}, x_hat with c(x_hat) > 0, such as {other}": ok_ii_pos,
        f"{iii} (tau c, (1 - tau) I + tau P): theta read as its gain tau theta": ok_iii}
    return verdicts, text


