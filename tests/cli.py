"""Running ``perfkit`` in the test process, and the shape of its one-line errors (shared by the CLI tests)."""
import re
from types import SimpleNamespace

from perfkit.cli import main


def run_cli(capsys, *args):
    """``perfkit ARGS`` in this process: ``code``, ``out`` (stdout) and ``err`` (stderr)."""
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return SimpleNamespace(code=code, out=out.out, err=out.err)


def one_error(r, pattern):
    """Exit 2 and exactly one ``perfkit: error:`` line on stderr matching ``pattern``, no traceback."""
    assert r.code == 2 and r.err.startswith("perfkit: error: ") and r.err.count("\n") == 1, r.err
    assert "Traceback" not in r.err and re.search(pattern, r.err), r.err


def one_error_line(r, *fragments):
    """Exit 2, exactly one ``perfkit: error:`` line on stderr containing every fragment, no traceback."""
    lines = [ln for ln in r.err.splitlines() if ln.startswith("perfkit: error:")]
    assert r.code == 2, (r.code, r.err)
    assert len(lines) == 1 and "Traceback" not in r.err, r.err
    for text in fragments:
        assert text in lines[0], (text, lines[0])
    return lines[0]


def write_frame(files, name, frame):
    """``frame`` written as CSV ``name`` in the folder ``files.dir``; its path."""
    frame.to_csv(files.dir / name, index=False)
    return files.dir / name


#: ``perfkit fit`` flags for :func:`tests.frames.exact_data`'s table (target ``time``)
EXACT_FIT = ["--target", "time", "--numeric", "x", "--categorical", "c", "--extrinsic", "g", "--seeds", "1"]
#: the step-form flags for Pollux's columns, fitted in one process
POLLUX_STEP = ["--gpus", "n_gpus", "--nodes", "n_nodes", "--batch", "batch_per_gpu", "--jobs", "1"]
