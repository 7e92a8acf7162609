"""A resident process for `wave-emu` and `wave run` (opt-in: WAVEGPU_SERVER=1).

A whole `wave-emu` process pays Python's start-up, NumPy's import (57-71 ms on the 2-core VM)
and wavegpu's before it runs anything, and numba's import (0.35 s) before the compiled engine
can. With WAVEGPU_SERVER=1 the console scripts (`emu_entry`, `wave_entry`) first offer the
command to a server of this user that keeps all of that loaded: the client sends its arguments,
working directory, umask and its stdout and stderr themselves (file descriptors over a Unix socket,
SCM_RIGHTS), so the server writes the command's output exactly where a local run would, and
sends back the exit status. The client imports neither NumPy nor the emulator.

When there is no server, the client starts one in the background for the next call and runs
the command itself; it also runs it itself when the server is busy with another command (no
answer within CONNECT_TIMEOUT), when stdout or stderr is a terminal (progress bars, colours and
widths are decided per terminal), and for `wave` commands other than `run`. A server serves one
command at a time and exits after WAVEGPU_SERVER_IDLE seconds without one (default 600).

A server is keyed by what could make its answers differ from a local run's: the Python
executable and version, wavegpu's location and the size and modification time of each of its
modules (an edited checkout gets a new server), and every WAVEGPU_*, NUMBA_*, OMP_*, OPENBLAS_*,
PYTHON* and colour variable (read at import time by some libraries). Its socket and lock file
live in the private cache folder `server` (0700), which the client and the server each open once
(`paths.open_private`) and then bind, connect and open through its descriptor
(`/proc/self/fd/N/<key>.sock`; no path is resolved again after the check). On Linux each side
also checks that the other belongs to the same user (SO_PEERCRED).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # the console scripts import this module: without WAVEGPU_SERVER=1 it costs
if TYPE_CHECKING:  # nothing beyond os and sys (socket, struct and zlib are imported where used)
    import socket
    from typing import NoReturn

    from ..paths import PrivateDir

CONNECT_TIMEOUT = 0.2
"""Seconds a client waits for a server's greeting before running the command itself."""
ENV_PREFIXES = ("WAVEGPU_", "NUMBA_", "OMP_", "OPENBLAS_", "MKL_", "PYTHON")
ENV_NAMES = ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS", "TERM", "LANG", "LC_ALL")
_MAX_REQUEST = 1 << 20


def enabled(prog: str, argv: list[str]) -> bool:
    """Whether this command may be offered to a server."""
    if os.environ.get("WAVEGPU_SERVER") != "1" or os.name != "posix":
        return False
    import socket

    if not hasattr(socket, "send_fds"):
        return False
    if prog == "wave" and (not argv or argv[0] != "run"):
        return False
    try:
        return not (os.isatty(1) or os.isatty(2))
    except OSError:
        return False


def server_key() -> str:
    """What a server's answers depend on besides the command (module docstring)."""
    import zlib

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts = [sys.executable, sys.version, root, str(os.geteuid())]
    todo = [root]
    while todo:
        with os.scandir(todo.pop()) as entries:
            for e in sorted(entries, key=lambda e: e.name):
                if e.is_dir(follow_symlinks=False) and e.name != "__pycache__":
                    todo.append(e.path)
                elif e.name.endswith(".py"):
                    st = e.stat()
                    parts.append(f"{e.path}|{st.st_size}|{st.st_mtime_ns}")
    parts += sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(ENV_PREFIXES) or k in ENV_NAMES)
    data = "\n".join(parts).encode()
    # two 32-bit checksums (zlib is loaded with Python; hashlib would load OpenSSL): a key, not a
    # defence (the socket folder is private)
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def socket_name() -> str:
    """This user's server socket for the current key: a name inside the private folder `server`."""
    return server_key() + ".sock"


def _frame(data: bytes) -> bytes:
    import struct

    return struct.pack("!I", len(data)) + data


# ------------------------------------------------------------------------------- the client
def forward(prog: str, argv: list[str]) -> int | None:
    """Run `prog argv` on this user's server: its exit status, or None when the caller must run
    it itself (not enabled, no server yet: one is started for the next call, or busy)."""
    if not enabled(prog, argv):
        return None
    from ..paths import open_private

    try:
        folder = open_private("server")
    except Exception:  # an unusable cache folder: the local run reports it if it matters
        return None
    try:
        return _forward(folder, prog, argv)
    finally:
        folder.close()


