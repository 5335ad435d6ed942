"""Tests of whittle_lib.papers.crawling_2015 and of the base-utility laws it sweeps."""

import numpy as np
import pytest

from whittle_lib import crawling, policies
from whittle_lib.papers import crawling_2015 as c15


# -- the laws of the base utility (crawling.sample_new_utility) ---------------------------------

@pytest.mark.parametrize("reading", c15.BASE_LAW_READINGS, ids=lambda r: r.label)
def test_every_law_keeps_the_mean_utility_of_eq1(reading):
    # E[U_i] = u_i (eq. 1) whatever the law, since each has mean xi-bar_i. 4000 periods of
    # Lambda = 250: the sample mean's standard error is sd(U)/sqrt(4000); we allow 5 of them
    # (estimated from the sample; for lomax a = 1.5 the variance is infinite, so that law is
    # checked against a wider 5 % band: its sample mean converges like n**(-1/3)).
    model = crawling.table_one()
    U = crawling.sample_new_utility(model, 4000, rng=12, **reading.kwargs)
    assert U.shape == (4000, 4) and np.all(U >= 0)
    if reading.shape == 1.5:
        assert np.all(np.abs(U.mean(axis=0) / model.u - 1) < 0.05)
    else:
        se = U.std(axis=0, ddof=1) / np.sqrt(U.shape[0])
        assert np.all(np.abs(U.mean(axis=0) - model.u) <= 5 * se + 1e-12)


def test_heavier_laws_are_noisier_than_the_exponential():
    # coefficient of variation of xi: 1 (exponential) < 1.31 (lognormal s=1) < 1.73 (lomax a=3);
    # one content per period (Lambda small) so U is close to a single xi
    model = crawling.CrawlingModel([1.0], [0.01], [1.0])
    sd = {}
    for law, shape in (("exponential", None), ("lognormal", 1.0), ("lomax", 3.0)):
        U = crawling.sample_new_utility(model, 40000, rng=3, base_law=law, base_shape=shape)
        sd[law] = U.std()
    assert sd["exponential"] < sd["lognormal"] < sd["lomax"]


def test_deterministic_law_has_only_arrival_noise():
    # with xi = xi-bar and mu -> 0 each content is worth ~xi-bar: U / xi-bar is a Poisson count
    model = crawling.CrawlingModel([2.0], [1e-9], [7.0])
    U = crawling.sample_new_utility(model, 500, rng=5, base_law="deterministic")
    assert np.allclose(U / 2.0, np.round(U / 2.0), atol=1e-6)


def test_exponential_stream_is_unchanged_by_the_new_laws():
    # the default law draws the same numbers as before the option existed (same rng calls)
    model = crawling.table_one()
    a = crawling.sample_new_utility(model, 50, rng=9)
    b = crawling.sample_new_utility(model, 50, rng=9, base_law="exponential", base_shape=None)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("law, shape, message", [
    ("pareto", None, "law must be one of"),
    ("lomax", 1.0, "base_shape of the lomax law must be a number > 1"),
    ("lognormal", -1.0, "base_shape of the lognormal law must be a number > 0"),
    ("exponential", 2.0, "base_shape must be None"),
])
def test_bad_law_or_shape_raises_naming_it(law, shape, message):
    with pytest.raises(ValueError, match=message):
        crawling.sample_new_utility(crawling.table_one(), 2, rng=0, base_law=law, base_shape=shape)
    with pytest.raises(ValueError, match=message):
        c15.BaseLawReading("x", law, shape)


# -- the Fig. 4 sweep --------------------------------------------------------------------------

