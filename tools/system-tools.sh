#!/usr/bin/env bash
# Installs the system toolchains the backend tests use when they are missing (best effort: on
# a machine without apt-get or root, the tests that need a tool skip with the reason).
#   hipcc + ROCm device libraries (Debian packages): compiles the HIP backend's output for gfx90a.
#   clang++ (any version): the Metal backend's syntax and type check against tests/backends/metal_shim.
# nvcc/ptxas (CUDA 13.0) are not in Debian; the CUDA backend tests skip without them.
set -u
want=()
command -v hipcc >/dev/null 2>&1 || want+=(hipcc libamdhip64-dev rocm-device-libs)
compgen -c clang++ >/dev/null 2>&1 || want+=(clang)
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
