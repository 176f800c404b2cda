"""Unit 3's computations (perfkit.course.u3_generic_model): the DE history, its figure, the data and the coding."""
import numpy as np
import pytest

from perfkit.course import u3_generic_model as u3
from perfkit.report import teaching
from perfkit.report.legibility import crowded_labels


@pytest.fixture(scope="module")
def data():
    return u3.load()


@pytest.fixture(scope="module")
def history(data):
    return u3.de_history(data["X_fit"]["batch_size"], data["X_fit"]["workers"], data["y_fit"], generations=12)


def test_load_splits_70_30_without_overlap(data):
    assert len(data["X_fit"]) == 280 and len(data["X_test"]) == 120
    assert not set(data["X_fit"].index) & set(data["X_test"].index)


def test_de_history_is_the_run_stopped_at_each_generation(data, history):
    # one run watched generation by generation = separate runs stopped after g generations (same seed)
    stopped = teaching.de_generations(data["X_fit"]["batch_size"], data["X_fit"]["workers"], data["y_fit"],
                                      generations=(0, 3, 12))
    for g in (0, 3, 12):
        np.testing.assert_allclose(history["population"][g], stopped["snapshots"][g][0])
    assert len(history["population"]) == 13 and len(history["best"]) == 13


def test_de_best_objective_never_increases(history):
    assert np.all(np.diff(history["best"]) <= 1e-15)
    assert history["best"][-1] < history["best"][0]


@pytest.mark.parametrize("generation", [0, 1, 12, 99])
def test_draw_de_is_legible_at_every_generation(history, generation):
    fig = u3.draw_de(history, generation)
    assert crowded_labels(fig) == []
    shown = min(generation, 12)
    assert fig.axes[0].get_title() == f"generation {shown}"


def test_roles_table_lists_every_column_once(data):
    table = u3.roles_table(data["X_fit"])
    assert sorted(table["column"]) == sorted(data["X_fit"].columns)
    assert set(table["role"]) == {"numeric", "categorical", "extrinsic"}


def test_coding_table_shows_one_free_direction_for_two_categoricals(data):
    table, demo = u3.coding_table(data["X_fit"], "activation", "optimizer")
    assert demo["columns"] - demo["rank"] == 1
    assert demo["max_prediction_difference"] < 1e-9
    assert not np.allclose(table["constants A"], table["constants B"])
