"""Third-party datasets (data/external): shipped files, tidy loaders, batch strings, bad files, provenance."""
import dataclasses
import hashlib
import json
import re

import numpy as np
import pandas as pd
import pytest

from perfkit.data.external import (
    EXTERNAL_DATASETS,
    PLAUSIBLE_PER_GPU,
    external_dir,
    load_external,
    load_lambda,
    load_nvidia_dle,
    resolve_batch,
)

LAMBDA_COLUMNS = ["model", "precision", "gpu", "n_gpus", "batch_per_gpu", "batch_global", "throughput", "t_iter",
                  "t_sample", "watt", "price", "watt_per_gpu", "price_per_gpu", "config", "per_gpu_vs_best_single"]
NVIDIA_COLUMNS = ["model", "framework", "task", "variant", "gpu", "system", "nodes", "gpus", "n_gpus", "precision",
                  "batch_per_gpu", "batch_global", "throughput", "throughput_unit", "t_iter"]


@pytest.fixture(scope="module")
def shipped():
    return {name: load_external(name) for name in EXTERNAL_DATASETS}


def _roles_ok(frame, ds):
    for col in [*ds.features, ds.target]:
        assert col in frame.columns
        assert not frame[col].isna().any(), col
    for col in [*ds.numeric, *ds.extrinsic, ds.target]:
        assert (frame[col].to_numpy(dtype=float) > 0).all(), col


# ------------------------------------------------------------------------------ shipped files
def test_lambda_shipped(shipped):
    frame, ds = shipped["lambda"]
    assert list(frame.columns) == LAMBDA_COLUMNS
    _roles_ok(frame, ds)
    assert len(frame) == 980 and frame.attrs["dropped"] == {"throughput 0 (not measured)": 80}
    assert frame["model"].nunique() == 10 and frame["config"].nunique() == 53 and frame["gpu"].nunique() == 19
    assert set(frame["n_gpus"]) == {1, 2, 4, 8} and set(frame["precision"]) == {"fp16", "fp32"}
    assert not frame["gpu"].str.contains(r"\d+x", regex=True).any()
    np.testing.assert_allclose(frame["t_iter"], frame["batch_global"] / frame["throughput"])
    np.testing.assert_allclose(frame["t_sample"], 1 / frame["throughput"])
    assert (frame["batch_per_gpu"] * frame["n_gpus"] == frame["batch_global"]).all()
    assert (frame.groupby(["model", "precision"]).size() <= 53).all()
    assert len(load_lambda("fp32")) == 490


def test_lambda_screen_shipped(shipped):
    """The screen leaves out exactly the rows whose throughput per GPU exceeds twice the fastest single GPU's for
    the same model and precision: 22 ncf rows on 4 and 8 H100 SXM5s, nothing of any other model."""
    frame, _ = shipped["lambda"]
    screened, ds = shipped["lambda_screened"]
    ratio = frame["per_gpu_vs_best_single"]
    assert (ratio[frame["n_gpus"] == 1] <= 1).all() and ratio.notna().all()
    out = frame[ratio > PLAUSIBLE_PER_GPU]
    assert len(out) == 22 and set(out["model"]) == {"ncf"} and set(out["n_gpus"]) == {4, 8}
    assert out["gpu"].str.contains("H100 80GB SXM5").all() and out["per_gpu_vs_best_single"].min() > 2.3
    assert ratio[frame["model"] != "ncf"].max() < 1.5  # every other model: at most 1.5x, as data-parallel allows
    assert len(screened) == 958 and (screened["per_gpu_vs_best_single"] <= PLAUSIBLE_PER_GPU).all()
    key = ["model", "gpu", "precision", "n_gpus"]
    kept = frame.merge(out[key], on=key, how="left", indicator=True)["_merge"] == "left_only"
    pd.testing.assert_frame_equal(screened, frame[kept.to_numpy()].reset_index(drop=True), check_like=False)
    assert screened.attrs["dropped"] == {"throughput 0 (not measured)": 80, **{
        k: 22 for k in screened.attrs["dropped"] if k.startswith("implausible scaling")}}
    assert ds.roles == shipped["lambda"][1].roles and ds.provenance_path() == shipped["lambda"][1].provenance_path()


