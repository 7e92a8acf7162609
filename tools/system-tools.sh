#!/usr/bin/env bash
# Installs the system toolchains the backend tests use when they are missing (best effort: on
# a machine without apt-get or root, the tests that need a tool skip with the reason).
#   hipcc + ROCm device libraries (Debian packages): compiles the HIP backend's output for gfx90a.
#   clang++-15 (Debian clang-15, by its versioned name): the Metal backend's syntax and type check
#     against tests/backends/metal_shim. Debian's default `clang` is clang 14, which rejects
#     _Float16 on x86; tests/toolchains.py looks only for clang++-15 or newer by name.
#   llvm-14/lld-14 and llvm-19/lld-19 (bookworm) and llvm-22/lld-22 (bookworm-security): llvm-mc,
#     ld.lld, llvm-objdump and llvm-readelf for the AMDGCN backend's tests (gfx90a with 14 and 22,
#     gfx942 with 19 and 22, gfx950 with 22: tests/toolchains.py AMDGCN_LLVM). clang brings
#     llvm-14 but not lld-14, without which LLVM 14 would assemble and never link.
# nvcc/ptxas (CUDA 13.0) are not in Debian; the CUDA backend tests skip without them.
# Every tool the tests call is found by an explicit version in tests/toolchains.py.
set -u
want=()
command -v hipcc >/dev/null 2>&1 || want+=(hipcc libamdhip64-dev rocm-device-libs)
command -v clang++-15 >/dev/null 2>&1 || want+=(clang-15)
for v in 14 19 22; do
    command -v llvm-mc-$v >/dev/null 2>&1 || want+=(llvm-$v)
    command -v ld.lld-$v >/dev/null 2>&1 || want+=(lld-$v)
done
[ ${#want[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "system-tools: no apt-get; skipping ${want[*]} (their tests will skip)"; exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
        echo "system-tools: not root; skipping ${want[*]} (their tests will skip)"; exit 0
    fi
fi
echo "system-tools: installing ${want[*]}"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${want[@]}" >/dev/null \
    || { $SUDO apt-get update -q >/dev/null && $SUDO env DEBIAN_FRONTEND=noninteractive \
         apt-get install -y -q "${want[@]}" >/dev/null; } \
    || echo "system-tools: could not install ${want[*]} (their tests will skip)"
exit 0
