"""What the robots draft printed, read from the transcription in ``data/expected``, and the
helpers every part of the record shares: the rows of its tables as parameters, whether a value
prints as the paper's number, the verdict lines the notebook shows.
"""
from __future__ import annotations

import textwrap

import numpy as np

from whittle_lib.models import robots as _q
from ...records import load_expected as _load_expected
from ...records import parse_setting as _parse_setting

__all__ = ["printed_values", "check_notebook_parameters", "figure_of", "figure_setting",
           "table_row_parameters", "prints_as", "format_verdicts"]

#: The notebook whose expected table (``data/expected/<NOTEBOOK>.csv``) transcribes the draft.
NOTEBOOK = "05_robot_queue"

#: The paper's ``gamma`` of each of Figs. 6-8 (``N = 16``, ``K = 5``, ``lam = 0.1``).
FIGURE_OF_GAMMA = {1.0: "Fig. 6", 1.4: "Fig. 7", 2.0: "Fig. 8"}



def figure_of(gamma: float) -> str:
    """The paper's figure at ``gamma`` (:data:`FIGURE_OF_GAMMA`), or ``"Figs. 6-8"``."""
    return FIGURE_OF_GAMMA.get(gamma, "Figs. 6-8")


def figure_setting(N: int, K: int, lam: float, mu: float, gamma: float) -> str:
    """The ``setting`` of a row of Figs. 6-8: ``"N=16;K=5;lambda=0.1;mu=1.0;gamma=1.4"``."""
    return f"N={N};K={K};lambda={lam};mu={mu};gamma={gamma}"


_TABLES = {"Table 1": ("C_s", "N_s", "C_d", "N_min", "N_bar", "N_iter"),
           "Table 2": ("C_s", "N_s", "C_d", "N_min", "N_bar", "N_max")}


def printed_values(rows=None) -> dict:
    """The numbers the draft prints in its two tables and the captions of Figs. 6-8, as text
    (the digits as printed), one pandas DataFrame each.

    Parameters
    ----------
    rows : list of Row, optional
        The transcription to read (default: ``data/expected/05_robot_queue.csv``).

    Returns
    -------
    dict of str to DataFrame
        ``"Table 1"`` and ``"Table 2"``: one row per line of the table, indexed by
        ``(lam, K, gamma)`` (``lam`` a float, ``K`` an int, ``gamma`` the text as printed, e.g.
        ``"1.13"``), one column per quantity. ``"Figs. 6-8"``: one row per figure, the
        instance of its caption (``N``, ``K``, ``lam``, ``mu``, ``gamma``, numbers) and the
        printed ``cost`` and ``iterations``.

    Examples
    --------
    >>> paper = printed_values()
    >>> paper["Table 1"].loc[(0.1, 5, "0.4"), "C_d"], int(paper["Figs. 6-8"].loc["Fig. 7", "K"])
    ('0.15239', 5)
    """
    import pandas as pd

    rows = _load_expected(NOTEBOOK) if rows is None else rows
    out = {}
    for item, quantities in _TABLES.items():
        lines = {}
        for r in rows:
            if r.item == item and r.quantity in quantities:
                p = _parse_setting(r.setting)
                key = (float(p["lambda"]), int(p["K"]), p["gamma"])
                lines.setdefault(key, {})[r.quantity] = r.paper
        frame = pd.DataFrame.from_dict(lines, orient="index")[list(quantities)]
        frame.index = pd.MultiIndex.from_tuples(frame.index, names=["lam", "K", "gamma"])
        out[item] = frame
    figures = {}
    for r in rows:
        if r.item in FIGURE_OF_GAMMA.values():
            p = _parse_setting(r.setting)
            line = figures.setdefault(r.item, {"N": int(p["N"]), "K": int(p["K"]),
                                               "lam": float(p["lambda"]), "mu": float(p["mu"]),
                                               "gamma": float(p["gamma"])})
            line[r.quantity] = r.paper
    out["Figs. 6-8"] = pd.DataFrame.from_dict(figures, orient="index")
    return out


