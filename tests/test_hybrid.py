"""HybridModel (perfkit.model.forms.hybrid) on Chapter 5 rows: it reads exactly the columns of its roles and the
constants of ``fixed``, checks every value it uses, names a bad setting, and refuses data that contradict its
constants."""
import warnings

import numpy as np
import pytest

from perfkit.model.forms.hybrid import HybridModel
from perfkit.model.uncertainty.conformal import ConformalRegressor
from perfkit.model.roles import IgnoredColumnWarning
from perfkit.schema import ROLES
from tests.frames import measured_rows as _rows


CH5 = ROLES["ch5"]


FIXED = {"stride": 2, "volume": "48x56x48", "pool_size": 1}


@pytest.fixture(scope="module")
def ch5_hybrid():
    """120 Chapter 5 rows (role columns only) and a hybrid fitted on them with the file's constants in fixed."""
    X, y = _rows("ch5_resattnet3d.csv", CH5, 120)
    return X, y, HybridModel("resattnet3d", **CH5, fixed=FIXED).fit(X, y)


@pytest.mark.parametrize("change, match", [
    (dict(n_train=-60000), r"column 'n_train' is -60000 in row 0, but the model uses n_train = 431"),
    (dict(n_train=0), r"column 'n_train' is 0 in row 0, but the model uses n_train = 431"),
    (dict(n_train=float("nan")), r"column 'n_train' is nan in row 0"),
    (dict(n_train=60000), r"column 'n_train' is 60000 in row 0, but the model uses n_train = 431 \(dataset size\)"),
    (dict(stride=1), r"column 'stride' is 1 in row 0, but the model uses stride = 2 \(fixed=\)"),
    (dict(stride="two"), r"column 'stride' is 'two' in row 0"),
    (dict(volume="32x32x32"), r"column 'volume' is '32x32x32' in row 0, but the model uses volume = 48x56x48"),
    (dict(pool_size=2), r"column 'pool_size' is 2 in row 0, but the model uses pool_size = 1"),
    (dict(workers=0.5), r"column 'workers': value 0.5 in row 0 is not a whole number >= 1"),
    (dict(workers=0), r"extrinsic column 'workers': value 0 in row 0 must be > 0"),
    (dict(workers=float("nan")), r"extrinsic column 'workers': missing or non-finite value nan in row 0"),
    (dict(workers="many"), r"extrinsic column 'workers': non-numeric value 'many' in row 0"),
    (dict(batch_size=-3), r"extrinsic column 'batch_size': value -3 in row 0 must be > 0"),
    (dict(batch_size=2.5), r"column 'batch_size': value 2.5 in row 0 is not a whole number >= 1"),
    (dict(kernel_size=0), r"numeric column 'kernel_size': value 0 in row 0 must be > 0"),
    (dict(kernel_size=2.5), r"resattnet3d: row 0: kernel_size: expected an integer >= 1, got 2.5"),
    (dict(num_filters=float("inf")), r"numeric column 'num_filters': missing or non-finite value inf in row 0"),
    (dict(padding="full"), r"resattnet3d: row 0: padding: expected one of \['valid', 'same'\], got 'full'"),
    (dict(padding=None), r"categorical column 'padding': missing value"),
])
def test_predict_checks_every_value_it_uses(ch5_hybrid, change, match):
    X, _, m = ch5_hybrid
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IgnoredColumnWarning)
        with pytest.raises(ValueError, match=match):
            m.predict(X.head(3).assign(**change))


@pytest.mark.parametrize("drop", ["workers", "batch_size", "kernel_size", "padding", "num_filters"])
def test_predict_refuses_a_frame_without_one_of_its_columns(ch5_hybrid, drop):
    X, _, m = ch5_hybrid
    with pytest.raises(ValueError, match=rf"column '{drop}' not found"):
        m.predict(X.head(3).drop(columns=[drop]))


@pytest.mark.parametrize("extra", [dict(n_train=431), dict(stride=2), dict(volume="48x56x48"), dict(pool_size=1),
                                   dict(foo=7), dict(steps_per_epoch=-1, dataset="mnist")])
def test_columns_the_model_does_not_read_change_nothing_and_are_named(ch5_hybrid, extra):
    """A column that is no column of the model gives the same prediction (it agrees with the model's constant, or
    is no input of the cost model) and an IgnoredColumnWarning naming it."""
    X, _, m = ch5_hybrid
    base = m.predict(X.head(5))
    with pytest.warns(IgnoredColumnWarning, match=rf"ignores column\(s\) \[{list(extra)[0]!r}"):
        assert np.array_equal(m.predict(X.head(5).assign(**extra)), base)


def test_a_frame_of_the_model_columns_warns_about_nothing(ch5_hybrid):
    X, _, m = ch5_hybrid
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pred = m.predict(X)
    assert np.all(np.isfinite(pred) & (pred > 0))


def test_workers_beyond_the_fitted_range_are_flagged(ch5_hybrid):
    """workers is a column of the model, so the intervals' extrapolation guard sees it."""
    X, y, _ = ch5_hybrid
    c = ConformalRegressor(HybridModel("resattnet3d", **CH5, fixed=FIXED), n_splits=3).fit(X, y)
    with pytest.warns(UserWarning, match=r"'workers': 1 above the fitted max 3"):
        iv = c.predict_interval(X.head(1).assign(workers=64), 0.9)
    assert bool(iv["extrapolated"].iloc[0])