def test_nvidia_shipped(shipped):
    frame, ds = shipped["nvidia_dle"]
    assert list(frame.columns[: len(NVIDIA_COLUMNS)]) == NVIDIA_COLUMNS
    _roles_ok(frame, ds)
    dropped = frame.attrs["dropped"]
    assert len(frame) == 796 and len(frame) + sum(dropped.values()) == 1112
    assert dropped["not a training table (evaluation/inference section)"] == 132
    assert dropped["no batch size in the table"] == 160
    assert frame["model"].nunique() == 31 and frame["readme"].nunique() == 39
    assert set(frame["framework"]) == {"PyTorch", "TensorFlow", "TensorFlow2", "PaddlePaddle", "DGLPyTorch",
                                       "CUDA-Optimized"}
    assert set(frame["gpu"]) == {"A100 40GB", "A100 80GB", "V100 16GB", "V100 32GB"}
    assert set(frame["precision"]) == {"amp", "tf32", "fp32", "bf16"}
    assert frame["n_gpus"].max() == 256 and (frame["n_gpus"] == frame["nodes"] * frame["gpus"]).all()
    np.testing.assert_allclose(frame["t_iter"], frame["batch_global"] / frame["throughput"])
    # the tables' throughput is over all GPUs: more GPUs, more throughput, in every table
    key = ["readme", "section", "precision", "variant", "batch_per_gpu", "throughput_col"]
    for _, table in frame.groupby(key):
        if table["n_gpus"].nunique() > 1:
            ordered = table.sort_values("n_gpus").drop_duplicates("n_gpus")
            assert ordered["throughput"].iloc[-1] > ordered["throughput"].iloc[0]
    # units stated in mol/ms become molecules/s; TensorFlow NCF's millions are scaled
    se3 = frame[frame["model"] == "SE3Transformer"]
    assert (se3["throughput_unit"] == "molecules/s").all() and se3["throughput"].min() > 100
    ncf = frame[(frame["model"] == "NCF") & (frame["framework"] == "TensorFlow")]
    assert ncf["throughput"].min() > 1e6 and ncf["t_iter"].max() < 1
    # the PyTorch Transformer's "5120/2560" is (AMP, FP32)
    tr = frame[(frame["model"] == "Transformer") & (frame["gpu"] == "V100 16GB")]
    assert set(zip(tr["precision"], tr["batch_per_gpu"])) == {("amp", 5120), ("fp32", 2560)}
    assert frame.attrs["precision_relabelled"] == 21


# ----------------------------------------------------------------------------- Lambda, tiny files
def _write_lambda(folder, prec="fp16", tp_rows=None, bs_rows=None, header=None):
    header = header or "name_gpu,num_gpu,watt,price,m1,m2"
    tp_rows = tp_rows or ["GPU A,1.0,300.0,1000.0,100.0,0.0", "2x GPU A,2.0,600.0,2000.0,180.0,"]
    bs_rows = bs_rows or ["GPU A,1,300,1000,64,8", "2x GPU A,2,600,2000,128,16"]
    (folder / f"pytorch-train-throughput-{prec}.csv").write_text("\n".join([header, *tp_rows]) + "\n")
    (folder / f"pytorch-train-bs-{prec}.csv").write_text("\n".join([header, *bs_rows]) + "\n")


def test_lambda_tiny(tmp_path):
    _write_lambda(tmp_path)
    frame = load_lambda("fp16", root=tmp_path)
    assert frame.attrs["dropped"] == {"throughput 0 (not measured)": 1, "throughput missing (empty cell)": 1}
    assert list(frame["gpu"]) == ["GPU A", "GPU A"] and list(frame["n_gpus"]) == [1, 2]
    assert list(frame["batch_global"]) == [64, 128] and list(frame["batch_per_gpu"]) == [64, 64]
    assert frame["t_iter"].tolist() == pytest.approx([64 / 100, 128 / 180])
    assert frame["t_sample"].tolist() == pytest.approx([1 / 100, 1 / 180])
    assert frame["watt_per_gpu"].tolist() == [300.0, 300.0] and frame["price_per_gpu"].tolist() == [1000.0, 1000.0]
    with pytest.raises(FileNotFoundError, match="fp32"):
        load_lambda(root=tmp_path)  # both precisions wanted, only fp16 written
    _write_lambda(tmp_path, "fp32")
    assert len(load_lambda(root=tmp_path)) == 4
    with pytest.raises(ValueError, match="precision: expected one of"):
        load_lambda("bf16", root=tmp_path)
    with pytest.raises(ValueError, match="screen: expected True or False, got 'yes'"):
        load_lambda(root=tmp_path, screen="yes")


