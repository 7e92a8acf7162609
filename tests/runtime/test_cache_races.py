"""Another local user who controls the path to the cache folder cannot hand it over (issue 28.1).

The attacker (a child process running as uid 65534, `nobody`) owns a folder on the way to the
cache root and, while root uses the cache, flips what the path names between root's private
folder and the attacker's own folder full of planted files: a symbolic link swapped back and
forth, or two folders exchanged in one rename (renameat2 RENAME_EXCHANGE). Planted: a compile
cache entry, a compiled-engine module, a fake resident server and a lock-file link to a
root-owned file. Each attack runs in a loop for DURATION seconds and must succeed zero times
(refusals, with a WaveError naming the folder, are fine)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import shutil
import socket
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import wavegpu as wg
from wavegpu.asm.assembler import assemble
from wavegpu.cli import resident
from wavegpu.emulator.compiled import cache as compiled_cache
from wavegpu.runtime import cache as sdk
from wavegpu.runtime import files

ATTACKER = 65534
DURATION = 2.0  # seconds each attack loop runs

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: renameat2 and /proc"),
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as a second user (uid 65534)"),
]


def chown_tree(p: Path, uid: int = ATTACKER) -> None:
    os.lchown(p, uid, uid)
    for dirpath, dirnames, filenames in os.walk(p):
        for n in dirnames + filenames:
            os.lchown(os.path.join(dirpath, n), uid, uid)


@contextlib.contextmanager
def as_attacker(work: Callable[[Callable[[], bool]], int]) -> Iterator[list[int]]:
    """Run work(stopped) in a child process as uid 65534 while the block runs; what it returns
    (a count) is appended to the list the block gets, once the block has ended."""
    r, w = os.pipe()
    stop_r, stop_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the attacker
        code = 1
        try:
            os.close(r)
            os.close(stop_w)
            os.setgroups([])
            os.setgid(ATTACKER)
            os.setuid(ATTACKER)
            started = False

            def stopped() -> bool:
                nonlocal started
                if not started:
                    started = True
                    os.write(w, b".")  # under way
                return bool(select.select([stop_r], [], [], 0)[0])

            n = work(stopped)
            os.write(w, str(n).encode())
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(w)
    os.close(stop_r)
    out: list[int] = []
    try:
        select.select([r], [], [], 10)
        assert os.read(r, 1) == b".", "the attacker did not start"
        yield out
    finally:
        os.close(stop_w)
        data = b""
        while chunk := os.read(r, 64):
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
        out.append(int(data) if data else -1)


class Arena:
    """/tmp/wgrXXXX/att (the attacker's folder) holding the name of the cache root, which flips
    between root's private folder and the attacker's folder `evil`."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.base = Path(tempfile.mkdtemp(prefix="wgr", dir="/tmp"))  # short: Unix socket paths
        os.chmod(self.base, 0o755)
        self.att = self.base / "att"
        self.att.mkdir(mode=0o755)
        self.evil = self.att / "evil"
        self.evil.mkdir(mode=0o755)
        if mode == "symlink":
            self.private = self.base / "private"
            self.root = self.att / "link"
            os.symlink(self.private, self.root)
        else:
            self.private = self.att / "cache"
            self.root = self.private
        self.private.mkdir(mode=0o700)
        for sub in ("kernels", "compiled", "server"):
            (self.private / sub).mkdir(mode=0o700)
            (self.evil / sub).mkdir(mode=0o755)

    def hand_over(self) -> None:
        """Give the attacker's folders (and what was planted in them) to the attacker."""
        chown_tree(self.evil)
        os.lchown(self.att, ATTACKER, ATTACKER)
        if self.mode == "symlink":
            os.lchown(self.root, ATTACKER, ATTACKER)

    def flipper(self, stopped: Callable[[], bool]) -> int:
        flips = 0
        if self.mode == "symlink":
            tmp = str(self.att / "link.new")
            while not stopped():
                for target in (self.evil, self.private):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(tmp)
                    os.symlink(target, tmp)
                    os.rename(tmp, self.root)
                    flips += 1
        else:
            libc = ctypes.CDLL(None, use_errno=True)
            a, b = str(self.private).encode(), str(self.evil).encode()
            while not stopped():
                if libc.renameat2(-100, a, -100, b, 2) == 0:  # AT_FDCWD, RENAME_EXCHANGE
                    flips += 1
        return flips

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture(params=["symlink", "exchange"])
def arena(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Arena]:
    a = Arena(request.param)
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(a.root))
    try:
        yield a
    finally:
        a.close()


def timed(n: int) -> Iterator[int]:
    """0, 1, .., n - 1, 0, 1, .. for DURATION seconds."""
    end = time.monotonic() + DURATION
    i = 0
    while time.monotonic() < end:
        yield i % n
        i += 1


def test_a_flipped_cache_never_serves_a_planted_kernel(arena: Arena) -> None:
    good = assemble(".kernel good\n.workgroup_size 64, 1, 1\n    halt\n")
    evil = assemble(".kernel evil\n.workgroup_size 64, 1, 1\n    halt\n").to_bytes()
    keys = [f"// race {i}" for i in range(64)]
    for k in keys:
        (arena.evil / "kernels" / f"{sdk._cache_key(k, {})}.wbin").write_bytes(evil)
    arena.hand_over()
    runs, planted = 0, 0
    with warnings.catch_warnings(), as_attacker(arena.flipper) as flips:
        warnings.simplefilter("ignore")  # "compile cache off: ... owned by uid 65534"
        for i in timed(len(keys)):
            sdk._MEMORY_CACHE.clear()
            prog = sdk.compile_cached(keys[i], {}, lambda: good)
            runs += 1
            planted += prog.kernels[0].name == "evil"
    assert flips[0] > 0 and runs > 0
    assert planted == 0, f"{planted} of {runs} calls ran the planted kernel"