def check_notebook_parameters(*, mu: float, lambda_policy: float, gammas_policy, K_policy: int,
                              N_policy: int, reference_state, buffer_sizes_fig2, **others) -> None:
    """Check what the notebook's parameter rules cannot say, through the model.

    The MDP of Figs. 6-8 must build, ``reference_state`` ``(q, r, s)`` must be one of its
    states and of the MDPs of the captions of Figs. 6-8 and of every row of Table 1, each
    ``gamma`` and ``K`` must be valid for eq. (4), and ``gammas_policy`` must not repeat a value
    (one figure each). The notebook passes all its parameters
    (``**params.asdict()``); ``others`` are those whose rules say everything.

    Raises
    ------
    ValueError
        Naming the parameter and its value.

    Examples
    --------
    >>> check_notebook_parameters(mu=1.0, lambda_policy=0.1, gammas_policy=[1.0, 1.0],
    ...                           K_policy=5, N_policy=16, reference_state=(0, 1, 2),
    ...                           buffer_sizes_fig2=[5, 20])
    Traceback (most recent call last):
    ...
    ValueError: gammas_policy must not repeat a value, got [1.0, 1.0]
    """
    _q.robots_mdp(lambda_policy, mu, gammas_policy[0], K_policy, N_policy)
    # x_hat must be a state of the figures' MDP, of the captions' and of each row of Table 1
    instances = {(K_policy, N_policy): "Figs. 6-8 (K_policy, N_policy)"}
    for r in _load_expected(NOTEBOOK):
        if r.item in FIGURE_OF_GAMMA.values():
            p = _parse_setting(r.setting)
            instances.setdefault((int(p["K"]), int(p["N"])), "the captions of Figs. 6-8")
        elif r.item == "Table 1" and r.quantity == "N_s":
            lam, K, g = table_row_parameters(r.setting)
            N = _q.robots_static_optimum(lam, mu, g, K).N
            instances.setdefault((K, N), f"Table 1, row {r.setting} (N = N_s)")
    for (K, N), where in instances.items():
        try:
            _q.robots_state_space(K, N).state(*reference_state)
        except ValueError as exc:
            raise ValueError(f"reference_state: {exc} ({where})") from None
    for g in gammas_policy:
        for k in buffer_sizes_fig2:
            _q.robots_cost(1.0, gamma=g, K=k, mu=mu)
    if len(set(gammas_policy)) != len(gammas_policy):
        raise ValueError(f"gammas_policy must not repeat a value, got {gammas_policy}")


def table_row_parameters(setting_text: str) -> tuple[float, int, float]:
    """``(lam, K, gamma)`` of a row of Tables 1 and 2 from its ``setting`` text.

    The rows printed ``gamma = 1.13`` are ``gamma(15) = 17/15`` (with the captions'
    ``mu = 1``, Lemma 1) printed to two decimals: their ``C_s = 0.13333 = (gamma(15) + 1)/16``
    is the cost (4) at ``rho = 1``; those rows get ``critical_gamma(K, 1.0)``.

    Examples
    --------
    >>> table_row_parameters("lambda=0.01;K=15;gamma=1.13")
    (0.01, 15, 1.1333333333333333)
    """
    p = _parse_setting(setting_text)
    lam, K, g_printed = float(p["lambda"]), int(p["K"]), p["gamma"]
    g = float(g_printed)
    if g_printed == "1.13":
        g = _q.critical_gamma(K, 1.0)
    return lam, K, g


def decimals_of(printed: str) -> int:
    """Decimals of a number as printed: ``"0.05514"`` has 5."""
    return len(printed.split(".")[1]) if "." in printed else 0


def prints_as(expected_row, value: float) -> bool:
    """Whether ``value`` prints as the paper's number: within the expected row's tolerance.

    ``expected_row`` has the attributes ``paper`` (the text as printed) and ``tolerance``
    (a :class:`replication.records.Row`); the slack ``1e-9`` relative is the one
    :meth:`replication.records.Comparison.number` uses.
    """
    return abs(float(expected_row.paper) - value) <= expected_row.tolerance * (1 + 1e-9)


def format_verdicts(cmp, *claims) -> str:
    """One line per claim recorded in ``cmp``, given as ``(item, quantity)``: the status of
    its row (whatever its setting, so a run off the paper's setting shows its ``new`` row),
    then the claim; wrapped at 100 columns. A claim not recorded yet shows as such."""
    lines = []
    for item, quantity in claims:
        found = [r.status for r in cmp.rows if (r.item, r.quantity) == (item, quantity)]
        status = found[-1] if found else "not recorded"
        lines.append(textwrap.fill(f"{status:13s} {item}: {quantity}", 100,
                                   subsequent_indent=" " * 14))
    return "\n".join(lines)


def with_verdicts(text: str, cmp, *claims) -> str:
    """``text``, then the verdict lines of ``claims`` (:func:`format_verdicts`) if ``cmp`` is
    given."""
    return text if cmp is None else text + "\n" + format_verdicts(cmp, *claims)


def compact_setting(setting: str) -> str:
    """``"lambda=0.01;K=15;gamma=1.13"`` as the three columns ``lambda K gamma`` of a table."""
    v = _parse_setting(setting)
    return f"{v['lambda']:>6s} {v['K']:>2s} {v['gamma']:>5s}"


#: The header of :func:`compact_setting`'s columns.
COMPACT_HEAD = f"{'lambda':>6s} {'K':>2s} {'gamma':>5s}"


def state_tuple(space, i) -> tuple[int, int, int]:
    """The state ``(q, r, s)`` at position ``i`` of a robots state space."""
    return (int(space.q[i]), int(space.r[i]), int(space.s[i]))


def has_state(space, x) -> bool:
    """Whether ``x = (q, r, s)`` is a state of ``space``."""
    q, r, s = x
    return 0 <= q <= space.K and 0 <= r <= space.N and bool(space.index[q, r, s] >= 0)


def rounding_bound(residual: float, bound: float) -> str:
    """A rounding-level residual as a bound (its last digits depend on the CPU's kernels)."""
    return f"below {bound:.0e}" if residual < bound else f"{residual:.1e}"


def one_step_cost(model) -> np.ndarray:
    """``c(x)``, eq. (18), of a robots MDP (whose rewards are ``-c`` under either action)."""
    return -model.rewards.max(axis=1)