def test_lambda_screen_tiny(tmp_path):
    """Per-GPU throughput against the fastest single GPU of the same model and precision (any GPU): 2x is kept,
    more is left out and counted; a model without a single-GPU row has NaN and is kept."""
    header = "name_gpu,num_gpu,watt,price,m1,m2"
    tp = ["GPU A,1,300,1000,100,50", "GPU B,1,300,1000,80,0", "2x GPU A,2,600,2000,400,100",
          "4x GPU B,4,1200,4000,801,0", "8x GPU C,8,2400,8000,60,20"]
    bs = ["GPU A,1,300,1000,64,8", "GPU B,1,300,1000,64,8", "2x GPU A,2,600,2000,128,16",
          "4x GPU B,4,1200,4000,256,32", "8x GPU C,8,2400,8000,512,64"]
    _write_lambda(tmp_path, header=header, tp_rows=tp, bs_rows=bs)
    frame = load_lambda("fp16", root=tmp_path)
    ratio = dict(zip(zip(frame["config"], frame["model"]), frame["per_gpu_vs_best_single"]))
    assert ratio[("2x GPU A", "m1")] == pytest.approx(2.0) and ratio[("4x GPU B", "m1")] == pytest.approx(2.0025)
    assert ratio[("GPU B", "m1")] == pytest.approx(0.8) and ratio[("8x GPU C", "m2")] == pytest.approx(20 / 8 / 50)
    screened = load_lambda("fp16", root=tmp_path, screen=True)
    assert len(screened) == len(frame) - 1 and not ((screened["config"] == "4x GPU B") & (screened["model"] == "m1")).any()
    assert screened.attrs["dropped"][
        "implausible scaling: throughput per GPU > 2x the fastest single GPU's (same model and precision)"] == 1
    # no single-GPU row of a model: nothing to compare with, kept
    _write_lambda(tmp_path, tp_rows=["2x GPU A,2,600,2000,400,100"], bs_rows=["2x GPU A,2,600,2000,128,16"])
    frame = load_lambda("fp16", root=tmp_path, screen=True)
    assert len(frame) == 2 and frame["per_gpu_vs_best_single"].isna().all()


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(header="name_gpu,watt,price,m1,m2", tp_rows=["GPU A,300,1000,100,0", "2x GPU A,600,2000,180,1"]),
     r"throughput-fp16\.csv: column 'num_gpu' missing"),
    (dict(bs_rows=["GPU A,1,300,1000,64,8", "2x GPU B,2,600,2000,128,16"]),
     r"GPU rows disagree at row 2.*'2x GPU A'.*'2x GPU B'"),
    (dict(bs_rows=["GPU A,1,300,1000,64,8"]), r"has 2 GPU rows but .*bs-fp16\.csv has 1"),
    (dict(tp_rows=["GPU A,1,300,1000,fast,0", "2x GPU A,2,600,2000,180,1"]),
     r"throughput-fp16\.csv: column 'm1', row 1 \('GPU A'\).*'fast' is not a finite number"),
    (dict(bs_rows=["GPU A,1,300,1000,64,8", "2x GPU A,2,600,2000,127,16"]), r"'m1'.*127 is not divisible by num_gpu 2"),
    (dict(tp_rows=["GPU A,1,300,1000,100,0", "2x GPU A,4,600,2000,180,1"],
          bs_rows=["GPU A,1,300,1000,64,8", "2x GPU A,4,600,2000,128,16"]), r"name says 2 GPU\(s\) but column 'num_gpu' says 4"),
    (dict(tp_rows=["GPU A,1,300,1000,100,0", "0x GPU A,1,600,2000,180,1"],  # "0x" is no GPU, not one
          bs_rows=["GPU A,1,300,1000,64,8", "0x GPU A,1,600,2000,128,16"]), r"name says 0 GPU\(s\) but column 'num_gpu' says 1"),
    (dict(bs_rows=["GPU A,1,300,1000,,8", "2x GPU A,2,600,2000,128,16"]), r"bs-fp16\.csv: column 'm1', row 1.*batch size"),
])
def test_lambda_bad_files(tmp_path, kwargs, pattern):
    _write_lambda(tmp_path, **kwargs)
    with pytest.raises(ValueError, match=pattern):
        load_lambda("fp16", root=tmp_path)