def test_skip_sweep_counts_and_is_reproducible():
    kw = dict(window=10, runs=20, periods=60, replications=2, burn_in=10)
    a = c15.skip_sweep([25.0], c15.BASE_LAW_READINGS[:2], rng=4, **kw)
    b = c15.skip_sweep([25.0], c15.BASE_LAW_READINGS[:2], rng=4, **kw)
    assert a == b
    assert [s.law.label for s in a] == ["deterministic xi", "exponential xi"]
    for s in a:
        assert 0 <= s.runs_with_skip <= s.runs == 20
        assert s.share_low <= s.share <= s.share_high
        assert s.periods == 2 * 50 and 0 <= s.long_run_skip <= 1
        assert s.holds == (2 * s.runs_with_skip > s.runs)


def test_skip_sweep_with_every_source_crawled_never_skips():
    # M = N: every source crawled every period (invariant of top-M)
    (s,) = c15.skip_sweep([25.0], c15.BASE_LAW_READINGS[1:2], M=4, window=5, runs=10, periods=20,
                          replications=2, burn_in=0, rng=1)
    assert s.runs_with_skip == 0 and s.long_run_skip == 0.0 and not s.holds


def test_skip_sweep_validates():
    with pytest.raises(ValueError, match="burn_in"):
        c15.skip_sweep([25.0], rng=0, periods=10, burn_in=10)
    with pytest.raises(ValueError, match="window"):
        c15.skip_sweep([25.0], rng=0, window=0)


# -- one run's spread --------------------------------------------------------------------------

def test_one_run_spread_when_every_source_is_crawled():
    # M = N: the reward of a period is the total new utility U (i.i.d. over periods), of mean
    # sum(u) (eq. 1); our mean over 4 x 400 periods is within 5 of its standard errors of it,
    # and the batch-means sd of one run of 400 periods is that of 400 i.i.d. U within 30 %
    model = crawling.table_one()
    (sp,) = c15.one_run_spread(model, policies.CurrentValueRule(), 4,
                               laws=c15.BASE_LAW_READINGS[1:2], periods=401, replications=4,
                               burn_in=1, run_length=400, batch=20, rng=2)
    total = model.u.sum()
    U = crawling.sample_new_utility(model, 4000, rng=3).sum(axis=1)
    assert sp.low < sp.mean < sp.high and sp.run_length == 400
    assert abs(sp.mean - total) < 5 * sp.sd_one_run / 2     # mean of 4 runs: sd / sqrt(4)
    assert abs(sp.sd_one_run / (U.std() / np.sqrt(400)) - 1) < 0.3
    assert sp.contains(sp.mean) and not sp.contains(sp.high + 1.0)
    assert sp.contains(sp.high + 1.0, tolerance=1.0)


# -- horizons and the printed 2018 form --------------------------------------------------------

def test_one_run_spread_validates():
    model = crawling.table_one()
    with pytest.raises(ValueError, match="batch"):
        c15.one_run_spread(model, policies.CurrentValueRule(), 1, periods=20, replications=1,
                           burn_in=0, batch=20, rng=0)


def test_horizons_matching():
    r = np.array([0.0, 2.0, 4.0])             # running averages 0, 1, 2
    assert c15.horizons_matching(r, 1.0, 0.0).tolist() == [2]
    assert c15.horizons_matching(r, 1.0, 1.0).tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="tolerance"):
        c15.horizons_matching(r, 1.0, -1.0)


def test_index_2018_exceeds_the_index_by_u_alpha_zeta_on_visited_states():
    # the 2018 bracket is Theorem 1 plus u alpha^zeta: with the exact zeta = k on x_k
    model = crawling.table_one()
    k = np.arange(1, 15)
    u, alpha = model.u[:, None], model.alpha[:, None]
    x = crawling.visited_states(u, alpha, k)
    extra = c15.index_2018_with(k, x, u, alpha) - crawling.whittle_index(x, u, alpha)
    np.testing.assert_allclose(extra, u * alpha ** k, rtol=1e-9, atol=1e-9 * model.u_star.max())
    # with the printed floating ceiling it is crawling.index_2018
    zeta = crawling._eta_printed(x, u, alpha)
    np.testing.assert_allclose(c15.index_2018_with(zeta, x, u, alpha), crawling.index_2018(x, u, alpha),
                               rtol=1e-12)
