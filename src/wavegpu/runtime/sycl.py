"""The SYCL device: runs the SYCL backend's output through Intel's run-time SYCL compiler
(`intel-sycl-rt`: headers, libsycl and libsycl-jit) on the CPU OpenCL device. A small host
program of ours, built once with the system's g++ into a private cache folder and checked against
its recorded SHA-256 before each start, compiles a translation unit of
kernels at run time and launches them; the kernels' memory goes through files."""

from __future__ import annotations

import atexit
import hashlib
import select
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

from ..errors import WaveError, usable
from . import faults, files
from .opencl import loader_env

RUNNER = r"""
#include <sycl/sycl.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>
namespace syclex = sycl::ext::oneapi::experimental;

static std::vector<unsigned char> slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<unsigned char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

/* argv[1]: the SYCL source; argv[2]: a folder. stdin, one launch per line:
   kernel gx gy gz lx ly lz i nargs a0 a1 ...  (memory in folder/m<i>, rewritten; constants in folder/c<i>) */
int main(int argc, char** argv) {
    try {
        sycl::queue q{sycl::cpu_selector_v};
        std::ifstream sf(argv[1]);
        std::stringstream ss;
        ss << sf.rdbuf();
        auto src = syclex::create_kernel_bundle_from_source(q.get_context(), syclex::source_language::sycl, ss.str());
        auto exe = syclex::build(src);
        std::cout << "ready" << std::endl;
        std::string line;
        while (std::getline(std::cin, line)) {
            std::istringstream in(line);
            std::string name, index;
            size_t g[3], l[3], nargs;
            in >> name >> g[0] >> g[1] >> g[2] >> l[0] >> l[1] >> l[2] >> index >> nargs;
            std::string memfile = std::string(argv[2]) + "/m" + index, constfile = std::string(argv[2]) + "/c" + index;
            std::vector<unsigned> args(nargs);
            for (auto& a : args) in >> a;
            sycl::kernel k = exe.ext_oneapi_get_kernel(name);
            auto mem = slurp(memfile), cst = slurp(constfile);
            unsigned char* dm = sycl::malloc_shared<unsigned char>(mem.size() + 16, q);
            unsigned char* dc = sycl::malloc_shared<unsigned char>(cst.size() + 16, q);
            std::copy(mem.begin(), mem.end(), dm);
            std::copy(cst.begin(), cst.end(), dc);
            q.submit([&](sycl::handler& h) {
                h.set_arg(0, dm);
                h.set_arg(1, (const unsigned char*)dc);
                for (size_t i = 0; i < nargs; i++) h.set_arg(2 + i, args[i]);
                /* SYCL's last dimension varies fastest: WAVE's x */
                h.parallel_for(sycl::nd_range<3>{{g[2] * l[2], g[1] * l[1], g[0] * l[0]}, {l[2], l[1], l[0]}}, k);
            }).wait_and_throw();
            std::ofstream(memfile, std::ios::binary).write((const char*)dm, mem.size());
            sycl::free(dm, q);
            sycl::free(dc, q);
            std::cout << "ok" << std::endl;
        }
    } catch (const std::exception& e) {
        std::cerr << e.what() << std::endl;
        return 2;
    }
    return 0;
}
"""


def _prefix() -> Path:
    try:
        dist = metadata.distribution("intel-sycl-rt")
    except metadata.PackageNotFoundError:
        raise WaveError("the SYCL device needs intel-sycl-rt (make test-sycl installs it)") from None
    lib = next((f for f in dist.files or [] if f.name == "libsycl.so"), None)
    if lib is None:
        raise WaveError("intel-sycl-rt is installed without libsycl.so")
    return Path(str(dist.locate_file(lib))).resolve().parent.parent  # <prefix>/lib/libsycl.so


