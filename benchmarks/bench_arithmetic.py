"""Benchmark: the library's two arithmetic modes (``whittle_lib.arithmetic``) on the paths
they govern.

``ours`` is the default, native mode (NumPy's loops); ``reference`` the portable mode
(fdlibm in element-wise operations: the same bits on every machine), the same call in the same
run. The agreement column says how far the two results are apart: the elementary functions
differ by an ulp or so, and a decision taken on nearly equal priorities may flip.

* ``arithmetic.crawling_index.n1e6``: :func:`whittle_lib.models.crawling.whittle_index` of
  10^6 sources, one state each (a logarithm and an exponential per state, and the
  constants' logarithm and ``expm1`` per source);
* ``arithmetic.crawling_simulation.n1e6``: the Whittle index policy on 10^6 sources of the
  deterministic model, 10 periods, crawling ``N/100`` (few indices computed a period: the
  screening of ``WhittleRule``) and ``N/4`` (an index per source and period);
* ``arithmetic.crawling_simulation.stochastic``: Table I, 1,000 replications of the stochastic
  model, 10 periods (some 10^6 arrivals a period, an exponential each);
* ``arithmetic.lspe.paper_run``: one LSPE run of the 2019 paper's 10,000 periods (Python
  overhead of small arrays: the mode hardly matters).
"""

from __future__ import annotations

import numpy as np
from harness import case, compare

from whittle_lib import arithmetic
from whittle_lib.learning import LSPESettings, run_lspe
from whittle_lib.models import crawling, crawling_policies as policies


def _in_mode(portable: bool, func):
    def run():
        with arithmetic.portable(portable):
            return func()
    return run


def _relative(a, b) -> str:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return f"max rel diff {np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)):.1e}"


def _random_model(n: int, seed: int = 0) -> crawling.CrawlingModel:
    rng = np.random.default_rng(seed)
    return crawling.CrawlingModel(xi_mean=rng.uniform(0.05, 1.0, n), mu=rng.uniform(0.1, 1.0, n),
                                  arrival_rate=rng.uniform(10.0, 300.0, n))


@case("arithmetic.crawling_index.n1e6")
def crawling_index_million():
    model = _random_model(1_000_000)
    x = model.u_star * np.random.default_rng(1).random(model.n_sources)

    def index():
        return crawling.whittle_index(x, model.u, model.alpha)

    compare("arithmetic.crawling_index.n1e6 (native vs portable)", _in_mode(False, index),
            _in_mode(True, index), "portable mode (fdlibm)", _relative, repeats=5)


@case("arithmetic.crawling_simulation.n1e6")
def crawling_simulation_million():
    model = _random_model(1_000_000)
    rule = policies.WhittleRule(model)
    # M = N/100: WhittleRule.screened computes the index of few sources a period; M = N/4: of
    # every source (screening needs M <= N/16), where the mode shows
    for share in (100, 4):
        def run():
            return policies.simulate_crawling(model, rule, model.n_sources // share, 10).rewards

        compare(f"arithmetic.crawling_simulation.n1e6 (M=N/{share}, 10 periods)",
                _in_mode(False, run), _in_mode(True, run), "portable mode (fdlibm)", _relative,
                repeats=3)


@case("arithmetic.crawling_simulation.stochastic")
def crawling_simulation_stochastic():
    model = crawling.table_one()
    rule = policies.WhittleRule(model)

    def run():
        return policies.simulate_crawling(model, rule, 1, 10, stochastic=True,
                                          replications=1_000, rng=5).rewards

    compare("arithmetic.crawling_simulation.stochastic (Table I, R=1000, 10 periods)",
            _in_mode(False, run), _in_mode(True, run), "portable mode (fdlibm)", _relative,
            repeats=3)


@case("arithmetic.lspe.paper_run")
def lspe_paper_run():
    model = crawling.table_one()

    def run():
        return run_lspe(model, LSPESettings(), rng=1).rewards

    compare("arithmetic.lspe.paper_run (10,000 periods)", _in_mode(False, run),
            _in_mode(True, run), "portable mode (fdlibm)",
            lambda a, b: f"mean reward {np.mean(a):.2f} vs {np.mean(b):.2f}", repeats=2)