def test_lambda_model_columns_must_agree(tmp_path):
    _write_lambda(tmp_path)
    (tmp_path / "pytorch-train-bs-fp16.csv").write_text("name_gpu,num_gpu,watt,price,m1,m3\nGPU A,1,300,1000,64,8\n"
                                                         "2x GPU A,2,600,2000,128,16\n")
    with pytest.raises(ValueError, match=r"model column 'm2' is not in .*bs-fp16\.csv"):
        load_lambda("fp16", root=tmp_path)


# ------------------------------------------------------------------------ NVIDIA batch strings
@pytest.mark.parametrize("batch, header, precision, extra, expected", [
    ("128 and 256", "Batch size / GPU (TF32 and FP16)", "tf32", {}, 128),
    ("128 and 256", "Batch size / GPU (TF32 and FP16)", "amp", {}, 256),
    ("16  and 32", "Batch size / GPU (FP32 and FP16)", "fp32", {}, 16),
    ("64 , 32", "Batch size / GPU: mixed precision, FP32", "amp", {}, 64),
    ("64 , 32", "Batch size / GPU: mixed precision, FP32", "fp32", {}, 32),
    ("76,38", "Batch size / GPU: mixed precision, TF32", "fp32", {}, 38),  # header TF32, column FP32: same slot
    ("8 : 16", "Batch size / GPU (FP32 : mixed precision)", "amp", {}, 16),
    ("100, 200", "Batch size / GPU (TF32, BF16)", "bf16", {}, 200),
    ("128 (FP32) / 256 (AMP)", "Batch Size / GPU", "fp32", {}, 128),
    ("128 (TF) / 256 (AMP)", "Batch Size / GPU", "amp", {}, 256),
    ("32 and 32", "Batch size / GPU (TF32 and FP16)", "amp", {}, 32),
    ("131,072", "Batch size / GPU", "amp", {}, 131072),
    ("1,048,576", "Batch size / GPU", "tf32", {}, 1048576),
    ("64k", "Batch size / GPU", "amp", {}, 65536),
    ("5120/2560", "Batch size / GPU", "amp", {"readme": "PyTorch/Translation/Transformer/README.md"}, 5120),
    ("5120/2560", "Batch size / GPU", "fp32", {"readme": "PyTorch/Translation/Transformer/README.md"}, 2560),
    (None, None, "tf32", {"throughput_col": "Throughput - TF32 (BS=104)"}, 104),
])
def test_resolve_batch(batch, header, precision, extra, expected):
    assert resolve_batch(batch, header, precision, **extra) == expected


@pytest.mark.parametrize("batch, header, precision, extra, reason", [
    ("10240/5120", "Batch size / GPU", "amp", {}, "without a precision order"),
    (None, None, "amp", {"throughput_col": "Throughput - mixed precision"}, "no batch size"),
    ("lots", "Batch size / GPU", "amp", {}, "not a number"),
    ("1, 2, 3", "Batch size / GPU", "amp", {}, "more than two"),
])
def test_resolve_batch_unresolvable(batch, header, precision, extra, reason):
    with pytest.raises(ValueError, match=reason):
        resolve_batch(batch, header, precision, **extra)


