#!/usr/bin/env bash
# The device campaign for a lent machine with 16 CPU cores and one GPU: resume the 16-core PyTorch Chapter 4
# file, JAX Chapters 3 and 4 on 16 cores, a Chapter 5 sample on the GPU; each step a `perfkit collect` cut at a
# time limit, the whole within BUDGET_S (default 570 s). Run from the repository root (or anywhere):
#
#     PERFKIT_SOURCE_COMMIT=<commit of the copied tree> benchmarks/device/campaign.sh OUTDIR
#
# It continues data/measured/{pytorch-cpu16,jax-cpu16,pytorch-cuda}/ in place (DATA overrides the folder) and
# writes OUTDIR/campaign.log, OUTDIR/campaign-summary.json and OUTDIR/device-campaign.tar.gz (the datasets, as
# <folder>/<file>: unpack with `tar xzf device-campaign.tar.gz -C data/measured`). Settings (slices, STEPS,
# DEVICE=cpu for a dry run, ...): benchmarks/device/campaign.py's docstring and docs/measuring.md.
set -u
OUTDIR=${1:?usage: campaign.sh OUTDIR}
mkdir -p "$OUTDIR" && OUTDIR=$(cd "$OUTDIR" && pwd)
cd "$(dirname "$0")/../.." || exit 2
PY=${PY:-python3}
export PY PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
"$PY" benchmarks/device/campaign.py "$OUTDIR"
rc=$?
ls -l "$OUTDIR"
exit $rc
