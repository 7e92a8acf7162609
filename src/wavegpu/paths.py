"""The per-user cache folder and its private subfolders (floor 0: the runtime's compile cache and
SYCL runners, the emulator's compiled engine and the resident server all keep files there and load
code from them).

A private folder is checked and used as one object: `open_private` walks the path from `/` one
component at a time (`O_DIRECTORY | O_NOFOLLOW`; a symbolic link on the way is followed only
when it belongs to this user or to root), creates what is missing 0700, and checks the owner
and mode of the cache root and of each folder below it with `fstat` on the descriptor it opened.
The `PrivateDir` it returns holds that descriptor, and every later open, write, rename, exec,
bind and connect is made relative to it (`dir_fd=`, `/proc/<pid>/fd/N/...`), so a path that
changes after the check (a flipped symbolic link, a renamed folder) can no longer hand the
folder to someone else."""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # no pathlib, typing or errors at import: cli/resident.py's client uses this
if TYPE_CHECKING:
    import socket
    from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_LINKS = 40  # as the kernel's own limit on symbolic links in one lookup


def _error(message: str) -> Exception:
    from .errors import WaveError  # imported when raising: the error classes cost start-up time

    return WaveError(message)


def cache_root() -> Path:
    """$WAVEGPU_CACHE_DIR when set (and not empty), else $XDG_CACHE_HOME/wavegpu, else ~/.cache/wavegpu."""
    from pathlib import Path

    return Path(cache_root_str())


def cache_root_str() -> str:
    """cache_root() as a string (without importing pathlib)."""
    d = os.environ.get("WAVEGPU_CACHE_DIR")
    if d:
        return d
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec: a relative value is ignored
        return os.path.join(xdg, "wavegpu")
    return os.path.join(os.path.expanduser("~"), ".cache", "wavegpu")


def disk_cache_off() -> bool:
    """WAVEGPU_CACHE_DIR set empty: wavegpu keeps nothing on disk (no compile cache, no compiled
    engine modules, no numba cache of its own)."""
    return os.environ.get("WAVEGPU_CACHE_DIR") == ""


def check_private(path: object, st: os.stat_result) -> None:
    """A WaveError naming path unless st (its fstat) belongs to this user and no one else may write it."""
    if st.st_uid != os.geteuid():
        raise _error(f"{path}: owned by uid {st.st_uid}, not by this user (uid {os.geteuid()}); refusing to use it")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise _error(
            f"{path}: writable by group or others (mode {stat.S_IMODE(st.st_mode):o}); "
            f"refusing to use it (chmod go-w {path})"
        )