def test_a_flipped_cache_never_runs_a_planted_module(arena: Arena) -> None:
    marker = arena.base / "module-ran"
    keys = [f"race{os.getpid()}x{i:05d}" for i in range(64)]
    for k in keys:
        (arena.evil / "compiled" / k).mkdir()
        (arena.evil / "compiled" / k / "kernel.py").write_text(f"X = 'evil'\nopen({str(marker)!r}, 'a').close()\n")
    arena.hand_over()
    runs, planted, refused = 0, 0, 0
    try:
        with as_attacker(arena.flipper) as flips:
            for i in timed(len(keys)):
                compiled_cache._LOADED.pop(keys[i])
                try:
                    mod = compiled_cache.load(keys[i], "X = 'good'\n", f"_race_module_{keys[i]}")
                except wg.WaveError:
                    refused += 1
                    continue
                runs += 1
                planted += mod.X != "good"
    finally:
        for k in keys:
            sys.modules.pop(f"_race_module_{k}", None)
            compiled_cache._LOADED.pop(k)
    assert flips[0] > 0 and runs + refused > 0
    assert planted == 0 and not marker.exists(), f"{planted} of {runs} loads ran the planted module"


def fake_server(folder: Path, name: str) -> Callable[[Callable[[], bool]], int]:
    """The attacker's server: greets every client and counts the requests it receives."""

    def serve(stopped: Callable[[], bool]) -> int:
        os.chdir(folder)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(name)
        os.chmod(name, 0o777)
        s.listen(16)
        s.settimeout(0.05)
        got = 0
        while not stopped():
            try:
                c, _ = s.accept()
            except TimeoutError:
                continue
            with c:
                c.settimeout(1)
                with contextlib.suppress(OSError):
                    c.sendall(b"R")
                    msg, fds, _, _ = socket.recv_fds(c, 1 << 16, 2)
                    got += bool(msg or fds)
                    for fd in fds:
                        os.close(fd)
        return got

    return serve


def test_a_flipped_cache_never_connects_to_a_fake_server(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAVEGPU_SERVER", "1")
    monkeypatch.setattr(resident, "enabled", lambda prog, argv: True)
    monkeypatch.setattr(resident, "_start", lambda *a: None)  # no real server started by the loop
    name = resident.server_key() + ".sock"
    arena.hand_over()
    runs = 0
    with as_attacker(fake_server(arena.evil / "server", name)) as got, as_attacker(arena.flipper) as flips:
        time.sleep(0.2)  # the fake server listens
        for _ in timed(1):
            resident.forward("wave-emu", ["--version"])
            runs += 1
    assert flips[0] > 0 and runs > 0
    assert got[0] == 0, f"{got[0]} of {runs} clients sent their command to the fake server"


def test_a_flipped_cache_never_lets_the_server_truncate_through_a_planted_lock(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAVEGPU_SERVER_IDLE", "0.005")
    victim = arena.base / "victim"
    victim.write_text("root's data\n")
    os.chmod(victim, 0o600)
    name = resident.server_key() + ".sock"
    os.symlink(victim, arena.evil / "server" / (name + ".lock"))
    arena.hand_over()
    runs = 0
    with as_attacker(arena.flipper) as flips:
        for _ in timed(1):
            with contextlib.suppress(OSError, wg.WaveError):
                resident.serve(name)
            runs += 1
            if victim.read_text() != "root's data\n":
                break
    assert flips[0] > 0 and runs > 0
    assert victim.read_text() == "root's data\n" and os.stat(victim).st_uid == 0


def test_a_lock_link_planted_in_the_servers_folder_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(tempfile.mkdtemp(prefix="wgl", dir="/tmp"))
    try:
        monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(root))
        monkeypatch.setenv("WAVEGPU_SERVER_IDLE", "0.005")
        (root / "server").mkdir(parents=True, mode=0o700)
        os.chmod(root, 0o700)
        victim = tmp_path / "victim"
        victim.write_text("root's data\n")
        os.chmod(victim, 0o600)
        name = resident.server_key() + ".sock"
        os.symlink(victim, root / "server" / (name + ".lock"))
        with contextlib.suppress(OSError, wg.WaveError):
            resident.serve(name)
        assert victim.read_text() == "root's data\n"
        assert not (root / "server" / name).exists()  # no server started either
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_cache_root_through_another_users_link_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    link = tmp_path / "link"
    os.symlink(private, link)
    os.lchown(link, ATTACKER, ATTACKER)
    monkeypatch.setenv("WAVEGPU_CACHE_DIR", str(link))
    with pytest.raises(wg.WaveError, match=f"{link}: a symbolic link owned by uid {ATTACKER}, not by this user"):
        files.open_private("kernels")
    os.lchown(link, 0, 0)  # root's own link is followed
    with files.open_private("kernels") as d:
        assert d.identity()[1] == os.stat(private / "kernels").st_ino
