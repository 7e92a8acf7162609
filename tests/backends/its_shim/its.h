// A host model of independent thread scheduling for the C dialects' wave primitives (CUDA's
// __shfl_sync/__ballot_sync/__any_sync/__all_sync, HIP's __shfl/__ballot, Metal's simd_*):
// every lane of a wave is a host thread, and a wave primitive is a rendezvous that completes
// only when every lane its mask names (HIP, Metal: every lane that entered the helper, their
// exec set) has reached the same call (same source line, kind and mask). A lane that leaves
// first, or lanes that wait at calls which can never all meet, make the run fail with the
// place named (exit status 3): on a GPU that call would be undefined. In kernel mode
// (ITS_EXIT_ARRIVES) a lane that returned from the kernel counts as arrived, contributing 0,
// as the `.sync` instructions ignore exited threads. Written for wavegpu's tests.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>

namespace its {
enum State { RUN, SYNC, BAR, DONE };
enum Kind { SHFL, BALLOT };
struct Lane {
    State st = RUN;
    int line = 0, kind = 0;
    uint64_t mask = 0, val = 0, result = 0;
    unsigned src = 0;
};
inline std::mutex mu;
inline std::condition_variable cv;
inline std::vector<Lane> lanes;
inline unsigned W = 32;
inline bool exit_arrives = false;
inline thread_local unsigned me = 0;        // the thread's linear index in the workgroup
inline thread_local uint64_t exec_mask = 0;  // HIP/Metal: the lanes that entered the helper
constexpr uint64_t POISON = 0xDEADBEEFu;

[[noreturn]] inline void fail(const char* what, unsigned lane, int line) {
    fprintf(stderr, "ITS: %s (lane %u, line %d)\n", what, lane, line);
    fflush(stderr);
    _exit(3);
}
inline unsigned lane() { return me % W; }
inline uint64_t exec() { return exec_mask; }

// Under mu: complete every rendezvous whose lanes have all arrived, open the barrier when every
// live thread waits at it, and fail when nothing can move any more.
inline void progress() {
    for (;;) {
        bool moved = false;
        for (unsigned i = 0; i < lanes.size(); i++) {
            Lane& L = lanes[i];
            if (L.st != SYNC) continue;
            unsigned base = i - i % W;
            bool ready = true;
            for (unsigned j = 0; j < W && ready; j++) {
                if (!((L.mask >> j) & 1u)) continue;
                if (base + j >= lanes.size()) fail("the mask names a lane that does not exist", i, L.line);
                Lane& o = lanes[base + j];
                if (o.st == DONE) {
                    if (!exit_arrives) fail("a lane of the mask left without reaching the call", base + j, L.line);
                    continue;
                }
                ready = o.st == SYNC && o.line == L.line && o.kind == L.kind && o.mask == L.mask;
            }
            if (!ready) continue;
            uint64_t bal = 0;
            for (unsigned j = 0; j < W; j++)
                if (((L.mask >> j) & 1u) && lanes[base + j].st == SYNC && lanes[base + j].val)
                    bal |= 1ull << j;
            for (unsigned j = 0; j < W; j++) {
                if (!((L.mask >> j) & 1u) || lanes[base + j].st != SYNC) continue;
                Lane& o = lanes[base + j];
                if (o.kind == BALLOT) {
                    o.result = bal;
                } else {
                    unsigned s = o.src % W;
                    bool in = ((L.mask >> s) & 1u) && lanes[base + s].st == SYNC;
                    o.result = in ? lanes[base + s].val : POISON;
                }
            }
            for (unsigned j = 0; j < W; j++)
                if (((L.mask >> j) & 1u) && lanes[base + j].st == SYNC) lanes[base + j].st = RUN;
            moved = true;
        }
        bool bar = false, running = false, waiting = false;
        for (auto& l : lanes) {
            if (l.st == RUN) running = true;
            if (l.st == SYNC) waiting = true;
            if (l.st == BAR) bar = true;
        }
        if (bar && !running && !waiting) {
            for (auto& l : lanes)
                if (l.st == BAR) l.st = RUN;
            moved = true;
        }
        if (moved) continue;
        if (!running && (waiting || bar)) {
            for (unsigned i = 0; i < lanes.size(); i++)
                if (lanes[i].st == SYNC) fprintf(stderr, "ITS: lane %u waits at line %d, mask %llx\n", i, lanes[i].line, (unsigned long long)lanes[i].mask);
            fail("deadlock: lanes wait at wave primitives that can never all meet", 0, 0);
        }
        return;
    }
}

inline uint64_t sync(int kind, int line, uint64_t mask, uint64_t val, unsigned src) {
    std::unique_lock<std::mutex> g(mu);
    if (!((mask >> lane()) & 1u)) fail("the calling lane is not in the mask", me, line);
    Lane& L = lanes[me];
    L.st = SYNC; L.line = line; L.kind = kind; L.mask = mask; L.val = val; L.src = src;
    progress();
    cv.notify_all();
    cv.wait(g, [&] { return L.st != SYNC; });
    return L.result;
}
inline void barrier(int line) {
    std::unique_lock<std::mutex> g(mu);
    Lane& L = lanes[me];
    L.st = BAR; L.line = line;
    progress();
    cv.notify_all();
    cv.wait(g, [&] { return L.st != BAR; });
}
inline void done() {
    std::unique_lock<std::mutex> g(mu);
    lanes[me].st = DONE;
    progress();
    cv.notify_all();
}
template <class F> void run(unsigned threads, F body) {
    lanes.assign(threads, Lane());
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; t++)
        ts.emplace_back([t, &body] { me = t; body(t); done(); });
    for (auto& t : ts) t.join();
}
template <class T> T shfl(int line, uint64_t mask, T x, unsigned src) {
    return (T)sync(SHFL, line, mask, (uint64_t)x, src);
}
inline uint64_t ballot(int line, uint64_t mask, bool p) { return sync(BALLOT, line, mask, p ? 1 : 0, 0); }
}  // namespace its

// CUDA
#define __shfl_sync(m, x, i) its::shfl(__LINE__, (m), (x), (unsigned)(i))
#define __shfl_xor_sync(m, x, k) its::shfl(__LINE__, (m), (x), its::lane() ^ (unsigned)(k))
#define __ballot_sync(m, p) ((unsigned)its::ballot(__LINE__, (m), (p)))
#define __any_sync(m, p) (its::ballot(__LINE__, (m), (p)) != 0)
#define __all_sync(m, p) (its::ballot(__LINE__, (m), !(p)) == 0)
#define __syncthreads() its::barrier(__LINE__)
// HIP (the exec set: the lanes that entered)
#define __shfl(x, i) its::shfl(__LINE__, its::exec(), (x), (unsigned)(i))
#define __shfl_xor(x, k) its::shfl(__LINE__, its::exec(), (x), its::lane() ^ (unsigned)(k))
#define __ballot(p) its::ballot(__LINE__, its::exec(), (p))
#define __lane_id() its::lane()
// Metal
struct simd_vote { typedef unsigned long long vote_t; };
#define simd_shuffle(x, i) its::shfl(__LINE__, its::exec(), (x), (unsigned)(i))
#define simd_shuffle_xor(x, k) its::shfl(__LINE__, its::exec(), (x), its::lane() ^ (unsigned)(k))
#define simd_ballot(p) its::ballot(__LINE__, its::exec(), (p))
#define simd_active_threads_mask() its::exec()
