"""Shared test setup: make tests/ importable (strategies, corpus) and set hypothesis profiles."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

# One private cache folder for the whole run (compiled .wbin entries, the compiled engine's modules
# and numba's machine code for them). It is made here, in the process that starts the run, before
# pytest-xdist starts its workers: they inherit it, so a kernel that one worker compiled with numba
# is loaded by the others instead of compiled again. A user's own WAVEGPU_CACHE_DIR is kept.
if "WAVEGPU_CACHE_DIR" not in os.environ:
    os.environ["WAVEGPU_CACHE_DIR"] = tempfile.mkdtemp(prefix="wavegpu-cache-")
    os.environ["WAVEGPU_TEST_CACHE_OWNER"] = str(os.getpid())

settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_addoption(parser):  # type: ignore[no-untyped-def]
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files for review")
    parser.addoption(
        "--update-wbin-digests",
        action="store_true",
        help="rewrite tests/data/wbin_digests.json (the corpus's .wbin digests) for review",
    )


# Tests that take a minute or more on a 2-core CI machine (cold numba compiles of generated
# kernels, Intel's SYCL JIT, hypothesis round trips of whole programs). Under pytest-xdist a run
# ends when its last worker does, so these are handed out first (longest first, as `make test`
# runs with --dist load and small chunks); a serial run keeps the file order.
LONG_FIRST = (
    "tests/emulator/compiled/test_compiled_examples.py::test_sgemm_blocked",
    "tests/emulator/compiled/test_compiled_programs.py::test_every_register_as_a_loop_accumulator",
    "tests/emulator/compiled/test_compiled_programs.py::test_generated_programs",
    "tests/emulator/compiled/test_compiled_programs.py::test_loops_run_lane_by_lane",
    "tests/wbin/test_wbin.py::test_programs_round_trip",
    "tests/emulator/compiled/test_compiled_rows.py::test_atomic_rows_match",
    "tests/emulator/compiled/test_compiled_programs.py::test_compiler_corpus",
    "tests/wbin/test_wbin.py::test_annotated_programs_round_trip",
    "tests/dis/test_roundtrip.py::test_random_programs_reassemble_byte_for_byte",
    "tests/backends/test_sycl.py::test_random_structured_programs_match",
    "tests/dis/test_roundtrip.py::test_read_only_buffers_and_access_tables_reassemble_byte_for_byte",
    "tests/emulator/compiled/test_compiled_rows.py",
    "tests/backends/test_sycl.py",
    "tests/emulator/compiled/",
    "tests/backends/test_toolchains.py::test_random_structured_programs_compile",
)


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Under xdist the long tests of LONG_FIRST are handed out first."""
    # the order that counts is the xdist workers' collection (they run with numprocesses reset to None)
    if not hasattr(config, "workerinput"):
        return

    def rank(item) -> int:  # type: ignore[no-untyped-def]
        return next((i for i, p in enumerate(LONG_FIRST) if item.nodeid.startswith(p)), len(LONG_FIRST))

    items.sort(key=rank)  # stable: the file order within each rank


def pytest_unconfigure(config):  # type: ignore[no-untyped-def]
    """The run's cache folder goes with the process that made it (the last to finish)."""
    if os.environ.get("WAVEGPU_TEST_CACHE_OWNER") == str(os.getpid()):
        shutil.rmtree(os.environ["WAVEGPU_CACHE_DIR"], ignore_errors=True)
