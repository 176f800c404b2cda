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