def _forward(folder: PrivateDir, prog: str, argv: list[str]) -> int | None:
    name = socket_name()
    try:
        cwd = os.getcwd()  # (a folder deleted under the caller: the local run says so)
    except OSError:
        return None
    mask = os.umask(0o022)  # the caller's umask, for the files the command writes
    os.umask(mask)
    import socket

    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_TIMEOUT)
        try:
            folder.connect(conn, name)  # through the folder's descriptor: this user's own socket
            if not _peer_is_me(conn) or conn.recv(1) != b"R":  # the greeting: the server is free
                return None
        except (FileNotFoundError, ConnectionRefusedError):
            _start(name)
            return None
        except OSError:  # busy (timeout) or gone
            return None
        conn.settimeout(None)
        sys.stdout.flush()
        sys.stderr.flush()
        # NUL-separated (no argument or path can hold one; json would cost the client 8 ms)
        request = "\0".join([prog, cwd, str(mask), *argv]).encode("utf-8", "surrogateescape")
        try:
            socket.send_fds(conn, [_frame(request)], [1, 2])
        except OSError:  # nothing was run
            return None
        # from here on the command may have run, in part: never run it a second time here
        reply = b""
        try:
            while chunk := conn.recv(64):
                reply += chunk
        except KeyboardInterrupt:  # as a local run's Ctrl-C (the server finishes the command)
            sys.stderr.write("\nAborted!\n")
            return 1
        except OSError:
            pass
    finally:
        conn.close()
    try:
        return int(reply[1:]) if reply[:1] == b"X" else _stopped(prog)
    except ValueError:
        return _stopped(prog)


def _stopped(prog: str) -> int:
    sys.stderr.write(f"{prog}: the resident server (WAVEGPU_SERVER=1) stopped during the command\n")
    return 1


def _start(name: str) -> None:
    """A server for socket `name` (in the private folder `server`), detached from this process (its own session, no inherited output)."""
    import contextlib
    import subprocess

    with contextlib.suppress(OSError):  # no server then: every call runs here
        subprocess.Popen(
            # -c, not -m: click names the program after sys.argv[0] only when __main__ has no package
            [sys.executable, "-c", "import sys; from wavegpu.cli.resident import serve; serve(sys.argv[1])", name],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )


BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
"""What OpenBLAS reads for its thread count, in its order."""


def one_blas_thread() -> None:
    """Have NumPy's OpenBLAS start no worker threads in this process, unless the user chose a
    count (any of BLAS_THREAD_VARIABLES set). The commands do no large matrix products, and
    OpenBLAS's worker spins on the other core while NumPy is imported: 46 ms of CPU time of
    110 for `import numpy` on the 2-core VM, taken from whatever else runs there, the command's
    own process included under load (docs/performance.md, "Start-up against the Rust
    emulator"). Called by the console scripts before anything imports NumPy."""
    if not any(os.environ.get(v) for v in BLAS_THREAD_VARIABLES):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


def emu_entry() -> None:
    """The `wave-emu` console script."""
    code = forward("wave-emu", sys.argv[1:])
    if code is not None:
        sys.exit(code)
    one_blas_thread()
    from . import emu_main

    try:
        emu_main()
    except SystemExit as e:
        exit_now(e)


def exit_now(e: SystemExit) -> NoReturn:
    """End the process as `raise e` would, without the interpreter's teardown: tearing down the
    modules of NumPy and the emulator one object at a time took 18-28 ms of wall time at load 5-6
    (docs/performance.md, "Start-up against the Rust emulator"). What a normal exit does that
    anyone could see is done first: the atexit handlers run (weakref finalizers with atexit=True,
    such as temporary folders, among them) and stdout and stderr are flushed. The normal exit is
    taken instead for an exit status that is not an integer (a message), while a thread that is
    not a daemon is still running (Python would wait for it), and when flushing fails (a closed
    pipe: Python reports it as usual). Only the console scripts call this, never a library call."""
    code = 0 if e.code is None else e.code
    threading = sys.modules.get("threading")
    if not isinstance(code, int) or (
        threading is not None
        and any(t is not threading.main_thread() and not t.daemon and t.is_alive() for t in threading.enumerate())
    ):
        raise e
    import atexit

    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        raise e from None
    os._exit(code & 0xFF)


def wave_entry() -> None:
    """The `wave` console script."""
    code = forward("wave", sys.argv[1:])
    if code is not None:
        sys.exit(code)
    one_blas_thread()
    from . import main

    main()


# ------------------------------------------------------------------------------- the server
def _peer_is_me(conn: socket.socket) -> bool:
    import socket
    import struct

    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:  # not Linux: the private folder alone keeps others out
        return True
    _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i")))
    return uid == os.geteuid()


