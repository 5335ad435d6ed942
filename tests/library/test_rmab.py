"""The core for N arms: top-M, the sampler, the simulator and the relaxation bound.

References: the previous top-M implementations (the crawling policies' partition-based one and
the caching policies' sort-based one), the exact long-run average of the joint Markov chain of
small systems, and the relaxation as a linear program over occupation measures (SciPy HiGHS).
"""


import numpy as np
import pytest
from scipy import optimize

from whittle_lib import arms, indices, mdp, rmab
from whittle_lib.models import crawling_policies as policies

from joint_chain import index_policy_chain


def _random_arm(n, seed):
    rng = np.random.default_rng(seed)
    P0, P1 = rng.dirichlet(np.ones(n), size=(2, n))
    R0, R1 = rng.normal(size=(2, n))
    return arms.RestlessArm(P0, P1, R0, R1)


def _top_m_by_partition(priority, M):
    """The crawling policies' former top-M (numpy.partition per row, ties to the lowest
    number), kept as an oracle for the sort-based one."""
    n = priority.shape[-1]
    out = np.zeros(priority.shape, dtype=bool)
    if M == 0:
        return out
    for row, p in enumerate(priority):
        cut = np.partition(p, n - M)[n - M]
        above = p > cut
        tied = np.flatnonzero(p == cut)
        above[tied[:M - int(np.count_nonzero(above))]] = True
        out[row] = above
    return out


@pytest.mark.parametrize("seed", range(20))
def test_top_m_selects_what_the_crawling_policies_selected(seed):
    rng = np.random.default_rng(seed)
    p = rng.integers(0, 4, size=(6, 7)).astype(float)   # many ties
    for M in range(8):
        np.testing.assert_array_equal(rmab.top_m(p, M), _top_m_by_partition(p, M))
    assert policies.top_m is rmab.top_m


def test_top_m_with_a_threshold_is_the_caching_selection():
    rng = np.random.default_rng(0)
    p = rng.integers(-2, 3, size=(50, 5)).astype(float)
    for M in range(6):
        # caching: the M largest positive priorities, ties to the lower content number
        order = np.argsort(-p, axis=-1, kind="stable")
        rank = np.argsort(order, axis=-1, kind="stable")
        np.testing.assert_array_equal(rmab.top_m(p, M, threshold=0.0), (rank < M) & (p > 0))


def test_top_m_names_bad_arguments():
    with pytest.raises(ValueError, match="M must be an integer"):
        rmab.top_m([1.0, 2.0], 3)
    with pytest.raises(ValueError, match="ties must be"):
        rmab.top_m([1.0, 2.0], 1, ties="first")
    with pytest.raises(ValueError, match="priority contains nan"):
        rmab.top_m([np.nan, 2.0], 1)


def _joint_average(arm_list, priorities, M):
    """Exact long-run average reward of the index policy: the joint chain's stationary law."""
    _, P, r, _ = index_policy_chain(arm_list, priorities, M)
    return float(mdp.stationary_distribution(P) @ r)


def test_simulated_index_policy_matches_the_exact_long_run_average():
    arm_list = [_random_arm(3, s) for s in range(3)] + [_random_arm(2, 7)]   # mixed sizes
    idx = [indices.whittle_indices(a, discount=None).indices for a in arm_list]
    exact = _joint_average(arm_list, idx, 2)
    # the chain activates exactly M arms (ties to the lowest number): so does the simulation
    sim = rmab.simulate(rmab.FiniteArms(arm_list), rmab.IndexRule(idx), 2, 20_000,
                        replications=4, activation="exactly", rng=11)
    mean = sim.average_reward.mean()
    se = sim.average_reward.std(ddof=1) / 2
    # 4 replications of 20 000 periods: the mean is within 5 standard errors (and the
    # standard error below 0.01) unless the simulator is wrong
    assert abs(mean - exact) < 5 * se + 1e-3 and se < 0.01


def test_simulation_is_reproducible_and_records_the_budget():
    arm_list = [_random_arm(4, s) for s in range(5)]
    rule = rmab.IndexRule([indices.whittle_indices(a, discount=None).indices for a in arm_list])
    a = rmab.simulate(rmab.FiniteArms(arm_list), rule, 2, 100, replications=3, record=True,
                      activation="exactly", rng=5)
    b = rmab.simulate(rmab.FiniteArms(arm_list), rule, 2, 100, replications=3,
                      activation="exactly", rng=5)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    assert (a.active.sum(-1) == 2).all()


