"""Tests of whittle_lib.arms: validation of RestlessArm and its read-only storage."""

import numpy as np
import pytest

from whittle_lib.arms import ROW_SUM_TOL, RestlessArm

P_OK = [[0.5, 0.5], [0.25, 0.75]]
R_OK = [0.0, 1.0]


def test_valid_arm_is_stored_as_read_only_float_copies():
    P0 = np.array(P_OK)
    arm = RestlessArm(P0=P0, P1=[[1, 0], [0, 1]], R0=[0, 0], R1=R_OK)
    assert arm.n_states == 2
    for array in (arm.P0, arm.P1, arm.R0, arm.R1):
        assert array.dtype == np.float64
        assert not array.flags.writeable
    P0[0, 0] = 0.9  # the caller's array is copied, not aliased
    assert arm.P0[0, 0] == 0.5
    with pytest.raises(ValueError):
        arm.P1[0, 0] = 0.5


def test_row_sums_within_the_stated_tolerance_are_accepted():
    # an error of a tenth of ROW_SUM_TOL is rounding, not a modelling error
    eps = ROW_SUM_TOL / 10
    arm = RestlessArm(P0=[[0.5 + eps, 0.5], [0.0, 1.0]], P1=P_OK, R0=R_OK, R1=R_OK)
    assert arm.P0[0].sum() == pytest.approx(1.0, abs=ROW_SUM_TOL)


