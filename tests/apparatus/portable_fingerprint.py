"""Print a fingerprint of the library's CPU-sensitive computations (run as a script).

``tests/apparatus/test_portable.py`` runs this under the native machine and under emulated ones
(``replication/machines.py``) and requires the same output: the learning runs and simulations that
the notebooks store give the same bits whatever the BLAS kernel and the NumPy SIMD loops. It runs
in portable mode (``whittle_lib.set_portable(True)``), as the notebooks do; the library's
default, native mode, promises no bits across machines (``whittle_lib.arithmetic``).
"""

import hashlib

import numpy as np

import whittle_lib as wl
from whittle_lib import _portable as fp
from whittle_lib.models import crawling, crawling_policies as policies
from whittle_lib.learning import (CrawlerIndexProblem, LSPESettings, learn_whittle_index,
                                  run_lspe, run_lspe_many)


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=float)).tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    wl.set_portable(True)
    assert wl.is_portable()
    rng = np.random.default_rng(11)
    x = rng.uniform(-5.0, 5.0, 4096)
    A = rng.normal(size=(3, 9, 9))
    M = (A[..., :, None, :] * A[..., None, :, :]).sum(axis=-1) + np.eye(9)
    y = rng.normal(size=(3, 9))
    # control: NumPy's own loops, which do depend on the CPU (the test checks the emulation bites)
    print("control numpy", digest(np.exp(x), np.log(np.abs(x))))
    print("elementary", digest(fp.exp(x), fp.expm1(x), fp.log(np.abs(x)), fp.log1p(np.abs(x)),
                               fp.power(np.abs(x), 2 / 3), fp.cos(x)))
    print("linear algebra", digest(fp.matvec(A, y), fp.dot(A[:, 0], y), fp.solve_spd(M, y)))
    model = crawling.table_one()
    print("model", digest(model.alpha, model.u, model.u_star))
    utility = crawling.sample_new_utility(model, 200, rng=1)
    print("arrivals", digest(utility))
    print("index", digest(crawling.whittle_index(utility, model.u, model.alpha)))
    sim = policies.simulate_crawling(model, policies.WhittleRule(model), 1, 300, stochastic=True,
                            replications=3, rng=2)
    print("simulation", digest(sim.rewards))
    # notebook 03's Table II and extension sweep run their policies as slots of one simulation
    U = crawling.draw_new_utilities(model, 300, 3, rng=2)
    slots = policies.SlotRules([policies.WhittleRule(model), policies.ExpectedValueRule(model),
                                policies.RoundRobinRule(model.n_sources, 1)])
    many = policies.simulate_crawling_many(model, slots, [1, 2, 1], 300, slots=3, stochastic=True,
                                  replications=3, utilities=U)
    print("simulation stacked", digest(*[r.rewards for r in many]))
    run = run_lspe(model, LSPESettings(n_steps=400, record_every=50), rng=3)
    print("lspe", digest(run.rewards, run.q, run.r))
    # notebook 02's runs go stacked (run 0 is the run above, bit for bit, tests/library/test_lspe.py)
    stacked = run_lspe_many(model, [LSPESettings(n_steps=400, record_every=50)] * 2, [3, 5])
    print("lspe stacked", digest(*[a for r in stacked for a in (r.rewards, r.q, r.r)]))
    learned = learn_whittle_index(CrawlerIndexProblem(model, p=0.1), 400, rng=4,
                                  batch_shape=(2, model.n_sources), record_every=100)
    print("index learning", digest(learned.y, learned.r, learned.beta))
    if np.longdouble is np.float64:
        # forced by test_portable_elementary (before any import): scipy.sparse's lil matrices,
        # which the policy evaluations below build, dispatch on numpy.longdouble and fail
        # under that substitution, a limit of the emulation (the library uses no long double)
        return
    # notebook 06: rules built from the relaxation's solution (linear solves through BLAS) on
    # Hong et al.'s eight-state conveyor, whose LP is degenerate, run in count mode, where a
    # probability of 1 - 1e-16 instead of 1 sends a binomial draw down another path
    right, left = 0.1, [0, 1.0, 0.48, 0.47, 0.46, 0.45, 0.44, 0.43]
    P = np.zeros((2, 8, 8))
    for s in range(8):
        good, bad = (1, 0) if s < 4 else (0, 1)
        P[good, s, (s + 1) % 8], P[good, s, s] = right, 1 - right
        P[bad, s, max(s - 1, 0) if s else 1], P[bad, s, s] = left[s], 1 - left[s]
    eight = wl.RestlessArm(P0=P[0], P1=P[1], R0=[0] * 7 + [0.1], R1=[0] * 8)
    start = np.array([0, 33, 67, 0, 0, 0, 0, 0])
    runs = []
    for rule in (wl.ftva([eight] * 100, 50, activation="exactly"),
                 wl.lp_priority([eight] * 100, 50, activation="exactly")):
        runs.append(wl.simulate_counts(eight, start, rule, 50, 300, replications=4,
                                       activation="exactly", rng=6).rewards)
    print("policies", digest(*runs))


if __name__ == "__main__":
    main()
