"""JupyterLab in a headless Chromium, for tests/test_browser.py and docs/make_screenshots.py.

:class:`Lab` starts the server with the repository's own ``make lab`` (so the command line tested is the one users
run, ``--allow-root`` for root included), serving a folder of the caller's choosing rather than the checkout, with
its configuration, settings, workspaces, kernel specs and runtime files in a private state folder: nothing is
written to the checkout or to the user's Jupyter folders, and the user's configuration (~/.jupyter) is not read.
:func:`chromium` opens the system Chromium (Debian packages ``chromium`` and ``chromium-driver``) through
Selenium; nothing is downloaded.
"""
from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
#: the stamp `make lab` depends on; `make -o` keeps an out-of-date one from reinstalling .venv under a test
STAMP = ".venv/.perfkit-installed"

#: JupyterLab settings for a scripted browser: every cell in the page (no windowing), no news or update toasts
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
}


def browser_missing() -> str | None:
    """Why the browser cannot run here (selenium, chromium or chromedriver missing), or None when it can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -c constraints.txt -e '.[test]')"
    absent = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if absent:
        return f"{' and '.join(absent)} not found (apt-get install chromium chromium-driver)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server started by ``make lab`` on ``serve_dir`` (its default page: ``serve_dir/notebooks``,
    as the Makefile's is the checkout's notebooks/), its state (configuration, data, runtime,
    IPython profile, server log) under ``state_dir``. Use as a context manager: leaving it shuts the server and its
    kernels down (:meth:`stop`)."""

    def __init__(self, serve_dir, state_dir, *, start_timeout: float = 120.0):
        self.serve_dir = Path(serve_dir).resolve()
        self.state = Path(state_dir).resolve()
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.start_timeout = start_timeout
        self.log = self.state / "lab.log"
        self.proc: subprocess.Popen | None = None

    @property
    def lab_args(self) -> list[str]:
        """What the server gets through ``LAB_ARGS``, after the Makefile's own flags (none of which it repeats:
        JupyterLab refuses a flag given twice)."""
        return ["--no-browser", f"--port={self.port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
                f"--IdentityProvider.token={self.token}"]

    @property
    def command(self) -> list[str]:
        """``make lab`` with the served folder in place of the checkout: the Makefile passes ``$(CURDIR)`` as
        ``--ServerApp.root_dir``, and a command-line ``CURDIR=`` replaces it (make still runs in the checkout)."""
        return ["make", "--no-print-directory", "-C", str(ROOT), "-o", STAMP, "lab", f"CURDIR={self.serve_dir}",
                "LAB_ARGS=" + shlex.join(self.lab_args)]

    def _env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                         ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython")):
            env[var] = str(self.state / sub)
            (self.state / sub).mkdir(parents=True, exist_ok=True)
        return env

    def start(self) -> Lab:
        settings = self.state / "config" / "lab" / "user-settings"
        for name, value in LAB_SETTINGS.items():
            (settings / name).parent.mkdir(parents=True, exist_ok=True)
            (settings / name).write_text(json.dumps(value))
        env = self._env()
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(self.command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"`{shlex.join(self.command)}` exited with {self.proc.returncode} before serving:\n"
                                   + self.log_tail())
            try:
                if self.get("/api/status")[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise TimeoutError(f"JupyterLab did not answer on port {self.port} within {self.start_timeout:.0f} s:\n"
                           + self.log_tail())

    def url(self, path: str = "/lab") -> str:
        return f"http://127.0.0.1:{self.port}{path}{'&' if '?' in path else '?'}token={self.token}"

    def get(self, path: str, timeout: float = 10.0) -> tuple[int, str]:
        """``(HTTP status, body)`` of a GET with the server's token; redirects are not followed."""

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        opener = urllib.request.build_opener(NoRedirect)
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}",
                                         headers={"Authorization": f"token {self.token}"})
        try:
            with opener.open(request, timeout=timeout) as r:
                return r.status, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode("utf-8", "replace")

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no server log)"

    def stop(self, timeout: float = 30.0) -> None:
        """Shut the server down (its kernels with it: ``POST /api/shutdown``), then end what is left of its process
        group (SIGTERM, then SIGKILL); raises if ``make lab`` still runs after that."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{self.port}/api/shutdown", method="POST",
                                                 headers={"Authorization": f"token {self.token}"})
                urllib.request.urlopen(request, timeout=10).close()
            except OSError:
                pass
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                continue
        if proc.poll() is None:
            raise RuntimeError(f"JupyterLab (process group {proc.pid}) did not stop")

    def __enter__(self) -> Lab:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def chromium(profile_dir, width: int = 1400, height: int = 900):
    """A headless Chromium driven by Selenium through the system chromedriver, with its profile in
    ``profile_dir``; quit it with ``.quit()``."""
    from selenium import webdriver

    profile = Path(profile_dir).resolve()
    profile.mkdir(parents=True, exist_ok=True)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", f"--window-size={width},{height}", "--disable-dev-shm-usage", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--hide-scrollbars", "--force-device-scale-factor=1",
                f"--user-data-dir={profile}"):
        options.add_argument(arg)
    if os.geteuid() == 0:  # Chromium's sandbox refuses to run as root
        options.add_argument("--no-sandbox")
    service = webdriver.ChromeService(executable_path=str(CHROMEDRIVER),
                                      log_output=str(profile / "chromedriver.log"))
    return webdriver.Chrome(options=options, service=service)


def copy_notebooks(names, source_dir, dest_dir) -> Path:
    """Copy the notebooks ``names`` from ``source_dir`` into ``dest_dir`` (created); returns ``dest_dir``."""
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy2(Path(source_dir) / name, dest / name)
    return dest
