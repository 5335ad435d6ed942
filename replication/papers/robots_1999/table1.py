"""Table 1 of the robots draft, static against dynamic control with a pool of ``N_s`` robots:
the notebook's rows completed with relative value iteration from ``h_0 = c``, which computation
prints each ``C_d``, the spread of the iteration count over the reference states, and the
iteration counts of Table 1 and Figs. 6-8 against every reading of how the paper counted.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from whittle_lib import mdp as _mdp
from whittle_lib.models import robots as _q
from .paper import decimals_of as _decimals_of
from .paper import one_step_cost as _one_step_cost
from .paper import prints_as as _prints_as
from .paper import state_tuple as _state_tuple
from .paper import table_row_parameters as _table_row_parameters
from .readings import (H0_READINGS, STOPPING_READINGS, SingleReadingSearch, rvi_readings,
                       single_reading_search)

__all__ = ["table1_results", "table1_cd_readings", "iteration_spread", "table1_readings",
           "iteration_counts"]


@dataclass(frozen=True)
class Table1Row:
    """One row of Table 1 (:func:`table1_results`).

    Attributes
    ----------
    static : StaticOptimum
        ``N_s``, ``C_s`` (Proposition 1, eq. (4)).
    dynamic : DynamicOptimum
        The exact optimum with a pool of ``N_s`` robots (policy iteration).
    rvi : dict of tuple to (int, float)
        For each reference state ``x_hat``, relative value iteration as printed (``h_0 = 0``,
        pointwise rule): the iterations and the estimate ``T(h)(x_hat)``.
    rvi_cost : dict of tuple to (int, float)
        The same from ``h_0 = c`` (the one-step cost, with ``h_0(x_hat) = 0``), the other
        initial value the paper's "otherwise arbitrary" allows that we try.
    """

    static: object
    dynamic: object
    rvi: dict
    rvi_cost: dict


@dataclass(frozen=True)
class _ReferenceStates:
    """The ``x_hat`` relative value iteration ran from: our default first, then ``x_hat*`` of
    Figs. 6-8 if it differs; with the damping and the threshold of the runs."""

    reference_states: tuple
    tau: float
    tol: float

    @property
    def default(self) -> tuple:
        """Our default ``x_hat``."""
        return self.reference_states[0]

    @property
    def star(self) -> tuple:
        """``x_hat*`` (our default when Figs. 6-8 give none, or give ours)."""
        return self.reference_states[-1]


@dataclass(frozen=True)
class Table1Results(_ReferenceStates):
    """Table 1 recomputed (:func:`table1_results`): ``rows`` maps each ``setting`` of the
    table, in its order, to its :class:`Table1Row`."""

    rows: dict


def table1_results(rows: Mapping, mu: float, reference_states, *, tau: float, tol: float
                   ) -> Table1Results:
    """Table 1 of [TLNC99]_ from what the notebook computed for each row, completed with
    relative value iteration as the paper ran it from ``h_0 = c``.

    Parameters
    ----------
    rows : mapping of str to (StaticOptimum, DynamicOptimum, dict)
        For each ``setting`` of the table: the static optimum (``N_s``, ``C_s``), the exact
        dynamic optimum with a pool of ``N_s`` robots, and relative value iteration as printed
        from ``h_0 = 0`` (pointwise rule) from each of ``reference_states``: ``{x_hat: (k,
        T(h)(x_hat))}``. The rows printed ``gamma = 1.13`` are ``gamma(15)``
        (:func:`~replication.papers.robots_1999.paper.table_row_parameters`).
    mu, tau, tol : float
        The runs' service rate, damping and threshold.
    reference_states : sequence of tuple
        Our default ``x_hat``, then ``x_hat*`` if it differs.

    Examples
    --------
    >>> s = "lambda=0.1;K=5;gamma=0.4"
    >>> st = _q.robots_static_optimum(0.1, 1.0, 0.4, 5)
    >>> t1 = table1_results({s: (st, None, {(1, 1, 1): (166, 0.15239)})}, 1.0, [(1, 1, 1)],
    ...                     tau=0.99999, tol=1e-5)
    >>> t1.rows[s].rvi_cost[(1, 1, 1)][0], t1.star
    (167, (1, 1, 1))
    """
    refs = tuple(tuple(x) for x in reference_states)
    out = {}
    for s, (static, dynamic, rvi) in rows.items():
        lam, K, g = _table_row_parameters(s)
        model, space = _q.robots_mdp(lam, mu, g, K, static.N)
        # h_0 = c from every reference state, one column each (each column's iterates are those
        # of its run alone, bit for bit: whittle_lib.mdp.relative_value_iteration_many)
        h0 = np.repeat(_one_step_cost(model)[:, None], len(refs), axis=1)
        sw = _mdp.relative_value_iteration_many(
            model, np.array([space.state(*x) for x in refs], dtype=np.int64), tau=tau, tol=tol,
            stopping=STOPPING_READINGS["pointwise"], h0=h0, max_iter=100_000)
        cost = {x: (int(sw.iterations[j]), float(-sw.gain[j])) for j, x in enumerate(refs)}
        out[s] = Table1Row(static=static, dynamic=dynamic, rvi=dict(rvi), rvi_cost=cost)
    return Table1Results(rows=out, reference_states=refs, tau=tau, tol=tol)


def table1_cd_readings(expected, t1: Table1Results, setting: str) -> tuple[dict, str]:
    """Which computation prints Table 1's ``C_d`` of [TLNC99]_ where the exact optimum does
    not (:func:`prints_as`): the readings and the evidence for
    :meth:`~replication.records.Comparison.claim_by_reading`.

    Parameters
    ----------
    expected : Row
        The printed ``C_d`` of the row (``cmp.paper("Table 1", setting, "C_d")``).
    t1 : Table1Results
    setting : str
        The row, a key of ``t1.rows``.

    Returns
    -------
    verdicts : dict of str to bool
        "the exact optimum (23)" (False: the caller asks only when it does not print the
        paper's digits), then RVI's estimate ``T(h)(x_hat)`` from each reference state of
        ``t1``, from ``h_0 = 0`` and ``h_0 = c``.
    evidence : str
    """
    t = t1.rows[setting]
    dyn, rvi = t.dynamic, t.rvi
    shown = {x: f"x_hat = {x}"
             + (" (our default)" if x == t1.default else " (x_hat* of Figs. 6-8)")
             for x in t1.reference_states}
    runs = {(x, h0): (t.rvi if h0 == "0" else t.rvi_cost)[x][1]
            for h0 in ("0", "c") for x in t1.reference_states}
    verdicts = {"C_d = the exact optimum (23), by policy iteration": False,
                **{f"C_d = RVI's estimate T(h)(x_hat), {shown[x]}, h_0 = {h0}":
                   _prints_as(expected, e) for (x, h0), e in runs.items()}}
    evidence = (
        f"Exact optimum {dyn.cost:.6f}; RVI as printed stops with the estimate "
        + ", ".join(f"{e:.6f} from x_hat = {x}" for x, (_, e) in rvi.items())
        + " (h_0 = 0; from h_0 = c "
        + ", ".join(f"{t.rvi_cost[x][1]:.6f}" for x in t1.reference_states)
        + "). The optimal policy is the same. Searched: "
        f"{len(runs) + 1} readings (the exact optimum; RVI's estimate from our x_hat and "
        "from x_hat*, found on the figures' counts and not on C_d, each from h_0 = 0 and "
        f"c), each judged by the {_decimals_of(expected.paper)} printed decimals: a value "
        f"more than {expected.tolerance:g} from the printed one is told apart, and the "
        f"exact optimum is {abs(float(expected.paper) - dyn.cost):.1e} from it.")
    return verdicts, evidence


@dataclass(frozen=True)
class IterationSpread:
    """Relative value iteration's count from every reference state on one row of Table 1
    (:func:`iteration_spread`).

    Attributes
    ----------
    setting : str
        The row.
    lam, K, gamma, N : float, int, float, int
        Its instance (``N = N_s``).
    counts : ndarray of int
        Iterations to the paper's stopping rule, one per reference state.
    ours : dict of tuple to int
        The counts from the reference states of :class:`Table1Results` (default, ``x_hat*``).
    """

    setting: str
    lam: float
    K: int
    gamma: float
    N: int
    counts: np.ndarray
    ours: dict


def iteration_spread(t1: Table1Results, setting: str, mu: float) -> IterationSpread:
    """Proposition 4 as the paper ran it (``h_0 = 0``, pointwise rule) from every reference
    state at once (:func:`whittle_lib.mdp.relative_value_iteration_many`) on the row
    ``setting`` of Table 1, with the ``tau`` and ``tol`` of ``t1``: how much the printed
    ``N_iter`` depends on the ``x_hat`` the paper does not give."""
    lam, K, g = _table_row_parameters(setting)
    row = t1.rows[setting]
    model, space = _q.robots_mdp(lam, mu, g, K, row.static.N)
    counts = _mdp.relative_value_iteration_many(
        model, np.arange(space.n_states), tau=t1.tau, tol=t1.tol,
        stopping=STOPPING_READINGS["pointwise"]).iterations
    return IterationSpread(setting=setting, lam=lam, K=K, gamma=g, N=row.static.N, counts=counts,
                           ours={x: row.rvi[x][0] for x in t1.reference_states})



@dataclass(frozen=True)
class Table1Readings:
    """In how many rows of Table 1 each computation prints the paper's ``C_d`` and ``N_iter``
    (:func:`table1_readings`).

    Attributes
    ----------
    n_rows : int
    exact : int
        Rows whose printed ``C_d`` is the exact optimum.
    rvi, rvi_tau : int
        Rows whose printed ``C_d`` is RVI's ``T(h)(x_hat*)``, and ``tau T(h)(x_hat*)``
        (Proposition 4 as printed).
    iterations : int
        Rows whose printed ``N_iter`` is our count from ``x_hat*`` plus one.
    """

    n_rows: int
    exact: int
    rvi: int
    rvi_tau: int
    iterations: int

    def report(self) -> str:
        """The counts as the notebook prints them."""
        return (f"Table 1, {self.n_rows} rows. The printed C_d is\n  the exact optimum in "
                f"{self.exact} rows,\n  RVI's T(h)(x_hat*) in {self.rvi}, RVI's tau T(h)(x_hat*) "
                f"(Prop. 4 as printed) in {self.rvi_tau};\n  the printed N_iter is our count from "
                f"x_hat* plus one in {self.iterations} rows")


def table1_readings(cmp, t1: Table1Results) -> Table1Readings:
    """Count the rows of Table 1 of [TLNC99]_ whose printed ``C_d`` (within its tolerance,
    :func:`prints_as`) and ``N_iter`` each computation of :func:`table1_results` gives."""
    def paper(s, q):
        return cmp.paper("Table 1", s, q)

    star, rows = t1.star, t1.rows
    return Table1Readings(
        n_rows=len(rows),
        exact=sum(_prints_as(paper(s, "C_d"), t.dynamic.cost) for s, t in rows.items()),
        rvi=sum(_prints_as(paper(s, "C_d"), t.rvi[star][1]) for s, t in rows.items()),
        rvi_tau=sum(_prints_as(paper(s, "C_d"), t1.tau * t.rvi[star][1])
                    for s, t in rows.items()),
        iterations=sum(t.rvi[star][0] + 1 == int(paper(s, "N_iter").paper)
                       for s, t in rows.items()))


#: The counting conventions tried for a printed iteration count: ``k + d`` for ``d`` in these,
#: ``k`` the updates of relative value iteration when the stopping rule first holds. ``d = 1``
#: is what a loop counts that applies ``T`` once more to read ``theta`` off, or that starts
#: counting at 1 before the first update.
COUNT_OFFSETS = (0, 1)


@dataclass(frozen=True)
class IterationCounts(_ReferenceStates):
    """The printed iteration counts of Figs. 6-8 and Table 1 against relative value iteration
    (:func:`iteration_counts`).

    Attributes
    ----------
    reference_states : tuple of tuple
        Our default ``x_hat``, then ``x_hat*`` of Figs. 6-8 if it differs.
    keys : tuple of (str, str, str)
        The ``(item, setting, quantity)`` of each printed count: Figs. 6-8 first, then Table 1.
    printed : dict of tuple to int
        The printed count of each key.
    k : dict of tuple to dict of (tuple, str) to int
        For each key, ``k`` (updates when the pointwise rule first holds, ``tau`` and ``tol``
        of the run) from each reference state and each ``h_0`` of :data:`H0_READINGS`.
    figure_states : dict of tuple to dict of (str, int) to list of tuple
        For each figure's key, the states from which ``h_0`` and the offset ``d`` of
        :data:`COUNT_OFFSETS` give its printed count (pointwise rule).
    n_states : int
        States of the instance of Figs. 6-8 (the candidate ``x_hat``).
    ranges : dict of tuple to (int, int)
        For each figure's key, the smallest and largest ``k`` over those states (``h_0 = 0``).
    search : SingleReadingSearch or None
        One reading for every count (:func:`single_reading_search`), if some figure and some
        row of Table 1 print a count.
    tau, tol : float
    """

    keys: tuple
    printed: dict
    k: dict
    figure_states: dict
    n_states: int
    ranges: dict
    search: SingleReadingSearch | None

    def group(self, item: str) -> list:
        """The keys of Table 1 (``item = "Table 1"``) or of the figures (any other)."""
        return [key for key in self.keys if (key[0] == "Table 1") == (item == "Table 1")]

    @property
    def readings(self) -> list:
        """``(x_hat, h0, d)`` for each reference state, initial value and offset."""
        return [(x, h0, d) for x in self.reference_states for h0 in H0_READINGS
                for d in COUNT_OFFSETS]

    def label(self, reading) -> str:
        """A reading as the notes name it."""
        x, h0, d = reading
        tag = " (ours)" if x == self.default else " (x_hat*)"
        return (f"x_hat = {x}{tag}, h_0 = {'0' if h0 == 'zero' else 'c'}, count "
                + ("k" if d == 0 else f"k + {d}"))

    def fits(self, key, reading) -> bool:
        """Whether ``reading`` gives the printed count of ``key``."""
        x, h0, d = reading
        return self.k[key][(x, h0)] + d == self.printed[key]

    def n_fits(self, item: str, reading) -> int:
        """Counts of the group of ``item`` (:meth:`group`) that ``reading`` gives."""
        return sum(self.fits(key, reading) for key in self.group(item))

    def offsets(self, item: str) -> dict:
        """``printed - k`` from ``x_hat*`` with ``h_0 = 0`` over the group of ``item``: offset
        to the number of counts."""
        found = {}
        for key in self.group(item):
            d = self.printed[key] - self.k[key][(self.star, "zero")]
            found[d] = found.get(d, 0) + 1
        return dict(sorted(found.items()))

    def summary(self) -> str:
        """What every count's note says about the two conventions and the search."""
        star, nf, nt = self.star, len(self.group("Fig.")), len(self.group("Table 1"))
        if not nf or not nt:
            return ""
        fit = {r: (self.n_fits("Fig.", r), self.n_fits("Table 1", r)) for r in self.readings
               if r[0] == star}
        text = (f"From x_hat* = {star} the figures and Table 1 count differently: with h_0 = 0, "
                f"k gives {fit[(star, 'zero', 0)][0]} of the {nf} figure counts and "
                f"{fit[(star, 'zero', 0)][1]} of the {nt} of Table 1, k + 1 gives "
                f"{fit[(star, 'zero', 1)][0]} and {fit[(star, 'zero', 1)][1]}; with h_0 = c, k "
                f"gives {fit[(star, 'cost', 0)][0]} and {fit[(star, 'cost', 0)][1]}.")
        sr = self.search
        if sr is not None:
            text += (f" Searched: {sr.n_readings} readings ({len(sr.states)} x_hat of Figs. 6-8 "
                     f"x {len(H0_READINGS)} h_0 x {len(STOPPING_READINGS)} stopping rules), each "
                     f"with any offset d (count k + d) shared by all {nf + nt} counts: "
                     f"{sr.alive[nf - 1]} fit the {nf} figure counts, {len(sr.survivors)} also "
                     f"fit Table 1; the search would have found any reading of this family "
                     f"giving all {nf + nt} counts.")
            if not sr.survivors:
                text += (" So the two groups come from two counting conventions or two versions "
                         "of the code, and no one story explains both.")
        figs = self.group("Fig.")
        unifying = (set.intersection(*(set(self.figure_states[key][("zero", 1)])
                                       for key in figs)) if figs else set())
        if unifying and self.offsets("Table 1") == {1: nt}:
            ks = "/".join(str(self.printed[key] - 1) for key in figs)
            text += (" An independent re-derivation (own code, from the paper alone; also "
                     "other stopping-rule families, tau, float32 and fixed array positions) "
                     "found no single convention either: the only unifying readings need a "
                     "different reference state per experiment, e.g. count k + 1 throughout "
                     f"with x_hat = {', '.join(map(str, sorted(unifying)))} for the figures (k = "
                     f"{ks}) and x_hat* for Table 1. (Its report names (1, 2, 2) or (2, 1, 0) "
                     "for the figures; in its own counts, as in ours, those give k one more "
                     "than printed, not one fewer.)")
        return text

    def verdicts(self, key) -> dict:
        """``{reading: fits}`` for the printed count ``key``, over :attr:`readings`."""
        return {self.label(r): self.fits(key, r) for r in self.readings}

    def ours(self, key) -> str:
        """The count recorded for ``key``: ``k`` from our ``x_hat`` with ``h_0 = 0`` (``x_hat*``
        was found by matching the printed counts: recording its count would be circular)."""
        return str(self.k[key][(self.default, "zero")])

    def evidence(self, key) -> str:
        """The evidence for the count of ``key``, for its note."""
        default, star = self.default, self.star
        k = self.k[key]
        ks = (f"k = {k[(default, 'zero')]} from x_hat = {default} (ours)"
              + (f", {k[(star, 'zero')]} from x_hat* = {star}" if star != default else "")
              + f"; from h_0 = c {k[(default, 'cost')]}"
              + (f" and {k[(star, 'cost')]}" if star != default else ""))
        text = (f"RVI as printed (tau = {self.tau}, pointwise relative rule {self.tol}, h_0 = 0 "
                f"unless said), k = updates when the rule first holds: {ks}.")
        if key in self.figure_states:
            lo, hi = self.ranges[key]
            st = self.figure_states[key]
            text += (f" Over all {self.n_states} x_hat, k runs from {lo} to {hi}; the printed "
                     f"{self.printed[key]} is k from {st[('zero', 0)]} and k + 1 from "
                     f"{st[('zero', 1)]} (h_0 = 0), k from {st[('cost', 0)]} and k + 1 from "
                     f"{st[('cost', 1)]} (h_0 = c). x_hat* was found on the figures' counts "
                     "with h_0 = 0 and count k; the paper gives neither x_hat nor h_0.")
        return f"{text} {self.summary()}".strip()

    def table(self) -> str:
        """The fits of every reading, the offsets from ``x_hat*`` and the search, as the
        notebook prints them."""
        nf, nt = len(self.group("Fig.")), len(self.group("Table 1"))
        lines = ["printed iteration counts against k, the updates of RVI when the pointwise rule "
                 "first holds;",
                 "counts each reading gives:",
                 f"  {'x_hat':18s} {'h_0':>3s} {'count':>6s} {'Figs. 6-8':>10s} {'Table 1':>9s}"]
        for x, h0, d in self.readings:
            tag = " ours" if x == self.default else " x_hat*"
            lines.append(f"  {str(x) + tag:18s} {'0' if h0 == 'zero' else 'c':>3s} "
                         f"{'k' if d == 0 else f'k + {d}':>6s} "
                         f"{self.n_fits('Fig.', (x, h0, d)):>5d} of {nf} "
                         f"{self.n_fits('Table 1', (x, h0, d)):>3d} of {nt}")
        shown = {item: ", ".join(f"{d:+d} in {n}" for d, n in self.offsets(item).items())
                 for item in ("Fig.", "Table 1")}
        lines.append(f"printed - k from x_hat* = {self.star}, h_0 = 0: Figs. 6-8 {shown['Fig.']}; "
                     f"Table 1 {shown['Table 1']}")
        sr = self.search
        if sr is not None:
            gone = next((i for i, n in enumerate(sr.alive) if n == 0), None)
            lines += [f"one reading for all {nf + nt} counts: {sr.n_readings} (x_hat, h_0, "
                      "stopping rule) of Figs. 6-8, count k + d, one d:",
                      f"  {sr.alive[nf - 1]} give the {nf} figure counts, {len(sr.survivors)} "
                      f"also the {nt} of Table 1"
                      + (f" (none left after {gone - nf + 1} of its rows)" if gone is not None
                         else "")]
        return "\n".join(lines)


def iteration_counts(cmp, captions, t1: Table1Results) -> IterationCounts | None:
    """The iteration counts that the captions of Figs. 6-8 (``captions``, a
    :class:`~replication.papers.robots_1999.figures.CaptionCounts`) and Table 1 of [TLNC99]_
    (read from ``cmp``'s expected table) print, against ``k`` from our ``x_hat`` and
    ``x_hat*`` (those of ``t1``), from ``h_0 = 0`` and ``h_0 = c``, and the search for one
    reading that gives them all (:func:`single_reading_search`: the figures from every state,
    then Table 1's rows from the smallest instance up). ``None`` when neither prints a count."""
    t1_keys = {s: ("Table 1", s, "N_iter") for s in t1.rows if cmp.has("Table 1", s, "N_iter")}
    printed_figures = captions.printed if captions is not None else {}
    if not printed_figures and not t1_keys:
        return None
    refs = t1.reference_states
    search = None
    if printed_figures and t1_keys:
        rows = sorted(t1_keys, key=lambda s: _q.robots_state_space(
            _table_row_parameters(s)[1], t1.rows[s].static.N).n_states)
        instances = list(captions.instances)
        for s in rows:
            lam, K, g = _table_row_parameters(s)
            instances.append((lam, captions.mu, g, K, t1.rows[s].static.N,
                              int(cmp.paper(*t1_keys[s]).paper)))
        search = single_reading_search(instances, tau=t1.tau, tol=t1.tol,
                                       n_full=len(printed_figures))
    keys, printed, k, fig_states, ranges = [], {}, {}, {}, {}
    n_states = 0
    for i, (g, n) in enumerate(printed_figures.items()):
        key = captions.key(g)
        keys.append(key)
        printed[key] = n
        space = captions.space
        n_states = space.n_states
        if search is not None:
            per = {h0: search.full_counts[(h0, "pointwise")][i] for h0 in H0_READINGS}
        else:
            model = _q.robots_mdp(captions.lam, captions.mu, g, captions.K, captions.N)[0]
            per = {h0: rvi_readings(model, np.arange(n_states), tau=t1.tau, tol=t1.tol,
                                    h0=h0)["pointwise"].iterations for h0 in H0_READINGS}
        k[key] = {(x, h0): int(per[h0][space.state(*x)]) for x in refs for h0 in H0_READINGS}
        fig_states[key] = {(h0, d): sorted(_state_tuple(space, j)
                                           for j in np.flatnonzero(per[h0] + d == n))
                           for h0 in H0_READINGS for d in COUNT_OFFSETS}
        ranges[key] = (int(per["zero"].min()), int(per["zero"].max()))
    for s, key in t1_keys.items():
        keys.append(key)
        printed[key] = int(cmp.paper(*key).paper)
        row = t1.rows[s]
        k[key] = {(x, h0): (row.rvi if h0 == "zero" else row.rvi_cost)[x][0]
                  for x in refs for h0 in H0_READINGS}
    return IterationCounts(reference_states=refs, keys=tuple(keys), printed=printed, k=k,
                           figure_states=fig_states, n_states=n_states, ranges=ranges,
                           search=search, tau=t1.tau, tol=t1.tol)