def _relaxation_lp(arm_list, M):
    """max sum_i sum_{x,a} y_i(x,a) r_i(x,a) over occupation measures y_i with
    sum_i sum_x y_i(x,1) = M (the relaxation as a linear program)."""
    c, A_eq, b_eq, blocks = [], [], [], []
    total = sum(2 * a.n_states for a in arm_list)
    offset = 0
    budget = np.zeros(total)
    for a in arm_list:
        n = a.n_states
        c += list(-a.R0) + list(-a.R1)
        for y in range(n):       # balance: sum_a y(y, a) = sum_{x,a} y(x,a) P_a[x, y]
            row = np.zeros(total)
            row[offset + y] += 1
            row[offset + n + y] += 1
            row[offset:offset + n] -= a.P0[:, y]
            row[offset + n:offset + 2 * n] -= a.P1[:, y]
            A_eq.append(row)
            b_eq.append(0.0)
        row = np.zeros(total)
        row[offset:offset + 2 * n] = 1
        A_eq.append(row)
        b_eq.append(1.0)
        budget[offset + n:offset + 2 * n] = 1
        offset += 2 * n
    A_eq.append(budget)
    b_eq.append(M)
    res = optimize.linprog(c, A_eq=np.array(A_eq), b_eq=b_eq, bounds=(0, None),
                           method="highs")
    return -res.fun


@pytest.mark.parametrize("seed", range(4))
def test_relaxation_bound_equals_the_linear_program(seed):
    arm_list = [_random_arm(3, 10 * seed + i) for i in range(4)]
    for M in range(5):
        # HiGHS solves to 1e-9 relative; the dual's kinks are exact
        assert rmab.relaxation_bound(arm_list, M, activation="exactly").bound == pytest.approx(
            _relaxation_lp(arm_list, M), abs=1e-7)


def test_index_policy_earns_at_most_the_relaxation_bound():
    arm_list = [_random_arm(3, s) for s in range(4)]
    idx = [indices.whittle_indices(a, discount=None).indices for a in arm_list]
    exact = _joint_average(arm_list, idx, 2)
    assert exact <= rmab.relaxation_bound(arm_list, 2).bound + 1e-12


class _Rotation:
    """Deterministic toy dynamics: arm i holds a counter; active resets it, passive adds 1 (mod 5).
    The reward of an active arm is its counter. Its step draws nothing."""

    n_arms = 3

    def initial(self, replications):
        return np.array([0, 2, 4])

    def step(self, states, active, rng):
        return np.where(active, 0, (states + 1) % 5), float(states[active].sum())

    def observe(self, states):
        return np.array(states, copy=True)


def test_periodic_orbit_is_the_long_run_average_of_the_simulated_trajectory():
    rule = lambda states, t: states.astype(float)          # noqa: E731
    orbit = rmab.periodic_orbit(_Rotation(), rule, 1)
    run = rmab.simulate(_Rotation(), rule, 1, orbit.transient + 50 * orbit.period,
                        replications=None, rng=0)
    cycle = run.rewards[orbit.transient:]
    assert orbit.average_reward == pytest.approx(cycle.mean(), rel=1e-12)
    np.testing.assert_array_equal(run.rewards[:orbit.rewards.size], orbit.rewards)
    with pytest.raises(ValueError, match="^time_period must be"):
        rmab.periodic_orbit(_Rotation(), rule, 1, time_period=0)
    with pytest.raises(RuntimeError, match="no repeated state"):
        rmab.periodic_orbit(_Rotation(), rule, 1, max_periods=2)


def test_the_crawling_orbit_is_the_core_orbit_on_the_crawling_dynamics():
    from whittle_lib.models import crawling
    model = crawling.table_one()
    rule = policies.WhittleRule(model)
    old = policies.crawling_orbit(model, rule, 2)
    core = rmab.periodic_orbit(crawling.CrawlingDynamics(model),
                               lambda s, t: rule(s.x, s.age, t), 2)
    assert old.average_reward == core.average_reward and old.period == core.period
    np.testing.assert_array_equal(old.active, core.active)
