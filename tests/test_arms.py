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