@pytest.mark.parametrize("kwargs, message", [
    (dict(P0=[[0.5, 0.5], [0.25, 0.5]]), r"P0 row of state 1 sums to 0\.75"),
    (dict(P1=[[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]), r"P1 must be a square matrix"),
    (dict(P1=[[1.0]]), r"P1 must have shape \(2, 2\)"),
    (dict(P0=[[0.5, 0.5], [1.5, -0.5]]), r"P0 has a negative probability in the row of state 1"),
    (dict(P1=[[0.5, 0.5], [np.nan, 0.5]]), r"P1 has a non-finite entry in the row of state 1"),
    (dict(R0=[0.0, 1.0, 2.0]), r"R0 must have shape \(2,\)"),
    (dict(R1=[0.0, np.inf]), r"R1 is not finite in state 1"),
    (dict(P0=np.zeros((0, 0)), P1=np.zeros((0, 0)), R0=[], R1=[]), r"at least one state"),
])
def test_invalid_arms_raise_value_error_naming_parameter_and_state(kwargs, message):
    args = dict(P0=P_OK, P1=P_OK, R0=R_OK, R1=R_OK) | kwargs
    with pytest.raises(ValueError, match=message):
        RestlessArm(**args)


def test_rested_arm_freezes_and_pays_nothing_when_passive():
    arm = RestlessArm.rested(P_OK, R_OK)
    np.testing.assert_array_equal(arm.P0, np.eye(2))
    np.testing.assert_array_equal(arm.R0, np.zeros(2))
    np.testing.assert_array_equal(arm.P1, P_OK)
    with pytest.raises(ValueError, match="P1 must be a square matrix"):
        RestlessArm.rested([0.5, 0.5], [1.0, 2.0])


# --- converters: a layout the shapes cannot tell must be named (issue 32) ----------------------

from whittle_lib import arms as arms_module  # noqa: E402


def _arm(n, seed):
    rng = np.random.default_rng(seed)
    P0, P1 = rng.dirichlet(np.ones(n), size=(2, n))
    return RestlessArm(P0, P1, *rng.normal(size=(2, n)))


def _same(a, b):
    for name in ("P0", "P1", "R0", "R1"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


CONVERTERS = [
    # converter, the peer's layout name, the peer's arrays, the arrays action first
    (arms_module.from_markovianbandit, "markovianbandit",
     lambda a: arms_module.to_markovianbandit(a),
     lambda a: (np.stack([a.P0, a.P1]), np.stack([a.R0, a.R1]))),
    (arms_module.from_mdptoolbox, "mdptoolbox",
     lambda a: arms_module.to_mdptoolbox(a),
     lambda a: (np.stack([a.P0, a.P1]), np.stack([a.R0, a.R1]))),
    (arms_module.from_quantecon, "quantecon",
     lambda a: arms_module.to_quantecon(a),
     lambda a: (np.stack([a.R0, a.R1]), np.stack([a.P0, a.P1]))),
]


@pytest.mark.parametrize("convert, peer, theirs, first", CONVERTERS)
def test_a_two_state_arm_needs_its_layout_named(convert, peer, theirs, first):
    arm = _arm(2, 1)
    # both layouts have the same shapes at 2 states: a guess would build a valid, wrong arm
    with pytest.raises(ValueError, match=rf"with 2 states both layouts have these shapes.*"
                                         rf"layout='{peer}' or layout='action_first'"):
        convert(*theirs(arm))
    with pytest.raises(ValueError, match="name it"):
        convert(*first(arm))
    _same(arm, convert(*theirs(arm), layout=peer))
    _same(arm, convert(*first(arm), layout="action_first"))
    # the wrong name gives another (valid) arm: which is why it must be said
    wrong = convert(*theirs(arm), layout="action_first")
    assert not np.array_equal(wrong.R1, arm.R1) or not np.array_equal(wrong.P1, arm.P1)


@pytest.mark.parametrize("convert, peer, theirs, first", CONVERTERS)
@pytest.mark.parametrize("n", [1, 3, 5])
def test_other_sizes_are_told_by_their_shapes(convert, peer, theirs, first, n):
    arm = _arm(n, n)
    _same(arm, convert(*theirs(arm)))
    _same(arm, convert(*theirs(arm), layout=peer))
    _same(arm, convert(*first(arm), layout="action_first"))
    # the action-first arrays without the keyword: refused, with the keyword to pass
    with pytest.raises(ValueError, match="the action-first layout: pass layout='action_first'"):
        convert(*first(arm))
    with pytest.raises(ValueError, match=f"not the shapes of layout='{peer}'"):
        convert(*first(arm), layout=peer)


@pytest.mark.parametrize("convert", [c[0] for c in CONVERTERS])
def test_the_layout_keyword_is_checked(convert):
    arm = _arm(3, 2)
    args = CONVERTERS[[c[0] for c in CONVERTERS].index(convert)][2](arm)
    with pytest.raises(ValueError, match="layout must be one of"):
        convert(*args, layout="sas")
    with pytest.raises(TypeError, match="layout must be one of"):
        convert(*args, layout=1)


def test_scipy_sparse_matrices_are_densified():
    from scipy import sparse

    arm = _arm(4, 3)
    for fmt in (sparse.csr_matrix, sparse.csr_array, sparse.coo_matrix, sparse.lil_array):
        _same(arm, RestlessArm(fmt(arm.P0), fmt(arm.P1), arm.R0, arm.R1))
        # pymdptoolbox takes P as a list of sparse matrices, one per action
        P, R = arms_module.to_mdptoolbox(arm)
        _same(arm, arms_module.from_mdptoolbox([fmt(P[0]), fmt(P[1])], R))
        _same(arm, arms_module.from_mdptoolbox(np.array([fmt(P[0]), fmt(P[1])], dtype=object),
                                               fmt(R)))
    with pytest.raises(ValueError, match="P0 has a negative probability"):
        RestlessArm(sparse.csr_matrix(-arm.P0), arm.P1, arm.R0, arm.R1)


def test_restless_arm_prints_short_and_fingerprints_its_contents():
    arm = _arm(300, 4)
    assert repr(arm) == f"RestlessArm(n_states=300, fingerprint={arm.fingerprint[:12]!r})"
    twin = RestlessArm(arm.P0, arm.P1, arm.R0, arm.R1)
    assert twin.fingerprint == arm.fingerprint
    other = RestlessArm(arm.P0, arm.P1, arm.R0, arm.R1 + 1e-15 * (arm.R1 != 0))
    assert other.fingerprint != arm.fingerprint
