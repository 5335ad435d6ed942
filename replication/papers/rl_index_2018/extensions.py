r"""Table II's Deterministic row: the index outside ``[u, u*)`` and the law of ``U``.

Sec. IV-A prints the deterministic index for the states the deterministic model visits,
``[u, u*)``; the stochastic model leaves that interval, and the text gives the law of the
utilities only as "exponential with parameter theta_i". Before the row's deviation stands, every
continuation of either index (the exact one and the printed 2018 form) outside the interval and
every law of ``U`` the text allows are tried, all on common arrivals
(:func:`extension_sweep`): 55 continuations (:func:`index_extensions`) under each of
:data:`UTILITY_LAWS`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from whittle_lib.arithmetic import in_current_mode
from whittle_lib.models import crawling
from whittle_lib.models import crawling_policies as policies
from whittle_lib.models.crawling import CrawlingModel
from whittle_lib.stats import run_tasks

from ...records import confidence_interval
from ..crawling_2015 import index_2018
from .paper import TABLE_ONE_THETA, TableTwoPaper, _PrintedForm
from .table_two import TableTwo, draw_key

__all__ = ["IndexExtension", "index_extensions", "ExtendedIndexRule", "UtilityLaw", "UTILITY_LAWS",
           "extension_rewards", "extension_sweep"]

#: How a deterministic index may be continued below ``u`` and at or above ``u* = u/(1-alpha)``:
#: Sec. IV-A prints it for the states the deterministic model visits, ``[u, u*)``, and the
#: stochastic model leaves that interval (a crawled source restarts at ``U < u`` about half the
#: time; a source seldom crawled passes ``u*``). "its formula" evaluates the printed expression
#: there (the exact index: ``(1-alpha) x`` below ``u``, ``x`` above ``u*``; the printed 2018
#: form: ``(1-alpha) x + alpha u`` below, ``u`` above, its ``log+`` being 0); "its value at u"
#: and "u*" clip to the ends; "x" is the index by definition above ``u*``; "0" a constant;
#: "+inf" / "-inf" always / never crawl there (before / after every source inside).
BELOW_U = ("its formula", "its value at u", "0", "+inf", "-inf")
ABOVE_U_STAR = ("its formula", "u*", "x", "0", "+inf", "-inf")
#: The two deterministic indices the "Deterministic" row may mean.
INDEX_FORMS = ("exact index", "printed 2018 form")


@dataclass(frozen=True)
class IndexExtension:
    """A deterministic index (:data:`INDEX_FORMS`) with its continuation outside ``[u, u*)``."""

    form: str
    below: str
    above: str

    def __post_init__(self) -> None:
        for name, allowed in (("form", INDEX_FORMS), ("below", BELOW_U), ("above", ABOVE_U_STAR)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")

    @property
    def label(self) -> str:
        return f"{self.form}; below u: {self.below}; above u*: {self.above}"


def index_extensions() -> tuple:
    """Every continuation of both indices: ``2 x 5 x 6`` less the exact index's ``x`` above
    ``u*``, which is its formula there (55 in all).

    >>> len(index_extensions())
    55
    """
    return tuple(IndexExtension(f, b, a) for f in INDEX_FORMS for b in BELOW_U for a in ABOVE_U_STAR
                 if not (f == INDEX_FORMS[0] and a == "x"))


_CONSTANT = {"0": 0.0, "+inf": math.inf, "-inf": -math.inf}


@dataclass(frozen=True, eq=False)
class ExtendedIndexRule:
    """Priorities of many continued indices at once: ``x`` of shape ``(..., S, N)``, one slot
    per extension (:func:`index_extensions`), each of its own policy (picklable).

    Attributes
    ----------
    model : CrawlingModel
    extensions : tuple of IndexExtension
    """

    model: CrawlingModel
    extensions: tuple
    time_period: int | None = field(default=None, init=False)
    _masks: tuple = field(default=(), init=False, repr=False)
    _exact: tuple = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        m, ext = self.model, self.extensions
        if not ext:
            raise ValueError("extensions must not be empty")
        at_u = {INDEX_FORMS[0]: crawling.whittle_index(m.u, m.u, m.alpha),
                INDEX_FORMS[1]: index_2018(m.u, m.u, m.alpha)}
        printed = np.array([[e.form == INDEX_FORMS[1]] for e in ext])
        below_fix = np.array([[e.below != "its formula"] for e in ext])
        below_val = np.array([at_u[e.form] if e.below == "its value at u"
                              else np.full(m.n_sources, _CONSTANT.get(e.below, 0.0)) for e in ext])
        above_x = np.array([[e.above == "x"] for e in ext])
        above_fix = np.array([[e.above not in ("its formula", "x")] for e in ext])
        above_val = np.array([m.u_star if e.above == "u*"
                              else np.full(m.n_sources, _CONSTANT.get(e.above, 0.0)) for e in ext])
        object.__setattr__(self, "_masks",
                           (printed, below_fix, below_val, above_x, above_fix, above_val))
        # crawling.whittle_index with its per-source constants once (it redoes them on every
        # call; its division by C = 1 is exact, so ClosedFormIndex gives its bits)
        object.__setattr__(self, "_exact", crawling.ClosedFormIndex.of(m))
        object.__setattr__(self, "_printed_form", _PrintedForm(m))
        # the slots of each form: a slice where they are consecutive (a view, not a copy)
        on = printed[:, 0]
        object.__setattr__(self, "_forms", tuple(_as_slice(mask) for mask in (on, ~on)))

    def __call__(self, x, age, t):
        m = self.model
        printed, below_fix, below_val, above_x, above_fix, above_val = self._masks
        x = np.asarray(x, dtype=float)
        gamma = np.empty(x.shape)
        on, off = self._forms                      # each form only on its own slots (the cost)
        gamma[..., on, :] = self._printed_form(x[..., on, :])
        gamma[..., off, :] = self._exact(x[..., off, :])
        below, above = x < m.u, x >= m.u_star
        # the continuations, later ones over earlier ones (as nested np.where would choose)
        np.copyto(gamma, below_val, where=below & below_fix)
        np.copyto(gamma, x, where=above & above_x)
        np.copyto(gamma, np.broadcast_to(above_val, x.shape), where=above & above_fix)
        return gamma


def _as_slice(mask: np.ndarray):
    """``mask`` (boolean, 1-d) as the slice of its ``True`` entries when they are consecutive,
    else the mask itself (both select the same entries)."""
    where = np.flatnonzero(mask)
    if where.size and where[-1] - where[0] + 1 == where.size:
        return slice(int(where[0]), int(where[-1]) + 1)
    return mask


@dataclass(frozen=True)
class UtilityLaw:
    """A law of the new utility ``U`` (Sec. IV-B): Poisson arrivals of rate ``Lambda`` of
    contents with base utility ``xi`` (``theta_i`` of Table I its mean or its rate), or the
    deterministic model ``U = u`` (``base_law=None``).
    """

    label: str
    arrival_rate: float
    theta: str = "mean"
    base_law: str | None = "exponential"
    base_shape: float | None = None

    def __post_init__(self) -> None:
        if self.theta not in ("mean", "rate"):
            raise ValueError(f"theta must be 'mean' or 'rate', got {self.theta!r}")
        if not self.arrival_rate > 0:
            raise ValueError(f"arrival_rate must be > 0, got {self.arrival_rate!r}")
        if self.base_law is not None:
            crawling.check_base_law(self.base_law, self.base_shape)

    def model(self) -> CrawlingModel:
        """Table I under this reading (the index uses its ``u``)."""
        theta = np.array(TABLE_ONE_THETA)
        return CrawlingModel(theta if self.theta == "mean" else 1 / theta, crawling.table_one().mu,
                             [float(self.arrival_rate)] * len(theta))


#: The laws of ``U`` tried for the Deterministic row: the text's "i.i.d. exponential with
#: parameter theta_i" with ``theta`` a mean or a rate and ``Lambda_i`` = 250 (the 2015 paper, what
#: round robin says Table II used) or 25 (Table I as printed); the 2015 paper's other laws of
#: ``xi`` with mean ``theta`` (it asks only for a finite mean); and the deterministic model.
UTILITY_LAWS = (
    UtilityLaw("Lambda=250, exponential xi, mean theta (ours)", 250.0),
    UtilityLaw("Lambda=250, exponential xi, rate theta", 250.0, "rate"),
    UtilityLaw("Lambda=25, exponential xi, mean theta", 25.0),
    UtilityLaw("Lambda=25, exponential xi, rate theta", 25.0, "rate"),
    UtilityLaw("Lambda=250, xi = theta (Poisson arrivals only)", 250.0, base_law="deterministic"),
    UtilityLaw("Lambda=250, lognormal xi (s = 1), mean theta", 250.0, base_law="lognormal",
               base_shape=1.0),
    UtilityLaw("Lambda=250, lomax xi (a = 3), mean theta", 250.0, base_law="lomax", base_shape=3.0),
    UtilityLaw("Lambda=250, lomax xi (a = 1.5), mean theta", 250.0, base_law="lomax",
               base_shape=1.5),
    UtilityLaw("U = u (the deterministic model)", 250.0, base_law=None),
)


def _law_arrivals(law: UtilityLaw, n_periods: int, replications: int, rng) -> np.ndarray:
    """The new utilities of every period, ``(n_periods, replications, N)``: drawn from ``rng``
    as a simulation of ``law`` draws them (:func:`crawling.draw_new_utilities`), or ``u``
    every period for the deterministic model."""
    model = law.model()
    if law.base_law is None:
        return np.broadcast_to(model.u, (n_periods, replications, model.n_sources))
    return crawling.draw_new_utilities(model, n_periods, replications, rng=rng,
                                       base_law=law.base_law, base_shape=law.base_shape)


def _extension_runs(model: CrawlingModel, extensions: tuple, arrivals: list) -> list:
    """The average rewards of every extension for ``M = 1, 2``, one ``(2, S, R_k)`` array per
    block of ``arrivals`` (``(T, R_k, N)`` each, the runs of one law): all of them in one
    lock-step simulation (:func:`whittle_lib.models.crawling_policies.simulate_crawling_many`), the
    extensions twice as slots (``M = 1``, then ``M = 2``) and the blocks as replications."""
    S = len(extensions)
    # the slots (extension, M): each form's for M = 1 and 2 side by side, so that each form's
    # slots are consecutive (ExtendedIndexRule takes them as a view)
    slots = sorted(((e, M) for M in (1, 2) for e in range(S)),
                   key=lambda s: (extensions[s[0]].form != INDEX_FORMS[0], s[1], s[0]))
    rule = ExtendedIndexRule(model, tuple(extensions[e] for e, _ in slots))
    T = arrivals[0].shape[0]
    stacked = np.concatenate(arrivals, axis=1)                      # (T, R, N)
    runs = policies.simulate_crawling_many(model, rule, [M for _, M in slots], T, slots=2 * S,
                                           stochastic=True, replications=stacked.shape[1],
                                           utilities=stacked)
    # back in the order (M, extension)
    position = {slot: k for k, slot in enumerate(slots)}
    runs = [runs[position[e, M]] for M in (1, 2) for e in range(S)]
    rewards = np.stack([run.rewards for run in runs], axis=-1)      # (T, R, 2 S)
    out, first = [], 0
    for block in arrivals:
        mine = rewards[:, first:first + block.shape[1]]
        first += block.shape[1]
        total = np.zeros(mine.shape[1:])
        for period in mine:            # summed in time order, as the loop of one law did
            total += period
        out.append(np.moveaxis((total / T).reshape(-1, 2, S), 0, -1))
    return out


def extension_rewards(law: UtilityLaw, extensions, *, n_periods: int, replications: int,
                      rng) -> np.ndarray:
    """Average reward of every continued index (:class:`ExtendedIndexRule`) for ``M = 1`` and
    ``M = 2``, on common arrivals: the loop of
    :func:`whittle_lib.models.crawling_policies.simulate_crawling` (stochastic model, eq. 17,
    from ``x = u``, ties to the lowest number), with slots for the extensions and both budgets
    sharing each period's utilities
    (:func:`whittle_lib.models.crawling_policies.simulate_crawling_many`). Drawn as
    ``simulate_crawling`` draws them with ``replications`` (a test checks that the exact index
    continued by its formula gives its rewards), so runs with the same ``rng`` seed see the
    same arrivals.

    Returns
    -------
    ndarray, shape (2, S, replications)
        For ``M = 1, 2`` and each extension.
    """
    if int(n_periods) != n_periods or n_periods < 1:
        raise ValueError(f"n_periods must be a positive integer, got {n_periods!r}")
    if int(replications) != replications or replications < 1:
        raise ValueError(f"replications must be a positive integer, got {replications!r}")
    if not tuple(extensions):
        raise ValueError("extensions must not be empty")
    arrivals = _law_arrivals(law, int(n_periods), int(replications), np.random.default_rng(rng))
    return _extension_runs(law.model(), tuple(extensions), [arrivals])[0]


def _extension_group(laws: tuple, extensions: tuple, runs: tuple, seed, drawn: tuple) -> list:
    """:func:`extension_rewards` of several laws of one model and run length, each from a
    generator started at ``seed`` (or its arrivals already drawn, ``drawn``), in one lock-step
    simulation (their runs as replications)."""
    arrivals = [_law_arrivals(law, T, R, np.random.default_rng(seed)) if a is None else a
                for law, (R, T), a in zip(laws, runs, drawn)]
    return _extension_runs(laws[0].model(), extensions, arrivals)


@dataclass(frozen=True)
class ExtensionSweep:
    """Table II's Deterministic row under every continuation of the index and law of ``U``.

    Attributes
    ----------
    extensions : tuple of IndexExtension
    laws : tuple of UtilityLaw
    rewards : tuple of ndarray
        Per law, shape ``(2, S, R_law)``: average reward for ``M = 1, 2``, each extension and
        replication.
    runs : tuple of (int, int)
        Per law, ``(replications, periods)``.
    paper, tolerance : ndarray, shape (2,)
        The paper's Deterministic row and its tolerance (``data/expected``).
    """

    extensions: tuple
    laws: tuple
    rewards: tuple
    runs: tuple
    paper: np.ndarray
    tolerance: np.ndarray

    @property
    def mean(self) -> np.ndarray:
        """``(L, 2, S)``: the mean over replications."""
        return np.stack([r.mean(axis=-1) for r in self.rewards])

    @property
    def half_width(self) -> np.ndarray:
        """``(L, 2, S)``: the 95 % half-width of the mean (0 without randomness or with one run)."""
        def hw(v):
            return confidence_interval(v)[1] if v.size > 1 and np.ptp(v) > 0 else 0.0
        return np.stack([np.apply_along_axis(hw, -1, r) for r in self.rewards])

    @property
    def distance(self) -> np.ndarray:
        """``(L, S)``: the larger over ``M = 1, 2`` of ``|mean - paper|`` in tolerances."""
        gap = np.abs(self.mean - self.paper[None, :, None]) / self.tolerance[None, :, None]
        return gap.max(axis=1)

    @property
    def within(self) -> np.ndarray:
        """``(L, S)``: both printed values within the tolerance of our means."""
        return self.distance <= 1.0

    @property
    def n_readings(self) -> int:
        return len(self.laws) * len(self.extensions)

    def nearest(self) -> tuple:
        """``(law, extension)`` indices of the pair nearest the paper's (in tolerances)."""
        flat = int(np.argmin(self.distance))
        return tuple(int(k) for k in np.unravel_index(flat, self.distance.shape))

    def pair(self, law: int, ext: int, sep: str = ", ") -> str:
        m = self.mean[law, :, ext]
        return f"{m[0]:.2f}{sep}{m[1]:.2f}"

    def _index(self, form: str, below: str = "its formula", above: str = "its formula") -> int:
        return self.extensions.index(IndexExtension(form, below, above))

    def extension_rows(self, law: int = 0) -> list:
        """One dict per (index, below ``u``), one column per continuation above ``u*``, each
        cell the pair ``M=1 / M=2`` under law ``law`` (for a DataFrame)."""
        rows = []
        for f in INDEX_FORMS:
            for b in BELOW_U:
                row = {"index": f, "below u": b}
                for a in ABOVE_U_STAR:
                    known = IndexExtension(f, b, a) in self.extensions
                    row[f"above u*: {a}"] = (self.pair(law, self._index(f, b, a), " / ") if known
                                             else "(its formula)")
                rows.append(row)
        return rows

    def law_rows(self) -> list:
        """One dict per law: its runs, the pair of each index continued by its formula, the
        range over all extensions per ``M``, and how many extensions give both printed values."""
        rows = []
        for i, law in enumerate(self.laws):
            m = self.mean[i]
            row = {"law of U": law.label, "runs x periods": "{} x {}".format(*self.runs[i])}
            for f in INDEX_FORMS:
                row[f"{f} (formula)"] = self.pair(i, self._index(f))
            for c, M in enumerate((1, 2)):
                row[f"M={M}, all extensions"] = f"{m[c].min():.2f} .. {m[c].max():.2f}"
            row["both within tolerance"] = int(self.within[i].sum())
            rows.append(row)
        return rows

    def grouped(self, law: int = 0) -> str:
        """Law ``law``'s extensions grouped by the pair they give (for the note)."""
        groups = {}
        for k, e in enumerate(self.extensions):
            groups.setdefault(self.pair(law, k), []).append(e)
        parts = []
        for pair, exts in sorted(groups.items(), key=lambda kv: -float(kv[0].split(",")[0])):
            names = ", ".join(f"{'exact' if e.form == INDEX_FORMS[0] else 'printed'} "
                              f"[{e.below} | {e.above}]" for e in exts)
            parts.append(f"({pair}) {names}")
        return "; ".join(parts)

    def evidence(self) -> str:
        """What the sweep found, with its Searched sentence (the note of both rows)."""
        li, ej = self.nearest()
        j_ex, j_pr = (self._index(f) for f in INDEX_FORMS)
        law_pairs = "; ".join(
            f"{law.label} ({self.runs[i][0]} x {self.runs[i][1]}): exact ({self.pair(i, j_ex)}), "
            f"printed "
            f"({self.pair(i, j_pr)}), over all continuations M=1 {self.mean[i, 0].min():.2f} .. "
            f"{self.mean[i, 0].max():.2f}, M=2 {self.mean[i, 1].min():.2f} .. "
            f"{self.mean[i, 1].max():.2f}"
            for i, law in enumerate(self.laws))
        near = self.distance <= 5.0                                     # (L, S)
        hw_near = float(self.half_width.max(axis=1)[near].max()) if near.any() else math.nan
        found = int(self.within.sum())
        verdict = (f"None gives both {self.paper[0]:.2f} and {self.paper[1]:.2f}" if not found else
                   f"{found} give both {self.paper[0]:.2f} and {self.paper[1]:.2f}")
        return (f"Continuations of the index outside [u, u*) tried (below u: {', '.join(BELOW_U)}; "
                f"above u*: "
                f"{', '.join(ABOVE_U_STAR)}; [below | above] for the exact index and the printed "
                f"2018 form), "
                f"with the pair (M=1, M=2) each gives under {self.laws[0].label}: "
                f"{self.grouped(0)}. Laws of U "
                f"tried, with each index continued by its formula: {law_pairs}. {verdict}; the "
                f"nearest pair is "
                f"({self.pair(li, ej)}) ({self.laws[li].label}; {self.extensions[ej].label}), "
                f"{self.distance[li, ej]:.1f} tolerances away. Searched: {len(self.extensions)} "
                f"continuations x "
                f"{len(self.laws)} laws = {self.n_readings} readings on common arrivals, judged by "
                f"both printed "
                f"values at the row's tolerances ({self.tolerance[0]:.3f}, "
                f"{self.tolerance[1]:.3f}); the "
                f"{int(near.sum())} readings within 5 tolerances of the paper's pair have 95% "
                f"half-widths of at most "
                f"{hw_near:.2f} ({self.runs[0][0]} x {self.runs[0][1]} under {self.laws[0].label}, "
                f"fewer and shorter "
                "runs under the other random laws): a reading whose expected pair lies within the "
                "tolerances would "
                "have been found unless its mean strayed by more than that")


