"""Symbolic regression in log space: one short formula found by genetic programming (the thesis's future work).

Chapter 6 of the thesis names symbolic regression as the way to find the *form* of a performance model instead of
fixing it (eq. 4.4) or choosing it from a list (:mod:`perfkit.model.selection.search`). :class:`SymbolicModel` evolves one
expression of log t with :class:`gplearn.genetic.SymbolicRegressor` and writes it as

.. math::
    t = \\exp\\big(a + b \\cdot f(\\text{inputs})\\big)

**Inputs** (all on a log scale, so that a product of powers is a sum): ``log(x)`` of every numeric and extrinsic
column; ``m(c)`` for every categorical column c, the level's mean of log t on the rows of fit minus the overall
mean, shrunk towards 0 by :data:`ENCODING_PRIOR` rows (target encoding, decided on the fit rows only: one input per
column, so that a level's effect costs one node, not one per level); and, with ``network=`` (a network of
:data:`perfkit.model.forms.costs.NETWORKS`), the log analytic costs of each configuration at batch 1: ``log(F)`` forward
FLOPs, ``log(A)`` activation elements, ``log(P)`` parameters, and ``log(S)`` the steps of an epoch,
⌈n_train / (batch_size · workers)⌉, when the model has ``batch_size`` and ``workers`` columns and a training-set
size is known (``fixed["n_train"]``, an ``n_train`` column, the dataset of each LeNet-5 row, 431 for the
3D-ResAttNet). A numeric/extrinsic column or a cost that is constant in fit is left out (a categorical with one
level too).

**Search.** The function set is small and readable (:data:`OPERATIONS`: add, sub, mul, max, min, neg; no
division, log or square root, so nothing needs "protecting"). Fitness is the RMSE of log t after the best linear
scaling a + b·f (Keijzer's linear scaling: the GP looks for the shape, least squares gives the scale), plus
``parsimony_coefficient`` per node. The run is single-threaded and deterministic for a ``random_state``.

**Node budget.** The final formula — the scaling's four nodes included — has at most ``max_nodes`` nodes: among
the final population and the single inputs, the program with the lowest penalised fitness whose node count fits
the budget is taken, its constant subtrees folded, and a and b fitted by least squares.
:attr:`SymbolicModel.n_parameters_` is that node count (constants and variables are nodes, each counted once), the
"simplest" of the form search's one-standard-error rule.

**Saved as data.** The expression is saved as a tree of ``{"op": name, "args": [...]}``, ``{"var": input}`` and
``{"const": number}`` objects and evaluated by a small interpreter over :data:`OPERATIONS` (:func:`evaluate`): no
eval, no pickle. :func:`check_expression` refuses an unknown operation, a wrong arity, a variable that is no input
of the model, a non-finite constant, a tree over the node budget or deeper than :data:`MAX_DEPTH`, naming the key.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from ..._checks import check_int, check_number
from ...measure.spaces import DATASET_SHAPES
from ..base import PerformanceForm
from .costs import CONFIG_KEYS, NETWORKS, add_costs
from .hybrid import check_fixed
from .logfit import times_from_log
from ..persist import is_finite, jsonable
from ..uncertainty.ranges import check_saved_ranges, column_ranges
from ..roles import constant_columns, levels_seen, record_roles, role_lists, warn_constant_columns
from ..validation import column_list, validate_frame, validate_target

__all__ = ["SymbolicModel", "OPERATIONS", "MAX_DEPTH", "ENCODING_PRIOR", "COST_INPUTS", "JSON_FORMAT",
           "JSON_VERSION", "check_expression", "evaluate", "expression_text", "scaled_rmse"]

JSON_FORMAT = "perfkit.SymbolicModel"
JSON_VERSION = 1
#: the operations an expression may use: name → arity (the interpreter's whitelist)
OPERATIONS = {"add": 2, "sub": 2, "mul": 2, "max": 2, "min": 2, "neg": 1}
_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
          "neg": np.negative}
#: deepest expression tree a saved model may hold
MAX_DEPTH = 32
#: rows of shrinkage of a level's mean towards the overall mean in the target encoding m(c)
ENCODING_PRIOR = 5
#: cost input → (column of :func:`perfkit.model.forms.costs.add_costs`, what it counts); ``log(S)`` is computed here
COST_INPUTS = {"log(F)": ("flops_fwd", "forward FLOPs per sample"),
               "log(A)": ("activations", "activation elements per sample"),
               "log(P)": ("n_params_model", "parameters"),
               "log(S)": (None, "steps per epoch, ceil(n_train / (batch_size·workers))")}
_SCALING_NODES = 4  # add(a, mul(b, f))
_N_TRAIN_RESATTNET3D = 431  # the Chapter 5 training set (as HybridModel assumes)
_GP = dict(p_crossover=0.7, p_subtree_mutation=0.1, p_hoist_mutation=0.05, p_point_mutation=0.1,
           init_depth=(2, 4), const_range=(-1.0, 1.0), max_samples=1.0, n_jobs=1, low_memory=True)


# ------------------------------------------------------------------------------------ expressions
def check_expression(tree, inputs, max_nodes: int, ops=None, key: str = "fitted.expression") -> int:
    """Check an expression tree read from a document and return its number of nodes.

    A node is ``{"op": name, "args": [...]}`` (name in ``ops``, by default every key of :data:`OPERATIONS`,
    with as many args as its arity), ``{"var": name}`` (a name in ``inputs``) or ``{"const": finite number}``.
    The tree has at most ``max_nodes`` nodes and is at most :data:`MAX_DEPTH` deep. Anything else raises one
    ``ValueError`` naming the node (``fitted.expression.args[1]: unknown op 'exp'``). The walk is iterative, so
    a hostile document cannot exhaust the stack."""
    ops = OPERATIONS if ops is None else ops
    stack, count = [(tree, key, 1)], 0
    while stack:
        node, path, depth = stack.pop()
        count += 1
        if count > max_nodes:
            raise ValueError(f"{key}: more than {max_nodes} nodes (max_nodes)")
        if depth > MAX_DEPTH:
            raise ValueError(f"{path}: the tree is deeper than {MAX_DEPTH} levels")
        keys = sorted(node) if isinstance(node, dict) else None
        if keys == ["var"]:
            if not isinstance(node["var"], str) or node["var"] not in inputs:
                raise ValueError(f"{path}: variable {node['var']!r} is not an input of the model ({list(inputs)})")
        elif keys == ["const"]:
            if not is_finite(node["const"]):
                raise ValueError(f"{path}: const {node['const']!r} is not a finite number")
        elif keys == ["args", "op"]:
            op, args = node["op"], node["args"]
            if not isinstance(op, str) or op not in ops:
                raise ValueError(f"{path}: unknown op {op!r}; expected one of {sorted(ops)}")
            if not isinstance(args, list) or len(args) != OPERATIONS[op]:
                got = len(args) if isinstance(args, list) else type(args).__name__
                raise ValueError(f"{path}.args: op {op!r} takes {OPERATIONS[op]} args, got {got}")
            stack.extend((a, f"{path}.args[{i}]", depth + 1) for i, a in reversed(list(enumerate(args))))
        else:
            raise ValueError(f"{path}: expected {{op, args}}, {{var}} or {{const}}, got "
                             f"{keys if keys is not None else type(node).__name__}")
    return count


def evaluate(tree, values: dict, n: int) -> np.ndarray:
    """The values of a (checked) expression tree on ``n`` rows, ``values`` mapping each variable to its array."""
    if "const" in tree:
        return np.full(n, float(tree["const"]))
    if "var" in tree:
        return values[tree["var"]]
    return _NUMPY[tree["op"]](*(evaluate(a, values, n) for a in tree["args"]))


def _nodes(tree) -> int:
    return 1 + sum(_nodes(a) for a in tree.get("args", ()))


def _depth(tree) -> int:
    return 1 + max((_depth(a) for a in tree.get("args", ())), default=0)


def _variables(tree) -> set:
    if "var" in tree:
        return {tree["var"]}
    return set().union(*(_variables(a) for a in tree.get("args", ())))


_PREC = {"add": (1, 1, 2, " + "), "sub": (1, 1, 2, " - "), "mul": (2, 2, 3, "·")}  # own, left, right, symbol


def _text(tree, d: int):
    """(text, precedence) of a tree: atoms 3, unary minus 1.5, mul 2, add/sub 1."""
    if "var" in tree:
        return tree["var"], 3
    if "const" in tree:
        v = float(tree["const"])
        return f"{v:.{d}g}", (1.5 if v < 0 else 3)
    op, args = tree["op"], [_text(a, d) for a in tree["args"]]
    if op == "neg":
        s, p = args[0]
        return "-" + (s if p >= 3 else f"({s})"), 1.5
    if op in ("max", "min"):
        return f"{op}({args[0][0]}, {args[1][0]})", 3
    own, left, right, sym = _PREC[op]
    (ls, lp), (rs, rp) = args
    return (ls if lp >= left else f"({ls})") + sym + (rs if rp >= right else f"({rs})"), own


def expression_text(tree, digits: int = 3) -> str:
    """An expression tree as infix text, constants to ``digits`` significant digits."""
    return _text(tree, digits)[0]


def _tree_from_program(program, names):
    """A gplearn program (a prefix list of functions, feature indices and constants) as an expression tree."""
    tokens = iter(program)

    def build():
        tok = next(tokens)
        if isinstance(tok, (int, np.integer)):
            return {"var": names[int(tok)]}
        if isinstance(tok, (float, np.floating)):
            return {"const": float(tok)}
        return {"op": tok.name, "args": [build() for _ in range(tok.arity)]}

    return build()


def _fold(tree):
    """Constant subtrees replaced by their value (where it is finite), max(x, x) and min(x, x) by x."""
    if "op" not in tree:
        return tree
    args = [_fold(a) for a in tree["args"]]
    if tree["op"] in ("max", "min") and args[0] == args[1]:
        return args[0]
    if all("const" in a for a in args):
        with np.errstate(all="ignore"):
            v = float(_NUMPY[tree["op"]](*(np.float64(a["const"]) for a in args)))
        if np.isfinite(v):
            return {"const": v}
    return {"op": tree["op"], "args": args}


def _wsum(w, x) -> float:
    """Σ wᵢxᵢ by numpy's pairwise summation, not a BLAS dot product: its rounding does not depend on the BLAS
    kernels, so neither do the fitnesses the evolution compares (nor, through them, the formula it finds)."""
    return float(np.sum(w * x))


def _scaling(y, p, w):
    """(a, b, RMSE) of the weighted least-squares line y ≈ a + b·p; b = 0 for a constant or non-finite p."""
    w = w / np.sum(w)
    ym = _wsum(w, y)
    yc = y - ym
    with np.errstate(all="ignore"):
        pm = _wsum(w, p)
        pc = p - pm
        vp = _wsum(w, pc * pc)
        if not (np.all(np.isfinite(p)) and np.isfinite(vp)) or vp <= 1e-12 * (1.0 + _wsum(w, yc * yc)):
            return ym, 0.0, float(np.sqrt(_wsum(w, yc * yc)))
        b = _wsum(w, pc * yc) / vp
        r = yc - b * pc
    return ym - b * pm, b, float(np.sqrt(_wsum(w, r * r)))


def scaled_rmse(y, y_pred, w) -> float:
    """RMSE of ``y`` after the best line a + b·``y_pred`` (weights ``w``): the fitness of the search."""
    return _scaling(np.asarray(y, float), np.asarray(y_pred, float), np.asarray(w, float))[2]


# ------------------------------------------------------------------------------------ settings
def _check_fixed(network, fixed, roles: dict) -> dict:
    """``fixed`` checked: None, or (with a network) the constants of its cost model, by the hybrid form's rule
    (:func:`perfkit.model.forms.hybrid.check_fixed`; ``n_train`` allowed)."""
    if fixed is None:
        return {}
    if network is None:
        raise ValueError("fixed: needs network= (the constants are inputs of a network's cost model)")
    return check_fixed(network, fixed, roles, n_train="auto")


class SymbolicModel(PerformanceForm):
    """One evolved formula of log t: t = exp(a + b·f(inputs)), at most ``max_nodes`` nodes (module docstring).

    Parameters
    ----------
    numeric, categorical, extrinsic : list of str or str
        Column roles as for the other forms: numeric and extrinsic columns (values > 0) enter as log(x), each
        categorical column as its target encoding m(c).
    network : str, optional
        A network of :data:`perfkit.model.forms.costs.NETWORKS`: adds the log analytic costs (:data:`COST_INPUTS`) of
        each row's configuration, read from the model's columns and ``fixed``.
    fixed : dict, optional
        Constant inputs of the network's cost model that are no columns of the model (and ``n_train``).
    function_set : str or list of str, default "add,sub,mul,max,min"
        Operations of :data:`OPERATIONS` the search may use.
    population_size, generations, tournament_size : int, default 500, 15, 20
        The genetic programming run (gplearn): programs per generation, generations, tournament size (a few
        seconds on 1000 rows).
    parsimony_coefficient : float, default 0.001
        Added to the fitness (RMSE of log t after linear scaling) per node of a program.
    max_nodes : int, default 20
        Most nodes of the final formula, the linear scaling's four included (>= 5).
    random_state : int, default 0
        Seed of the run; a seed gives the same formula on every run.

    Attributes
    ----------
    expression_ : dict
        The formula of log t as a tree of ``{"op", "args"}``, ``{"var"}`` and ``{"const"}`` nodes.
    inputs_ : list of str
        The inputs the search used (``log(col)``, ``m(col)``, ``log(F)``, ...).
    categories_, encoding_ : dict
        Levels of each categorical column seen in fit; the m(c) value of each level (non-constant columns).
    constant_columns_ : dict
        Columns with a single value in fit (left out).
    ranges_ : dict
        ``{column: (min, max)}`` of the numeric and extrinsic columns in fit (:meth:`fitted_ranges`).
    residual_std_, smearing_, fit_time_ : float
        Standard deviation of the log residuals in fit, Duan's smearing factor mean(e^residual), seconds of fit.
    """

    def __init__(self, numeric=(), categorical=(), extrinsic=(), *, network=None, fixed=None,
                 function_set="add,sub,mul,max,min", population_size=500, generations=15, tournament_size=20,
                 parsimony_coefficient=0.001, max_nodes=20, random_state=0):
        self.numeric = numeric
        self.categorical = categorical
        self.extrinsic = extrinsic
        self.network = network
        self.fixed = fixed
        self.function_set = function_set
        self.population_size = population_size
        self.generations = generations
        self.tournament_size = tournament_size
        self.parsimony_coefficient = parsimony_coefficient
        self.max_nodes = max_nodes
        self.random_state = random_state

    json_format = JSON_FORMAT
    json_version = JSON_VERSION
    fitted_keys = ("numeric", "categorical", "extrinsic", "categories", "encoding", "constant_columns", "inputs",
                   "expression", "ranges", "residual_std", "smearing", "fit_time")
    fitted_attribute = "expression_"

    # ------------------------------------------------------------------ setup
    def _settings(self):
        """Every setting checked; returns (numeric, categorical, extrinsic, fixed, function set)."""
        num, cat, ext = role_lists(self.numeric, self.categorical, self.extrinsic)
        if not (num or cat or ext):
            raise ValueError("no columns given: set numeric, categorical and/or extrinsic")
        if self.network is not None and (not isinstance(self.network, str) or self.network not in NETWORKS):
            raise ValueError(f"network: expected None or one of {sorted(NETWORKS)}, got {self.network!r}")
        roles = {**{c: "numeric" for c in num}, **{c: "categorical" for c in cat}, **{c: "extrinsic" for c in ext}}
        fixed = _check_fixed(self.network, self.fixed, roles)
        clash = [c for c in num + ext if self.network is not None and f"log({c})" in COST_INPUTS]
        if clash:
            raise ValueError(f"numeric column {clash[0]!r}: its input log({clash[0]}) is also the name of a cost "
                             "input of network=; rename the column")
        functions = column_list("function_set", self.function_set)
        bad = [f for f in functions if f not in OPERATIONS]
        if bad or not functions or len(set(functions)) != len(functions):
            raise ValueError(f"function_set: expected distinct names of {list(OPERATIONS)}, got {self.function_set!r}")
        check_int("population_size", self.population_size, minimum=10)
        check_int("generations", self.generations, minimum=1)
        check_int("tournament_size", self.tournament_size, minimum=2)
        if self.tournament_size > self.population_size:
            raise ValueError(f"tournament_size: {self.tournament_size} is more than population_size "
                             f"{self.population_size}")
        check_number("parsimony_coefficient", self.parsimony_coefficient)
        check_int("max_nodes", self.max_nodes, minimum=_SCALING_NODES + 1)
        check_int("random_state", self.random_state, minimum=0)
        return num, cat, ext, fixed, functions

    # --------------------------------------------------------------- inputs
    def _n_train(self, X, fixed, columns):
        """Training-set size of each row, or None when none is known (then there is no log(S) input)."""
        if "n_train" in fixed:
            return np.full(len(X), float(fixed["n_train"]))
        if "n_train" in columns:
            return X["n_train"].to_numpy(dtype=float)
        if self.network == "lenet5":
            col = [fixed["dataset"]] * len(X) if "dataset" in fixed else X["dataset"].tolist()
            return np.array([DATASET_SHAPES[d][3] for d in col], dtype=float)
        if self.network == "resattnet3d":
            return np.full(len(X), float(_N_TRAIN_RESATTNET3D))
        return None

    def _cost_values(self, X, fixed, num, cat, ext) -> dict:
        """The log analytic costs of each row (:data:`COST_INPUTS`): the cost model's keys from the model's columns
        or ``fixed`` (a required key that is neither is an error naming it)."""
        import pandas as pd

        columns = set(num) | set(cat) | set(ext)
        required, optional = CONFIG_KEYS[self.network]
        missing = [k for k in required if k not in columns and k not in fixed]
        if missing:
            raise ValueError(f"network: the {self.network} cost model needs column(s) {missing}, which are neither "
                             "columns of the model nor keys of fixed=")
        keys = [k for k in (*required, *optional) if k in columns or k in fixed]
        frame = pd.DataFrame({k: X[k].to_numpy() if k in columns else [fixed[k]] * len(X) for k in keys},
                             index=X.index)
        costs = add_costs(frame, self.network)
        out = {}
        for name, (col, _) in COST_INPUTS.items():
            if col is not None:
                v = costs[col].to_numpy(dtype=float)
                out[name] = np.log(np.where(v > 0, v, np.nan))
        n = self._n_train(X, fixed, columns)
        if n is not None and {"batch_size", "workers"} <= set(num + ext):
            out["log(S)"] = np.log(np.ceil(n / (X["batch_size"].to_numpy(float) * X["workers"].to_numpy(float))))
        for name, v in out.items():
            if not np.all(np.isfinite(v)):
                raise ValueError(f"network: cost input {name} of the {self.network} network is not finite for row "
                                 f"{jsonable(X.index[int(np.flatnonzero(~np.isfinite(v))[0])])!r}")
        return out

    def _values(self, X, fixed, num, cat, ext) -> dict:
        """Every input the model can compute for the rows of X (validated): logs, encodings, costs."""
        values = {f"log({c})": np.log(X[c].to_numpy(dtype=float)) for c in self.log_columns_}
        for c, enc in self.encoding_.items():
            lookup = dict(zip(self.categories_[c], enc))
            values[f"m({c})"] = np.array([lookup[v] for v in X[c].tolist()], dtype=float)
        if self.network is not None:
            values.update(self._cost_values(X, fixed, num, cat, ext))
        return values

    # -------------------------------------------------------------------- fit
    def fit(self, X, y):
        """Evolve the formula of log t on the rows of ``X`` (a DataFrame of the role columns) and times ``y`` > 0.

        Raises ``ValueError`` for a bad setting, a missing column, a value <= 0 or not finite in a numeric or
        extrinsic column, a missing level, a bad time (each naming the column and row), or a configuration the
        network's cost model refuses."""
        from threadpoolctl import threadpool_limits

        num, cat, ext, fixed, functions = self._settings()
        validate_frame(X, num, cat, ext)
        y = validate_target(y, X, positive=True)
        start = time.perf_counter()
        categories = levels_seen(X, cat)
        constant = constant_columns(X, num, cat, ext, categories)
        if constant:
            warn_constant_columns(constant, num, ext)
        z = np.log(y)
        self.categories_, self.constant_columns_ = categories, constant
        self.log_columns_ = [c for c in num + ext if c not in constant]
        self.encoding_ = {c: _level_means(X[c].to_numpy(), z, categories[c]) for c in cat if c not in constant}
        values = self._values(X, fixed, num, cat, ext)
        inputs = [k for k, v in values.items() if np.ptp(v) > 0]
        with threadpool_limits(1):
            tree = self._evolve(values, inputs, z, functions)
        self.inputs_, self.expression_ = inputs, tree
        record_roles(self, num, cat, ext)
        self.ranges_ = column_ranges(X, num + ext)
        resid = z - evaluate(tree, values, len(z))
        self.residual_std_ = float(np.std(resid))
        self.smearing_ = float(np.mean(np.exp(resid)))
        self.fit_time_ = time.perf_counter() - start
        return self

    def _evolve(self, values, inputs, z, functions):
        """The GP run, then the best program within the node budget, folded and linearly scaled."""
        from gplearn.fitness import make_fitness
        from gplearn.genetic import SymbolicRegressor

        w = np.ones(len(z))
        budget = self.max_nodes - _SCALING_NODES
        candidates = [{"var": name} for name in inputs]
        if inputs:
            gp = SymbolicRegressor(
                population_size=int(self.population_size), generations=int(self.generations),
                tournament_size=int(self.tournament_size), function_set=tuple(functions),
                metric=make_fitness(function=scaled_rmse, greater_is_better=False, wrap=False),
                parsimony_coefficient=float(self.parsimony_coefficient), random_state=int(self.random_state), **_GP)
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                gp.fit(np.column_stack([values[k] for k in inputs]), z)
            programs = [p for p in gp._programs[-1] if p is not None and p.length_ <= budget]
            seen = set()
            for p in programs:
                key = str(p)
                if key not in seen:
                    seen.add(key)
                    candidates.append(_fold(_tree_from_program(p.program, inputs)))
        best, best_score = {"const": 0.0}, np.inf
        for tree in candidates:
            if _nodes(tree) > budget or _depth(tree) > MAX_DEPTH - 2 or "const" in tree:
                continue
            with np.errstate(all="ignore"):
                score = scaled_rmse(z, evaluate(tree, values, len(z)), w) + self.parsimony_coefficient * _nodes(tree)
            if score < best_score:
                best, best_score = tree, score
        with np.errstate(all="ignore"):
            a, b, _ = _scaling(z, evaluate(best, values, len(z)), w)
        if b == 0.0:
            return {"const": float(np.mean(z))}
        return {"op": "add", "args": [{"const": a}, {"op": "mul", "args": [{"const": b}, best]}]}

    # ---------------------------------------------------------------- predict
    def predict_log(self, X):
        """Predicted log t for the rows of ``X`` (checked as in fit; an unseen level is an error naming it)."""
        self._check_fitted()
        num, cat, ext, fixed, _ = self._settings()
        validate_frame(X, self.numeric_, self.categorical_, self.extrinsic_, categories=self.categories_)
        return evaluate(self.expression_, self._values(X, fixed, num, cat, ext), len(X))

    def predict(self, X):
        """Predicted times exp(log t): the median under log-normal errors (multiply by :attr:`smearing_` for a
        mean); a row whose prediction is not finite is an error naming it."""
        return times_from_log(self.predict_log(X), X)

    def fitted_ranges(self) -> dict | None:
        """``{column: (min, max)}`` of the numeric and extrinsic columns in fit."""
        self._check_fitted()
        return self.ranges_

    # --------------------------------------------------------------- reports
    @property
    def n_parameters_(self) -> int:
        """Nodes of the fitted formula (operations, variables and constants, the linear scaling included)."""
        self._check_fitted()
        return _nodes(self.expression_)

    def formula(self, digits: int = 3) -> str:
        """The fitted model in one line, ``t = exp(a + b·(...))``, constants to ``digits`` significant digits."""
        self._check_fitted()
        return f"t = exp({expression_text(self.expression_, check_int('digits', digits, minimum=1))})"

    def summary(self) -> str:
        """A printable report: the settings, the inputs (the encodings and costs explained), the fit, the formula."""
        self._check_fitted()
        used = _variables(self.expression_)
        lines = [f"SymbolicModel: log t = a + b·f(inputs) by genetic programming (gplearn), "
                 f"{self.n_parameters_} nodes of at most {self.max_nodes}",
                 f"  columns: numeric {self.numeric_}, categorical {self.categorical_}, extrinsic {self.extrinsic_}",
                 f"  search: functions {column_list('function_set', self.function_set)}, population "
                 f"{self.population_size}, generations {self.generations}, parsimony {self.parsimony_coefficient:g}, "
                 f"seed {self.random_state}",
                 f"  inputs ({len(self.inputs_)}; * = in the formula): "
                 + ", ".join(n + ("*" if n in used else "") for n in self.inputs_),
                 f"  residual sd of log t on the training rows: {self.residual_std_:.4g}; smearing factor "
                 f"{self.smearing_:.4g}; fit {self.fit_time_:.2f} s"]
        for c, enc in self.encoding_.items():
            lines.append(f"  m({c}) = " + ", ".join(f"{lv}: {v:+.3g}" for lv, v in zip(self.categories_[c], enc)))
        lines += [f"  {n}: {COST_INPUTS[n][1]} ({self.network})" for n in self.inputs_ if n in COST_INPUTS]
        return "\n".join(lines + ["  " + self.formula()])

    # ------------------------------------------------------------------ JSON
    def _fitted_doc(self) -> dict:
        """The ``fitted`` object: roles, levels and encodings, inputs, the expression tree, ranges, statistics."""
        return {"numeric": self.numeric_, "categorical": self.categorical_, "extrinsic": self.extrinsic_,
                "categories": {c: [jsonable(v) for v in lv] for c, lv in self.categories_.items()},
                "encoding": {c: [float(v) for v in enc] for c, enc in self.encoding_.items()},
                "constant_columns": {c: jsonable(v) for c, v in self.constant_columns_.items()},
                "inputs": list(self.inputs_), "expression": self.expression_,
                "ranges": {c: [lo, hi] for c, (lo, hi) in self.ranges_.items()},
                "residual_std": self.residual_std_, "smearing": self.smearing_, "fit_time": self.fit_time_}

    @classmethod
    def _restore(cls, model, checked, reader):
        """Check a document's ``fitted`` object (inputs the model can compute, an expression of whitelisted
        operations within the node budget, ...) and set it on ``model``."""
        num, cat, ext, fixed, functions = checked
        reader.roles(num, cat, ext)
        categories = reader.levels("categories", cat, nonempty=True, as_seen=True)
        constant = reader.constant_columns(num + cat + ext)
        encoded = [c for c in cat if c not in constant]
        encoding = _encoding_from_doc(reader, categories, encoded)
        allowed = [f"log({c})" for c in num + ext if c not in constant] + [f"m({c})" for c in encoded]
        allowed += list(COST_INPUTS) if model.network is not None else []
        inputs = reader.names("inputs")
        if len(set(inputs)) != len(inputs) or any(n not in allowed for n in inputs):
            raise reader.fail(f"fitted.inputs: expected distinct inputs of {allowed}, got {reader.short(inputs)}")
        try:
            check_expression(reader["expression"], inputs, model.max_nodes, ops=set(functions) | {"add", "mul"})
        except ValueError as exc:
            raise reader.fail(str(exc)) from None
        record_roles(model, num, cat, ext)
        model.categories_ = {c: list(categories[c]) for c in cat}
        model.encoding_ = encoding
        model.constant_columns_ = constant
        model.log_columns_ = [c for c in num + ext if c not in constant]
        model.inputs_ = list(inputs)
        model.ranges_ = check_saved_ranges(reader["ranges"], num + ext, reader.fail)
        model.residual_std_ = reader.number("residual_std", minimum=0)
        model.smearing_ = reader.number("smearing", minimum=0)
        model.fit_time_ = reader.number("fit_time", minimum=0)
        model.expression_ = reader["expression"]
        return model


# ------------------------------------------------------------------------------------ helpers
def _level_means(values, z, levels) -> list:
    """m(c) of each level: Σ (z - mean z) over its rows / (rows + :data:`ENCODING_PRIOR`)."""
    zc = z - z.mean()
    return [float(zc[values == lv].sum() / ((values == lv).sum() + ENCODING_PRIOR)) for lv in levels]


def _encoding_from_doc(reader, categories, encoded) -> dict:
    """The saved ``encoding``: one list of finite numbers per level of each encoded categorical column."""
    enc = reader["encoding"]
    if not isinstance(enc, dict) or sorted(enc) != sorted(encoded):
        raise reader.fail(f"fitted.encoding: expected one list per categorical column with more than one level "
                          f"{encoded}, got {reader.short(enc)}")
    for c, v in enc.items():
        if not (isinstance(v, list) and len(v) == len(categories[c]) and all(is_finite(x) for x in v)):
            raise reader.fail(f"fitted.encoding[{c!r}]: expected {len(categories[c])} finite numbers (one per level), "
                              f"got {reader.short(v)}")
    return {c: [float(x) for x in enc[c]] for c in encoded}
