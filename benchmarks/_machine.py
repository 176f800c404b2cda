"""Machine facts recorded beside every benchmark result."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import datetime, timezone


def machine_info() -> dict:
    cpu = platform.processor()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        mem = float("nan")
    versions = {}
    for mod in ("numpy", "scipy", "pandas", "sklearn", "joblib"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(mem, 1),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "versions": versions,
        "git_commit": commit,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
    }