def run_command(prog: str, argv: list[str], cwd: str, umask: int, out_fd: int, err_fd: int) -> int:
    """Run one command as its console script would: in the caller's folder, with its umask, its
    output on the given descriptors."""
    import contextlib
    import io

    from . import emu_main, main

    saved = (sys.argv, sys.stdout, sys.stderr, os.getcwd(), os.umask(umask))
    out = io.TextIOWrapper(io.FileIO(out_fd, "w", closefd=False), encoding="utf-8", errors="replace")
    err = io.TextIOWrapper(io.FileIO(err_fd, "w", closefd=False), encoding="utf-8", errors="replace")
    code = 0
    try:
        os.chdir(cwd)
        sys.argv, sys.stdout, sys.stderr = [prog, *argv], out, err
        if prog == "wave-emu":
            emu_main()
        else:
            main()
    except SystemExit as e:
        if isinstance(e.code, str):
            err.write(e.code + "\n")
            code = 1
        else:
            code = int(e.code or 0)
    except KeyboardInterrupt:
        code = 130
    except BaseException:  # as an uncaught exception of a local run: the traceback, status 1
        import traceback

        traceback.print_exc(file=err)
        code = 1
    finally:
        for f in (out, err):
            with contextlib.suppress(OSError):  # the client went away
                f.flush()
        sys.argv, sys.stdout, sys.stderr = saved[:3]
        os.chdir(saved[3])
        os.umask(saved[4])
    return code


def serve(name: str) -> None:
    """Serve commands on socket `name` in the private folder `server` until idle for
    WAVEGPU_SERVER_IDLE seconds (one server per socket: a lock file beside it)."""
    from ..paths import open_private

    if not name.endswith(".sock") or "/" in name or name.startswith("."):
        raise SystemExit(f"not a server socket name: {name!r}")
    with open_private("server") as folder:
        _serve(folder, name)


def _serve(folder: PrivateDir, name: str) -> None:
    import fcntl
    import socket

    idle = float(os.environ.get("WAVEGPU_SERVER_IDLE") or 600)
    # created or opened through the folder's descriptor, never through a link; this user's own
    # regular file with one name (folder.open_file), so the truncation below cannot reach another
    fd = folder.open_file(name + ".lock", os.O_RDWR | os.O_CREAT)
    lock = os.fdopen(fd, "r+")  # held for the server's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return  # another server has it
    lock.truncate(0)
    lock.write(f"{os.getpid()}\n")  # which process serves this socket (`kill $(cat ...lock)` stops it)
    lock.flush()
    # what every command needs, loaded once: NumPy, the commands, the emulator, numba
    import numpy  # noqa: F401

    from ..emulator import launch  # noqa: F401
    from . import emu_main, main  # noqa: F401

    try:
        import numba  # noqa: F401

        from ..emulator.compiled import engine  # noqa: F401
    except ImportError:
        pass
    folder.unlink(name, missing_ok=True)  # a socket left by a server that died (we hold the lock)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    folder.bind(sock, name)
    sock.listen(16)
    sock.settimeout(idle)
    try:
        while True:
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                return
            with conn:
                _serve_one(conn)
    finally:
        sock.close()
        folder.unlink(name, missing_ok=True)
        lock.close()


def _serve_one(conn: socket.socket) -> None:
    import socket
    import struct

    conn.settimeout(5)
    fds: list[int] = []
    try:
        if not _peer_is_me(conn):
            return
        conn.sendall(b"R")
        msg, fds, _flags, _addr = socket.recv_fds(conn, 4 + _MAX_REQUEST, 2)
        if len(fds) != 2 or len(msg) < 4:
            raise ValueError("no request")
        (n,) = struct.unpack("!I", msg[:4])
        if n > _MAX_REQUEST:
            raise ValueError("request too large")
        body = msg[4:]
        while len(body) < n:
            chunk = conn.recv(n - len(body))
            if not chunk:
                raise ConnectionError("connection closed")
            body += chunk
        prog, cwd, mask, *argv = body.decode("utf-8", "surrogateescape").split("\0")
        if prog not in ("wave-emu", "wave"):
            raise ValueError(prog)
        umask = int(mask) & 0o777
    except (OSError, ValueError):
        for fd in fds:
            os.close(fd)
        return
    try:
        code = run_command(prog, argv, cwd, umask, fds[0], fds[1])
    finally:
        for fd in fds:
            os.close(fd)
    try:
        conn.settimeout(None)
        conn.sendall(b"X%d" % code)
    except OSError:
        pass


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        sys.exit("usage: python -m wavegpu.cli.resident serve NAME.sock")