@pytest.mark.parametrize("kw, match", [
    (dict(fixed={**FIXED, "strid": 1}), r"fixed: 'strid' is not an input of the resattnet3d cost model .* did you "
                                        r"mean 'stride'\?"),
    (dict(fixed={**FIXED, "colour": "red"}), r"fixed: 'colour' is not an input of the resattnet3d cost model"),
    (dict(fixed={**FIXED, "kernel_size": 3}), r"fixed: 'kernel_size' is also a numeric column of the model"),
    (dict(fixed={**FIXED, "padding": "same"}), r"fixed: 'padding' is also a categorical column of the model"),
    (dict(fixed={**FIXED, "stride": float("nan")}), r"fixed\['stride'\]: expected a whole number >= 1, got nan"),
    (dict(fixed={**FIXED, "stride": 0}), r"fixed\['stride'\]: expected a whole number >= 1, got 0"),
    (dict(fixed={**FIXED, "stride": 1.5}), r"fixed\['stride'\]: expected a whole number >= 1, got 1.5"),
    (dict(fixed={**FIXED, "stride": True}), r"fixed\['stride'\]: expected a whole number >= 1, got True"),
    (dict(fixed={**FIXED, "stride": "2"}), r"fixed\['stride'\]: expected a whole number >= 1, got '2'"),
    (dict(fixed={**FIXED, "volume": ""}), r"fixed\['volume'\]: expected a non-empty string or three sizes"),
    (dict(fixed={**FIXED, "volume": [48, 56]}), r"fixed\['volume'\]: expected a non-empty string or three sizes"),
    (dict(fixed={**FIXED, "n_train": -5}), r"fixed\['n_train'\]: expected a whole number >= 1, got -5"),
    (dict(fixed={**FIXED, "n_train": 431}, n_train=None), r"fixed: 'n_train' is read only with n_train='auto'"),
    (dict(fixed=None), r"resattnet3d: the cost model needs column\(s\) \['stride', 'volume'\], which are neither"),
    (dict(fixed=FIXED, regimes=["stride=min"]), r"regimes: 'stride=min' names column 'stride', which is not a "
                                                r"column of the model"),
])
def test_bad_settings_are_one_error_naming_them(ch5_hybrid, kw, match):
    X, y, _ = ch5_hybrid
    with pytest.raises(ValueError, match=match):
        HybridModel("resattnet3d", **CH5, **kw).fit(X, y)


@pytest.mark.parametrize("change, fixed, match", [
    (dict(stride=2), {**FIXED, "stride": 1}, r"column 'stride' is 2 in row 0, but the model uses stride = 1"),
    (dict(volume="64x64x64"), FIXED, r"column 'volume' is '64x64x64' in row 0"),
    (dict(pool_size=1), {"stride": 2, "volume": "48x56x48"}, r"column 'pool_size' is an input of the resattnet3d "
                                                             r"cost model but neither a column of the model"),
    (dict(n_train=200), FIXED, r"column 'n_train' is 200 in row 0, but the model uses n_train = 431"),
])
def test_fit_refuses_data_that_contradict_the_constants(ch5_hybrid, change, fixed, match):
    X, y, _ = ch5_hybrid
    with pytest.raises(ValueError, match=match):
        HybridModel("resattnet3d", **CH5, fixed=fixed).fit(X.assign(**change), y)


def test_fit_accepts_data_columns_that_agree_with_the_constants(ch5_hybrid):
    X, y, m = ch5_hybrid
    again = HybridModel("resattnet3d", **CH5, fixed=FIXED).fit(X.assign(stride=2, volume="48x56x48", n_train=431), y)
    assert np.array_equal(again.rates_, m.rates_)


def test_a_network_without_a_dataset_size_needs_n_train(ch5_hybrid):
    X, y, _ = ch5_hybrid
    with pytest.raises(ValueError, match=r"n_train: the ch3_mlp network has no dataset size of its own"):
        HybridModel("ch3_mlp", **CH5).fit(X, y)
    m = HybridModel("ch3_mlp", **CH5, fixed={"n_train": 431}).fit(X, y)
    assert np.all(m.predict(X) > 0)


def test_n_train_as_a_column_of_the_model_is_read_and_checked(ch5_hybrid):
    X, y, m = ch5_hybrid
    roles = dict(CH5, numeric=CH5["numeric"] + ["n_train"])
    own = HybridModel("resattnet3d", **roles, fixed=FIXED).fit(X.assign(n_train=431), y)
    assert np.allclose(own.predict(X.assign(n_train=431)), m.predict(X), rtol=1e-9)
    assert own.predict(X.head(1).assign(n_train=862))[0] > own.predict(X.head(1).assign(n_train=431))[0]
    with pytest.raises(ValueError, match=r"column 'n_train': value 0.5 in row 0 is not a whole number >= 1"):
        own.predict(X.head(1).assign(n_train=0.5))