def _build(cxx: str, prefix: Path) -> Callable[[Path], None]:
    def build(exe: Path) -> None:
        src = exe.with_name("runner.cpp")
        src.write_text(RUNNER)
        cmd = [cxx, "-std=c++17", "-O1", "-DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING", f"-I{prefix / 'include'}", str(src)]
        cmd += [f"-L{prefix / 'lib'}", "-lsycl", f"-Wl,-rpath,{prefix / 'lib'}", "-o", str(exe)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise WaveError(f"building the SYCL host program failed:\n{r.stderr[-3000:]}")

    return build


def _runner_spec() -> tuple[str, Callable[[Path], None]]:
    """The runner's folder name (a hash of what it is built from) and its build function."""
    prefix = _prefix()
    cxx = shutil.which("g++")
    if cxx is None:
        raise WaveError("the SYCL device needs g++ to build its host program")
    key = hashlib.sha256((RUNNER + str(prefix) + cxx).encode()).hexdigest()[:16]
    return f"host-{key}", _build(cxx, prefix)


def runner() -> Path:
    """The host program, built on first use with g++ into the private cache folder `sycl` (see
    files.open_private) beside the SHA-256 of what was built, which is checked again before each
    run; a runner that fails the check (changed, or not private to this user) is rebuilt. The
    path is for messages: the program is started through the folder's descriptor (_start)."""
    key, build = _runner_spec()
    with files.open_private("sycl") as d:
        return files.executable(d, key, build)


def _start(args: Sequence[str]) -> subprocess.Popen[str]:
    """The host program started on args, verified just before; rebuilt once when it fails verification."""
    env = loader_env()
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    key = runner().parent.name
    with files.open_private("sycl") as d:
        try:
            return files.spawn(d, key, args, env=env, **pipes)
        except files.Tampered:
            files.discard(d, key)
    key = runner().parent.name
    with files.open_private("sycl") as d:
        return files.spawn(d, key, args, env=env, **pipes)


def available() -> tuple[bool, str]:
    """(is the SYCL device usable, why not)."""
    return usable(runner)


Launch = tuple[str, Sequence[int], Sequence[int], np.ndarray, np.ndarray, Sequence[int]]


LAUNCH_TIMEOUT_S = 120  # a build or kernel silent this long is taken as hung


class _Session:
    """One host process that has built one translation unit; it takes launches until closed."""

    def __init__(self, source: str):
        self.dir = tempfile.TemporaryDirectory(prefix="wavegpu-sycl-")
        d = Path(self.dir.name)
        (d / "k.cpp").write_text(source)
        self.proc = _start([str(d / "k.cpp"), str(d)])
        self.count = 0
        if self._reply("the run-time build") != "ready":  # the build failed: say why
            self.close()
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise WaveError(f"the SYCL device failed: {err.strip()[-4000:]}")

    def launch(
        self, name: str, g: Sequence[int], wgs: Sequence[int], mem: np.ndarray, const: np.ndarray, args: Sequence[int]
    ) -> np.ndarray:
        d, i = Path(self.dir.name), self.count
        self.count += 1
        (d / f"m{i}").write_bytes(np.ascontiguousarray(mem, np.uint8).tobytes())
        (d / f"c{i}").write_bytes(np.ascontiguousarray(const, np.uint8).tobytes())
        nums = " ".join(str(int(a) & 0xFFFFFFFF) for a in args)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(f"{name} {g[0]} {g[1]} {g[2]} {wgs[0]} {wgs[1]} {wgs[2]} {i} {len(args)} {nums}\n")
            self.proc.stdin.flush()
            ok = self._reply(f"kernel {name}") == "ok"
        except BrokenPipeError:
            ok = False
        if not ok:
            self.close()
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise WaveError(f"the SYCL device failed: {err.strip()[-4000:]}")
        out = np.frombuffer((d / f"m{i}").read_bytes(), np.uint8).copy()
        (d / f"m{i}").unlink()
        (d / f"c{i}").unlink()
        return out

    def _reply(self, what: str) -> str:
        """The host process's next line, or a WaveError when it says nothing for LAUNCH_TIMEOUT_S."""
        assert self.proc.stdout is not None
        if not select.select([self.proc.stdout], [], [], LAUNCH_TIMEOUT_S)[0]:
            self.proc.kill()
            self.proc.wait()
            self.dir.cleanup()
            raise WaveError(f"the SYCL device: {what} did not finish in {LAUNCH_TIMEOUT_S} s")
        return self.proc.stdout.readline().strip()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
        self.dir.cleanup()


_SESSIONS: dict[str, _Session] = {}  # source hash -> a live host process (the build is the slow part)


def _session(source: str) -> _Session:
    key = hashlib.sha256(source.encode()).hexdigest()
    s = _SESSIONS.get(key)
    if s is None or s.proc.poll() is not None:
        if len(_SESSIONS) >= 8:  # keep a few processes, not one per kernel ever run
            _SESSIONS.pop(next(iter(_SESSIONS))).close()
        s = _SESSIONS[key] = _Session(source)
    return s


@atexit.register
def _close_all() -> None:
    for s in _SESSIONS.values():
        s.close()
    _SESSIONS.clear()


def run_many(source: str, launches: Sequence[Launch], span: tuple[int, int] | None = None) -> list[np.ndarray]:
    """Build source once (kept in a live host process for later calls) and run each (kernel,
    grid, workgroup, memory, constants, args); returns each launch's memory afterwards. The
    kernels check their accesses (runtime/faults.py: `span`, the bytes of device memory they may
    access, default all); a fault one records is a DeviceFault."""
    s = _session(source)
    out = []
    for name, g, wgs, mem, const, args in launches:
        image = np.ascontiguousarray(mem, np.uint8)
        armed, bounds, slot = faults.arm(image, np.asarray(const).size, span)
        try:
            got = s.launch(name, g, wgs, armed, const, [*bounds, *args])
        except WaveError:
            _SESSIONS.pop(hashlib.sha256(source.encode()).hexdigest(), None)
            raise
        faults.check(name, got, slot)
        out.append(got[: image.size])
    return out


__all__ = ["available", "run_many", "runner"]