# ----------------------------------------------------------------------- NVIDIA, tiny files
NV_HEADER = "readme,section,nodes,gpus,batch_col,batch,other_cols,precision,throughput_col,throughput_raw,throughput"
NV_ROWS = [
    # multi-node: 2 nodes x 8 GPUs, TF32 slot of "16 and 32"
    ('PyTorch/LanguageModeling/BERT/README.md,"BERT / Training performance: NVIDIA DGX A100 (8x A100 80GB) / Pre-training",'
     '2,8,Batch size / GPU (TF32 and FP16),16 and 32,Sequence length=512,TF32,TF32 Throughput,800,800'),
    # single node, AMP slot; the precision column says AMP
    ('PyTorch/LanguageModeling/BERT/README.md,"BERT / Training performance: NVIDIA DGX A100 (8x A100 80GB) / Pre-training",'
     ',8,Batch size / GPU (TF32 and FP16),16 and 32,Sequence length=512,AMP,Throughput - mixed precision,1600,1600'),
    # precision column AMP but header TF32: the header wins; mol/ms becomes molecules/s
    ('DGLPyTorch/DrugDiscovery/SE3Transformer/README.md,"SE3 / Training performance: NVIDIA DGX-1 (8x V100 16GB)",'
     ',1,Batch size / GPU,240,,AMP,Throughput - TF32 [mol/ms],2.4,2.4'),
    # dropped: evaluation table, N/A cell, batch pair without an order
    ('TensorFlow2/Recommendation/WideAndDeep/README.md,"W&D / Evaluation performance: NVIDIA DGX-1 (8x V100 32GB)",'
     ',1,Batch size / GPU,4096,,AMP,Throughput [samples/s] AMP,1000,1000'),
    ('PyTorch/Detection/SSD/README.md,"SSD / Training performance: NVIDIA DGX-1 (8x V100 16GB)",'
     ',1,Batch size / GPU,64,,FP32,Throughput - FP32,<N/A>,'),
    ('PyTorch/Translation/Other/README.md,"X / Training performance",,1,Batch size / GPU,10/20,,AMP,'
     'Throughput - mixed precision,5,5'),
]


def _write_nvidia(path, header=NV_HEADER, rows=NV_ROWS):
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_nvidia_tiny(tmp_path):
    frame = load_nvidia_dle(_write_nvidia(tmp_path / "t.csv"))
    assert frame.attrs["dropped"] == {"not a training table (evaluation/inference section)": 1,
                                      "no throughput (N/A, '-' or empty cell)": 1,
                                      "two batch sizes without a precision order": 1}
    assert frame.attrs["precision_relabelled"] == 1
    a, b, c = (frame.iloc[i] for i in range(3))
    assert (a["model"], a["framework"], a["task"], a["gpu"], a["system"]) == (
        "BERT", "PyTorch", "LanguageModeling", "A100 80GB", "DGX A100")
    assert (a["nodes"], a["gpus"], a["n_gpus"], a["precision"], a["batch_per_gpu"]) == (2, 8, 16, "tf32", 16)
    assert a["t_iter"] == pytest.approx(16 * 16 / 800) and a["variant"] == "pre-training, seq=512"
    assert (b["nodes"], b["n_gpus"], b["precision"], b["batch_per_gpu"]) == (1, 8, "amp", 32)
    assert b["t_iter"] == pytest.approx(32 * 8 / 1600)
    assert (c["precision"], c["throughput"], c["throughput_unit"], c["gpu"]) == ("tf32", 2400.0, "molecules/s",
                                                                                 "V100 16GB")
    assert c["t_iter"] == pytest.approx(240 / 2400)


def test_nvidia_bad_files(tmp_path):
    header = NV_HEADER.replace(",throughput_raw,throughput", ",throughput_raw")
    rows = [r.rsplit(",", 1)[0] for r in NV_ROWS]
    with pytest.raises(ValueError, match=r"b\.csv: column 'throughput' missing"):
        load_nvidia_dle(_write_nvidia(tmp_path / "b.csv", header, rows))
    bad = NV_ROWS[:2] + [NV_ROWS[2].rsplit(",", 1)[0] + ",fast"]
    with pytest.raises(ValueError, match=r"c\.csv: column 'throughput', row 3 .*'fast' is not a finite number"):
        load_nvidia_dle(_write_nvidia(tmp_path / "c.csv", rows=bad))
    bad = [NV_ROWS[0].replace(",2,8,Batch", ",2,0,Batch")]
    with pytest.raises(ValueError, match=r"d\.csv: column 'gpus', row 1 .*whole number >= 1"):
        load_nvidia_dle(_write_nvidia(tmp_path / "d.csv", rows=bad))