def _proc_fd(for_children: bool = False) -> str | None:
    """The folder through which this process's descriptors can be named by a path (Linux), or
    None: /proc/self/fd, or /proc/<pid>/fd for a path handed to another process."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    return f"/proc/{os.getpid()}/fd" if for_children else "/proc/self/fd"


def _single(name: str) -> str:
    if not name or "/" in name or name in (".", "..") or "\0" in name:
        raise ValueError(f"not a single path component: {name!r}")
    return name


class PrivateDir:
    """An open private folder (see the module docstring): its descriptor and, for messages only,
    the path it was opened by. Names given to its methods are single components inside it."""

    __slots__ = ("fd", "path")

    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path

    # --- life
    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> PrivateDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PrivateDir({self.path!r}, fd={self.fd})"

    def where(self, name: str = "") -> str:
        """name inside this folder as a path, for messages (never opened by wavegpu)."""
        return os.path.join(self.path, name) if name else self.path

    def identity(self) -> tuple[int, int]:
        st = os.fstat(self.fd)
        return st.st_dev, st.st_ino

    # --- folders
    def subdir(self, name: str, create: bool = True) -> PrivateDir:
        """The private folder `name` inside this one (created 0700 when missing and create is
        true; FileNotFoundError when missing otherwise), checked on its own descriptor."""
        return _open_child(self.fd, _single(name), self.where(name), create)

    def mkdtemp(self, prefix: str) -> str:
        """A new empty 0700 folder with an unpredictable name starting with prefix: its name."""
        for _ in range(100):
            name = prefix + os.urandom(6).hex()
            try:
                os.mkdir(_single(name), 0o700, dir_fd=self.fd)
                return name
            except FileExistsError:
                continue
        raise _error(f"{self.path}: cannot create a temporary folder")

    def rmtree(self, name: str) -> None:
        """Delete name (a folder or a file) inside this folder, ignoring errors."""
        import shutil

        try:
            st = os.stat(_single(name), dir_fd=self.fd, follow_symlinks=False)
        except OSError:
            return
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(name, dir_fd=self.fd, ignore_errors=True)
        else:
            self.unlink(name)

    def listdir(self) -> list[str]:
        return os.listdir(self.fd)

    # --- files
    def open(self, name: str, flags: int, mode: int = 0o600) -> int:
        """os.open of name inside this folder, never through a symbolic link."""
        return os.open(_single(name), flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=self.fd)

    def open_file(self, name: str, flags: int = os.O_RDONLY, mode: int = 0o600, chmod: int | None = None) -> int:
        """open() of a regular file that belongs to this user and no one else may write
        (a WaveError naming it otherwise; FileNotFoundError when it is missing). `chmod`: the
        mode given to the opened file before it is checked (a compiler's output, whatever the
        umask gave it)."""
        fd = self.open(name, flags, mode)
        try:
            if chmod is not None:
                os.fchmod(fd, chmod)
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _error(f"{self.where(name)}: not a regular file")
            check_private(self.where(name), st)
            if st.st_nlink > 1:
                raise _error(f"{self.where(name)}: has {st.st_nlink} hard links; refusing to use it")
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read_bytes(self, name: str) -> bytes:
        """The bytes of a private regular file (open_file)."""
        fd = self.open_file(name)
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def write_bytes(self, name: str, data: bytes, mode: int = 0o600) -> None:
        """Write name atomically: a new file under an unpredictable name, renamed over name."""
        for _ in range(100):
            tmp = f".{name}.{os.urandom(6).hex()}.tmp"
            try:
                fd = self.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
                break
            except FileExistsError:
                continue
        else:
            raise _error(f"{self.where(name)}: cannot create a temporary file")
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            self.rename(tmp, name)
        except BaseException:
            self.unlink(tmp, missing_ok=True)
            raise

    def exists(self, name: str) -> bool:
        try:
            os.stat(_single(name), dir_fd=self.fd, follow_symlinks=False)
            return True
        except OSError:
            return False

    def unlink(self, name: str, missing_ok: bool = False) -> None:
        try:
            os.unlink(_single(name), dir_fd=self.fd)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def rename(self, src: str, dst: str) -> None:
        os.rename(_single(src), _single(dst), src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def chmod(self, name: str, mode: int) -> None:
        os.chmod(_single(name), mode, dir_fd=self.fd)

    # --- paths through the descriptor, for what takes only a path
    def fs_path(self, name: str = "", for_children: bool = False) -> str:
        """A path that reaches name inside this very folder while it is open: /proc/self/fd/N/name,
        or /proc/<pid>/fd/N/name (for_children: a path given to a process this one starts). Where
        there is no /proc it is the path the folder was opened by (checked, not race-free)."""
        proc = _proc_fd(for_children)
        base = f"{proc}/{self.fd}" if proc is not None else self.path
        return f"{base}/{_single(name)}" if name else base

    def bind(self, sock: socket.socket, name: str) -> None:
        """Bind an AF_UNIX socket to name inside this folder (mode 0600)."""
        old = os.umask(0o177)
        try:
            self._at(sock.bind, name)
        finally:
            os.umask(old)
        self.chmod(name, 0o600)

    def connect(self, sock: socket.socket, name: str) -> None:
        """Connect an AF_UNIX socket to name inside this folder."""
        self._at(sock.connect, name)

    def _at(self, call: object, name: str) -> None:
        proc = _proc_fd()
        if proc is not None:
            call(f"{proc}/{self.fd}/{_single(name)}")  # type: ignore[operator]
            return
        here = os.open(".", os.O_RDONLY | os.O_CLOEXEC)  # no /proc: bind/connect from inside the folder
        try:
            os.fchdir(self.fd)
            call(_single(name))  # type: ignore[operator]
        finally:
            os.fchdir(here)
            os.close(here)


def proc_available() -> bool:
    """Whether descriptors can be named by paths here (PrivateDir.fs_path is race-free)."""
    return _proc_fd() is not None


def _verified(fd: int, shown: str) -> PrivateDir:
    """The folder open on fd, once check_private holds for the descriptor itself (closed if not)."""
    try:
        check_private(shown, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return PrivateDir(fd, shown)


def _open_child(parent: int, name: str, shown: str, create: bool) -> PrivateDir:
    """A private folder `name` of the folder open as `parent` (no symbolic link followed)."""
    for _ in range(3):
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(name, 0o700, dir_fd=parent)  # the mode applies to the folder it creates
            except FileExistsError:
                pass
            except OSError as e:
                raise _error(f"{shown}: cannot create the cache folder: {e.strerror}") from None
            continue
        except OSError as e:
            raise _error(f"{shown}: not a folder ({e.strerror}); refusing to use it") from None
        return _verified(fd, shown)
    raise _error(f"{shown}: cannot open the cache folder (it keeps changing)")


def _walk(path: str, create: bool) -> int:
    """A descriptor of the folder at path, opened one component at a time from `/`. A symbolic
    link on the way is followed when this user or root owns it (refused otherwise: whoever owns
    a link can point it elsewhere at any moment); missing folders are created 0700 when create."""
    todo = [c for c in os.path.abspath(path).split("/") if c]
    fd = os.open("/", _DIR_FLAGS)
    done = "/"  # the path resolved so far, for messages
    links = 0
    try:
        while todo:
            c = todo.pop(0)
            if c == ".":
                continue
            here = os.path.join(done, c)
            try:
                nfd = os.open(c, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create or c == "..":
                    raise _error(f"{here}: no such folder") from None
                try:
                    os.mkdir(c, 0o700, dir_fd=fd)
                except FileExistsError:
                    pass
                except OSError as e:
                    raise _error(f"{here}: cannot create the cache folder: {e.strerror}") from None
                todo.insert(0, c)
                continue
            except OSError as e:
                lfd = os.open(c, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd) if hasattr(os, "O_PATH") else -1
                try:
                    st = os.fstat(lfd) if lfd >= 0 else os.stat(c, dir_fd=fd, follow_symlinks=False)
                    if not stat.S_ISLNK(st.st_mode):
                        raise _error(f"{here}: not a folder ({e.strerror})") from None
                    if st.st_uid not in (os.geteuid(), 0):
                        raise _error(
                            f"{here}: a symbolic link owned by uid {st.st_uid}, not by this user "
                            f"(uid {os.geteuid()}) or root; refusing to follow it"
                        ) from None
                    links += 1
                    if links > _MAX_LINKS:
                        raise _error(f"{path}: too many symbolic links") from None
                    target = os.readlink("", dir_fd=lfd) if lfd >= 0 else os.readlink(c, dir_fd=fd)
                finally:
                    if lfd >= 0:
                        os.close(lfd)
                todo[:0] = [t for t in target.split("/") if t]
                if target.startswith("/"):
                    os.close(fd)
                    fd = -1
                    fd = os.open("/", _DIR_FLAGS)
                    done = "/"
                continue
            os.close(fd)
            fd = nfd
            done = os.path.dirname(done) if c == ".." else here
        return fd
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise


def open_private(*parts: str, create: bool = True) -> PrivateDir:
    """The private folder cache root/parts... (each created 0700 when missing; the root and each
    part checked with check_private on its own descriptor). Close it (or use `with`)."""
    root = cache_root_str()
    try:
        fd = _walk(root, create)
    except OSError as e:
        raise _error(f"{root}: cannot open the cache folder: {e.strerror}") from None
    d = _verified(fd, root)
    try:
        for p in parts:
            inner = d.subdir(p, create)
            d.close()
            d = inner
    except BaseException:
        d.close()
        raise
    return d