def extension_sweep(laws, paper: TableTwoPaper, *, n_periods: int, replications: int, seed,
                    other: tuple = (4, 2500), max_workers: int | None = None,
                    executor=None, table_two: TableTwo | None = None, wait: bool = True):
    """Run :func:`extension_rewards` for every law, every run from a generator started at
    ``seed``: the first law with ``replications`` runs of ``n_periods`` (when it is Table II's
    law, seed and runs, the arrivals of ``table_two``, a :class:`~.table_two.TableTwo`, are
    replayed instead of drawn again: the same numbers), the deterministic model with one run of
    ``n_periods``, the other laws with ``other = (replications, periods)`` (shorter: they serve
    to show how far each law moves the pair). The laws of one model and run length run as the
    replications of one simulation, one task per such group (:func:`whittle_lib.stats.run_tasks`
    on ``executor``, or a pool of ``max_workers`` processes); each law's numbers are those of
    :func:`extension_rewards` run alone, bit for bit (a test).

    With ``wait=False`` (and an ``executor``) the tasks are submitted and the call returns at
    once: an object whose ``result()`` waits for them and gives the :class:`ExtensionSweep`.
    """
    exts = index_extensions()
    runs = tuple((int(replications), int(n_periods)) if i == 0 else
                 (1, int(n_periods)) if law.base_law is None else tuple(int(v) for v in other)
                 for i, law in enumerate(laws))
    # the laws of one model (theta's reading and Lambda) and run length share one simulation,
    # their runs side by side as replications: the numbers of each law run alone
    groups = {}
    for i, (law, (R, T)) in enumerate(zip(laws, runs)):
        groups.setdefault((law.theta, law.arrival_rate, T), []).append(i)
    members = sorted(groups.values(), key=lambda g: -sum(runs[i][0] * runs[i][1] for i in g))
    if table_two is not None and not isinstance(table_two, TableTwo):
        raise ValueError(f"table_two must be a TableTwo (TableTwo.from_runs), got "
                         f"{type(table_two).__name__}")
    # Table II's arrivals, for the law that drew them (the same draw)
    known = getattr(table_two, "arrivals_key", None)
    drawn = [table_two.arrivals if known is not None and law.base_law is not None and known ==
             draw_key(law.model(), T, R, seed, law.base_law, law.base_shape) else None
             for law, (R, T) in zip(laws, runs)]
    jobs = [partial(_extension_group, tuple(laws[i] for i in g), exts, tuple(runs[i] for i in g),
                    seed, tuple(drawn[i] for i in g)) for g in members]

    def assemble(done) -> ExtensionSweep:
        by_law = {i: r for g, out in zip(members, done) for i, r in zip(g, out)}
        rewards = tuple(by_law[i] for i in range(len(laws)))
        return ExtensionSweep(exts, tuple(laws), rewards, runs,
                              np.array([paper.value["Deterministic", M] for M in (1, 2)]),
                              np.array([paper.tolerance["Deterministic", M] for M in (1, 2)]))

    if wait:
        return assemble(run_tasks(jobs, executor=executor, max_workers=max_workers))
    if executor is None:
        raise ValueError("wait=False needs an executor to submit the tasks to")
    futures = [executor.submit(in_current_mode(job)) for job in jobs]
    return _Pending(lambda: assemble([f.result() for f in futures]))


@dataclass(frozen=True)
class _Pending:
    """A computation submitted to an executor: ``result()`` waits for it."""

    finish: object

    def result(self):
        return self.finish()
