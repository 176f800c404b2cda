#!/usr/bin/env bash
# Collect the <framework>-cuda datasets of Chapters 3 and 4 on one GPU (G = 1), each campaign cut at a time
# limit (a SIGTERM stops `perfkit collect` cleanly: every finished sample is kept, the provenance session closed,
# and the same command resumes it later). Meant for a lent GPU machine whose python has PyTorch, JAX (with the
# CUDA plugin) and optax; run from the repository root:
#
#     PERFKIT_SOURCE_COMMIT=$(git rev-parse --short HEAD) benchmarks/device/collect_cuda.sh OUTDIR
#
# It writes data/measured/{pytorch,jax}-cuda/ (DATA overrides the folder), a log, and OUTDIR/cuda-datasets.tar.gz.
# Time limits in seconds: PT_CH3_S, JAX_CH3_S (Chapter 3 phases), PT_CH4_S, JAX_CH4_S (Chapter 4 samples).
# WORKER_PY: the workers' interpreter where it is not PY. DEVICE=cpu runs the same campaigns on the CPU (a dry run of this script; write them to another DATA folder).
set -u
OUTDIR=${1:?usage: collect_cuda.sh OUTDIR}
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
DATA=${DATA:-data/measured}
PT_CH3_S=${PT_CH3_S:-60}
JAX_CH3_S=${JAX_CH3_S:-90}
PT_CH4_S=${PT_CH4_S:-130}
JAX_CH4_S=${JAX_CH4_S:-100}
FRAMEWORKS=${FRAMEWORKS:-pytorch jax}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
mkdir -p "$OUTDIR"
LOG="$OUTDIR/collect_cuda.log"

campaign() {  # seconds framework kind file [options]
  local secs=$1 fw=$2 kind=$3 file=$4; shift 4
  echo "== $(date -u +%FT%TZ) $fw $kind on $DEVICE, at most ${secs}s"
  timeout -s TERM -k 30 "$secs" "$PY" -m perfkit.cli collect "$kind" --framework "$fw" --device "$DEVICE" \
    --workers 1 --python "${WORKER_PY:-$PY}" --out "$DATA/$fw-$DEVICE/$file" --no-progress "$@"
  echo "== rc=$? (124: stopped at the time limit; the samples finished so far are kept)"
}

{
  echo "== machine"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
  "$PY" - <<'PYEOF'
import importlib
for name in ("numpy", "pandas", "scipy", "torch", "jax", "jaxlib", "optax"):
    try:
        mod = importlib.import_module(name)
        print(name, mod.__version__)
    except Exception as exc:  # report and go on: the campaign that needs it will fail with its own message
        print(name, "unavailable:", exc)
try:
    import torch
    print("torch.cuda", torch.cuda.is_available(), torch.version.cuda,
          torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
    import jax
    print("jax devices", jax.devices())
except Exception as exc:
    print("device check:", exc)
PYEOF
  for fw in $FRAMEWORKS; do
    secs=$PT_CH3_S; [ "$fw" = jax ] && secs=$JAX_CH3_S
    campaign "$secs" "$fw" ch3 ch3_phases.csv
  done
  for fw in $FRAMEWORKS; do
    secs=$PT_CH4_S; [ "$fw" = jax ] && secs=$JAX_CH4_S
    campaign "$secs" "$fw" ch4 ch4_lenet5.csv
  done
  echo "== $(date -u +%FT%TZ) done"
} 2>&1 | tee -a "$LOG"

dirs=(); for fw in $FRAMEWORKS; do [ -d "$DATA/$fw-$DEVICE" ] && dirs+=("$DATA/$fw-$DEVICE"); done
[ ${#dirs[@]} -gt 0 ] && tar czf "$OUTDIR/cuda-datasets.tar.gz" "${dirs[@]}"
ls -l "$OUTDIR"