# ------------------------------------------------------------------- registry and provenance
def test_registry():
    with pytest.raises(ValueError, match=r"'nope' unknown; known: \['lambda', 'lambda_screened', 'nvidia_dle', 'pollux'\]"):
        load_external("nope")
    ds = EXTERNAL_DATASETS["lambda"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.target = "t_sample"
    assert ds.roles == {"numeric": [], "categorical": ["model", "gpu", "precision"],
                        "extrinsic": ["n_gpus", "batch_per_gpu"]}
    frame = pd.DataFrame({"model": ["a"], "gpu": ["g"], "precision": ["fp16"], "n_gpus": [0], "batch_per_gpu": [1],
                          "t_iter": [1.0]})
    with pytest.raises(ValueError, match="lambda: column 'n_gpus' has values <= 0"):
        ds.check(frame)
    with pytest.raises(ValueError, match="lambda: column 'gpu' missing"):
        ds.check(frame.drop(columns="gpu"))
    import perfkit.data

    assert perfkit.data.load_external is load_external and perfkit.data.EXTERNAL_DATASETS is EXTERNAL_DATASETS


@pytest.mark.parametrize("name", sorted(EXTERNAL_DATASETS))
def test_provenance(name):
    ds = EXTERNAL_DATASETS[name]
    prov = json.loads(ds.provenance_path().read_text())
    commit = prov["source"]["commit"]
    assert re.fullmatch(r"[0-9a-f]{40}", commit) and commit in ds.citation
    assert prov["source"]["repository"].startswith("https://github.com/") and prov["source"]["commit_date"]
    assert prov["dataset"] == (ds.files or name) and prov["licence"] and prov["derivation"] and prov["units"]
    for f in prov["files"]:  # the shipped bytes are the published bytes
        assert hashlib.sha256((external_dir() / f["path"]).read_bytes()).hexdigest() == f["sha256"], f["path"]
    assert f"`{name}`" in (external_dir() / "README.md").read_text()


def test_load_external_names_an_unknown_option():
    from perfkit.data.external import load_external

    with pytest.raises(ValueError, match=r"bogus: not an option of the 'lambda' loader \(options: precision, root"):
        load_external("lambda", bogus=1)
    with pytest.raises(ValueError, match=r"external dataset \['lambda'\] unknown"):
        load_external(["lambda"])


def test_nvidia_and_lambda_cells_that_are_no_measurement(tmp_path):
    from perfkit.data.nvidia_dle import _batch_values

    assert _batch_values("9" * 5000) is None and _batch_values("131,072") == [131072]  # no traceback from int()
    header = "name_gpu,num_gpu,watt,price,resnet50\n"
    for a, b, words in (("123,1,400,10,100\n", "123,1,400,10,64\n", r"column 'name_gpu', row 1, line 2: expected a GPU "
                                                                    r"configuration's name \(text\), got 123"),
                        ("A100,1,400,10,100\n", "A100,1,500,99,64\n", r"column 'watt', row 1 \('A100'\), line 2: .* has "
                                                                      r"400, .* has 500")):
        (tmp_path / "pytorch-train-throughput-fp16.csv").write_text(header + a)
        (tmp_path / "pytorch-train-bs-fp16.csv").write_text(header + b)
        with pytest.raises(ValueError, match=words):
            load_lambda("fp16", root=tmp_path)


def _digest(frame) -> str:
    """The frame's values, index, column names and dtypes as a short hash."""
    import hashlib

    meta = repr((list(frame.columns), [str(t) for t in frame.dtypes])).encode()
    return hashlib.sha256(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes() + meta).hexdigest()[:20]


@pytest.mark.parametrize("load, digest", [
    (lambda: load_lambda(), "5a7b8580cef549e1162b"),
    (lambda: load_lambda(screen=True), "560224102d00b9d3cf2a"),
    (lambda: load_lambda("fp16"), "6e0a3817628f6df20cd0"),
    (lambda: load_nvidia_dle(), "5d75c94ee87847e898e9"),
], ids=["lambda", "lambda-screened", "lambda-fp16", "nvidia"])
def test_shipped_external_frames_are_unchanged(load, digest):
    """The loaders' checks leave the frames of the shipped files exactly as they were before them."""
    assert _digest(load()) == digest


def _write_lambda_rows(folder, tp_rows, bs_rows, header="name_gpu,num_gpu,watt,price,m1,m2"):
    (folder / "pytorch-train-throughput-fp16.csv").write_text("\n".join([header, *tp_rows]) + "\n")
    (folder / "pytorch-train-bs-fp16.csv").write_text("\n".join([header, *bs_rows]) + "\n")


TP = ["GPU A,1,300,1000,100,50", "2x GPU A,2,600,2000,180,90"]


BS = ["GPU A,1,300,1000,64,8", "2x GPU A,2,600,2000,128,16"]


@pytest.mark.parametrize("tp, bs, match", [
    (["GPU A,1,300,1000,100,50", "99999999999x GPU A,99999999999,600,2000,180,90"],
     ["GPU A,1,300,1000,64,8", "99999999999x GPU A,99999999999,600,2000,128,16"],
     r"throughput-fp16\.csv: column 'num_gpu', row 2 \('99999999999x GPU A'\), line 3: expected a whole number >= 1 "
     r"and at most 10,000,000"),
    (TP, ["GPU A,1,300,1000,1e300,8", BS[1]],
     r"bs-fp16\.csv: column 'm1', row 1 \('GPU A'\), line 2: expected a whole batch size >= 1 and at most 1e\+12"),
    (TP, ["GPU A,1,300,1000,64,8", "2x GPU A,2,600,2000,128,99999999999999999999"],
     r"bs-fp16\.csv: column 'm2', row 2 \('2x GPU A'\), line 3: expected a whole batch size"),
    (["GPU A,1,300,1000,1e-320,50", TP[1]], BS,
     r"throughput-fp16\.csv: column 'm1', row 1 \('GPU A'\), line 2: throughput 1e-320 with a global batch of 64 "
     r"gives inf s per step; that is not a measurement"),
    (["GPU A,1,300,1000,1e-99,50", TP[1]], BS, r"column 'm1', row 1 .*gives 6\.4e\+100 s per step"),
    (["GPU A,1,300,1000,100,50", TP[1]], ["GPU A,1,300,1000,,8", BS[1]],
     r"bs-fp16\.csv: column 'm1', row 1 \('GPU A'\), line 2: expected a whole batch size .* got nan"),
    (["GPU A,1,-300,1000,100,50", TP[1]], BS,
     r"throughput-fp16\.csv: column 'watt', row 1 \('GPU A'\), line 2: -300 is not a watt"),
    (TP, ["GPU A,1,300,0,64,8", BS[1]], r"bs-fp16\.csv: column 'price', row 1 \('GPU A'\), line 2: 0 is not a price"),
    ([], [], r"no GPU rows"),
    (["GPU A,1,300,1000,0,0", "2x GPU A,2,600,2000,,0"], BS,
     r"no row is a usable measurement \(rows left out: .*'throughput 0 \(not measured\)': 3"),
], ids=["huge-gpu-count", "huge-batch-float", "huge-batch-int", "tiny-throughput", "step-over-1e100",
        "blank-batch", "negative-watt", "zero-price", "header-only", "nothing-measured"])
def test_lambda_refuses_what_is_no_measurement(tmp_path, tp, bs, match):
    _write_lambda_rows(tmp_path, tp, bs)
    with pytest.raises(ValueError, match=match):
        load_lambda("fp16", root=tmp_path)


def test_lambda_good_file_is_read_exactly(tmp_path):
    _write_lambda_rows(tmp_path, TP, BS)
    frame = load_lambda("fp16", root=tmp_path)
    assert frame["batch_global"].tolist() == [64, 8, 128, 16] and frame["n_gpus"].tolist() == [1, 1, 2, 2]
    assert frame["t_iter"].tolist() == [64 / 100, 8 / 50, 128 / 180, 16 / 90]
    assert frame["n_gpus"].dtype == np.int64 and frame.attrs["dropped"] == {}


NV_README = "PyTorch/Classification/RN50/README.md,RN50 / Training performance: NVIDIA DGX A100 (8x A100 80GB)"


def _nv(nodes="", gpus="8", batch="32", throughput="1600", unit="img/s"):
    return f"{NV_README},{nodes},{gpus},Batch size / GPU,{batch},,AMP,Throughput - mixed precision ({unit}),,{throughput}"


def _write_nvidia_rows(path, rows):
    path.write_text("\n".join([NV_HEADER, *rows]) + "\n")
    return path


@pytest.mark.parametrize("rows, match", [
    ([_nv(), _nv(gpus="1e300")], r"column 'gpus', row 2 \('PyTorch/.*'\), line 3: expected a whole number >= 1 "
                                 r"and at most 10,000,000, got 1e\+300"),
    ([_nv(), _nv(nodes="99999999999")], r"column 'nodes', row 2 .*line 3: expected a whole number >= 1"),
    ([_nv(nodes="10000", gpus="10000")], r"column 'gpus', row 1 .*line 2: 10000 node\(s\) x 10000 GPUs is more than "
                                         r"10,000,000 GPUs; not a measurement"),
    ([_nv(), _nv(batch="99999999999999999999999")],
     r"column 'batch', row 2 .*line 3: a batch of 99999999999999999999999 per GPU on 8 GPUs is more than 1e\+12"),
    ([_nv(batch="2000000000", gpus="1000")], r"column 'batch', row 1 .*more than 1e\+12 samples per step"),
    ([_nv(), _nv(throughput="1e-320")], r"column 'throughput', row 2 .*line 3: throughput 1e-320 with a global batch "
                                        r"of 256 gives inf s per step; that is not a measurement"),
    ([_nv(throughput="1e308", unit="mol/ms")], r"column 'throughput', row 1 .*throughput inf .*not a measurement"),
    ([], r"no data rows \(only a header\); the table is empty"),
    ([_nv(throughput=""), _nv(throughput="0")],
     r"no row is a usable measurement \(rows left out: .*'throughput <= 0': 1"),
], ids=["huge-gpus", "huge-nodes", "gpus-times-nodes", "huge-batch", "huge-global-batch", "tiny-throughput",
        "overflowing-unit", "header-only", "nothing-kept"])
def test_nvidia_refuses_what_is_no_measurement(tmp_path, rows, match):
    path = _write_nvidia_rows(tmp_path / "t.csv", rows)
    with pytest.raises(ValueError, match=r"t\.csv: " + match):
        load_nvidia_dle(path)


def test_nvidia_blank_in_a_numeric_batch_column_drops_only_its_row(tmp_path):
    path = _write_nvidia_rows(tmp_path / "t.csv", [_nv(batch="32"), _nv(batch=""), _nv(batch="64", throughput="3200")])
    assert pd.read_csv(path)["batch"].dtype == float  # the blank makes pandas read the column as floats
    frame = load_nvidia_dle(path)
    assert frame["batch_per_gpu"].tolist() == [32, 64] and frame["batch_per_gpu"].dtype == np.int64
    assert frame["t_iter"].tolist() == [32 * 8 / 1600, 64 * 8 / 3200]
    assert frame.attrs["dropped"] == {"no batch size in the table": 1}


def test_nvidia_fractional_numeric_batch_is_dropped_by_reason(tmp_path):
    frame = load_nvidia_dle(_write_nvidia_rows(tmp_path / "t.csv", [_nv(batch="32"), _nv(batch="2.5")]))
    assert frame["batch_per_gpu"].tolist() == [32] and frame.attrs["dropped"] == {"batch is not a whole number": 1}
