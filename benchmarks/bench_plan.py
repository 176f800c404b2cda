"""How fast the cross-hardware path answers, as a user meets it: the README's two commands, wall time, machine info.

Run: ``.venv/bin/python benchmarks/bench_plan.py`` (about 2 min on 2 cores) → ``benchmarks/results/plan.json`` and
``.md``. Lambda's screened rows (both precisions) are written to a temporary CSV; then, each as a subprocess as a
user types it:

- ``perfkit fit ... --form auto --hardware gpu --split group:gpu`` (the nested leave-one-GPU-out study and the
  baselines): target ≤ 120 s;
- ``perfkit fit ... --form roofline`` (the one form, its study): target ≤ 60 s;
- ``perfkit plan`` with the saved model (every Lambda GPU type × count priced and ranked): target ≤ 10 s, an
  answer in seconds;
- ``perfkit predict --interval 0.9`` of a GPU never measured (T4) from its name: target ≤ 10 s.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info, write_results  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "plan"
PERFKIT = str(Path(sys.executable).parent / "perfkit")
FIT = ["--target", "t_iter", "--categorical", "model,precision", "--hardware", "gpu", "--precision", "precision",
       "--gpus", "n_gpus", "--batch", "batch_per_gpu", "--split", "group:gpu"]
TARGETS = {"fit_auto": 120.0, "fit_roofline": 60.0, "plan": 10.0, "predict": 10.0}


def _timed(argv, cwd) -> float:
    start = time.perf_counter()
    subprocess.run([PERFKIT, *argv], cwd=cwd, check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def run(folder: Path) -> dict:
    """Seconds of each command in ``folder`` (the data and models written there)."""
    from perfkit.data.lambda_labs import load_lambda

    load_lambda(screen=True)[["model", "precision", "gpu", "n_gpus", "batch_per_gpu", "t_iter"]].to_csv(
        folder / "lambda.csv", index=False)
    (folder / "new.csv").write_text("model,precision,gpu,n_gpus,batch_per_gpu\nresnet50,fp16,T4,4,64\n")
    return {
        "fit_auto": _timed(["fit", "lambda.csv", *FIT, "--form", "auto", "--out", "auto.json"], folder),
        "fit_roofline": _timed(["fit", "lambda.csv", *FIT, "--form", "roofline", "--out", "roof.json"], folder),
        "plan": _timed(["plan", "auto.json", "--workload", "model=resnet50,precision=fp16", "--epochs", "90",
                        "--dataset-size", "1281167", "--deadline", "24"], folder),
        "predict": _timed(["predict", "auto.json", "new.csv", "--interval", "0.9"], folder),
    }


def markdown(res: dict) -> str:
    m = res["machine"]
    lines = ["# The cross-hardware path: time to an answer", "",
             "Wall time of the README's commands for a GPU you do not own, each as a subprocess on Lambda's screened "
             "rows (958, 12 GPU types); written by `benchmarks/bench_plan.py`.", "",
             "| command | seconds | target | met? |", "|---|---|---|---|"]
    words = {"fit_auto": "`perfkit fit --form auto --hardware gpu --split group:gpu`",
             "fit_roofline": "`perfkit fit --form roofline --hardware gpu --split group:gpu`",
             "plan": "`perfkit plan` (every Lambda GPU type × count)",
             "predict": "`perfkit predict --interval 0.9` (a T4, never measured)"}
    for key, sec in res["seconds"].items():
        lines.append(f"| {words[key]} | {sec:.1f} | ≤ {TARGETS[key]:g} | {'yes' if sec <= TARGETS[key] else 'no'} |")
    lines += ["", f"Machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores, {m.get('memory_gib', '?')} GiB; "
                  f"commit {m.get('git_commit', '?')}; {res['when']}."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        seconds = run(Path(tmp))
    res = {"seconds": seconds, "targets": TARGETS, "machine": machine_info(),
           "when": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())}
    write_results(args.out, res, markdown(res))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
