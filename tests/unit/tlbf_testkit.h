/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tlbf_testkit.h: simulated-time streams for the Time-limited Bloom Filter
 * tests, and an oracle that checks the no-false-negative guarantee on them.
 *
 * A scenario is a stream of insertions whose rate changes with time: a
 * constant rate, a burst, a drop, an idle gap, a daily-like sine. Arrivals
 * are a Poisson process (exponential gaps at the current rate) from a fixed
 * seed, so a run is exactly reproducible. Optionally some timestamps step
 * backwards (a clock that is corrected), which the filter must clamp.
 *
 * scenario_run feeds a filter and checks, with the filter's own semantics
 * (a timestamp earlier than the latest one is recorded at the latest):
 *   - every key at exactly q - t == T, the last moment it must be present,
 *     in the last state before an add whose time passes t + T (the state
 *     with the most shifts behind it);
 *   - the key just added, at once;
 *   - at regular rounds, every remembered key with q - t <= T (or a
 *     rotating sample when round_checks is set);
 *   - the memory after every add, against max_memory.
 * Refused adds (REFUSE policy) are not remembered; with the EVICT policy a
 * key is only required while no eviction happened since it was added.
 *
 * Include cmocka (with its prerequisites) before this header.
 */
#ifndef EBB_TESTS_TLBF_TESTKIT_H
#define EBB_TESTS_TLBF_TESTKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ebb/tlbf.h"
#include "support.h"

typedef enum scenario_shape {
    SHAPE_CONSTANT, /* the base rate throughout                            */
    SHAPE_BURST,    /* factor x base during [change_start, change_end)     */
    SHAPE_DROP,     /* factor x base from change_start on                  */
    SHAPE_IDLE,     /* nothing during [change_start, change_end)           */
    SHAPE_SINE      /* base x (1 + factor sin(2 pi t / period))            */
} scenario_shape;

typedef struct scenario {
    const char *name;
    scenario_shape shape;
    int64_t span;             /* T of the filter, ns                        */
    double base_rate;         /* insertions per span                        */
    double factor;
    int64_t change_start;     /* relative to start                          */
    int64_t change_end;
    int64_t period;           /* SHAPE_SINE                                 */
    int64_t start;            /* absolute time of the stream's beginning    */
    int64_t duration;         /* arrivals at start + [0, duration)          */
    /* 0: timestamps are the true times. n: on average every n-th arrival
     * carries a timestamp 1 .. backstep_max ns earlier than its true time. */
    uint32_t backstep_every;
    int64_t backstep_max;
    /* 0: nanosecond timestamps. Otherwise a coarse clock: every timestamp is
     * rounded down to a multiple of tick since start, so many arrivals share
     * one (a clock in milliseconds or seconds, or buffered batches). */
    int64_t tick;
    uint64_t seed;            /* arrivals and backsteps                     */
    uint32_t key_stream;      /* support_key_make stream of the keys        */
} scenario;

/* The arrivals of a scenario, one at a time, one ahead. */
typedef struct arrivals {
    const scenario *s;
    uint64_t rng;
    int64_t next_true;        /* true time of the next arrival              */
    int64_t next_given;       /* its timestamp                              */
    bool done;
} arrivals;

void arrivals_begin(arrivals *a, const scenario *s);
/* The next arrival's true time (non-decreasing) and its given timestamp;
 * false when the stream has ended. */
bool arrivals_next(arrivals *a, int64_t *true_time, int64_t *given);
/* The true time of the arrival after the one last returned, or INT64_MAX
 * when there is none. */
int64_t arrivals_peek(const arrivals *a);

/* Insertions per span at time t relative to the stream's start. */
double scenario_rate(const scenario *s, int64_t t);

typedef struct oracle_plan {
    int64_t round_every;      /* time between full rounds (0: none)         */
    uint32_t round_checks;    /* most keys per round; 0: every key          */
    bool allow_refusals;      /* ELIMIT is expected (REFUSE policy)         */
    /* Called after every add with its status (may be NULL). */
    void (*after_add)(ebb_tlbf *filter, ebb_status status, int64_t given,
                      void *context);
    void *context;
} oracle_plan;

typedef struct scenario_report {
    uint64_t attempted, added, refused;
    uint64_t backsteps;           /* timestamps earlier than the latest     */
    uint64_t deadline_checks;     /* keys queried at exactly t + T          */
    uint64_t round_checks, rounds;
    uint64_t evictions;           /* adds after which evicted_slices grew   */
    size_t peak_memory;           /* ebb_tlbf_memory after any add          */
    uint32_t peak_slices;         /* at the rounds                          */
    int64_t latest;               /* latest effective time                  */
    uint64_t next_key;            /* keys used: 0 .. next_key - 1           */
} scenario_report;

/* Runs s into filter (created by the caller) and checks it (see above).
 * Fails the current test on a false negative. */
void scenario_run(ebb_tlbf *filter, const scenario *s, const oracle_plan *p,
                  scenario_report *out);

/* A uniform double in [0, 1) from splitmix64. */
double scenario_uniform(uint64_t *state);

/* ------------------------------------------------------------------------ */
/* Snapshots (family 3): layout and helpers                                 */
/* ------------------------------------------------------------------------ */

/* Frame and parameter-block offsets (src/tlbf/snapshot.c, docs/format.md). */
enum {
    SNAP_OFF_MAGIC = 0,
    SNAP_OFF_VERSION = 4,
    SNAP_OFF_FAMILY = 6,
    SNAP_OFF_FLAGS = 8,
    SNAP_OFF_PARAM_LEN = 12,
    SNAP_OFF_TOTAL = 16,
    SNAP_OFF_SEED = 24,
    SNAP_OFF_PARAMS = 32,
    SNAP_FAMILY_TLBF = 3,
    TLBF_PARAM_LEN = 144,
    SNAP_OFF_PAYLOAD = SNAP_OFF_PARAMS + TLBF_PARAM_LEN,
    SNAP_CHECKSUM_LEN = 8
};

/* Parameter block, relative to SNAP_OFF_PARAMS. */
enum {
    TP_K = 0,
    TP_L = 4,
    TP_SPAN = 8,
    TP_MAX_MEMORY = 16,
    TP_POLICY = 24,
    TP_SLICES = 28,
    TP_INITIAL_CAPACITY = 32,
    TP_LEFT = 40,
    TP_SINCE_BASE = 48,
    TP_RATE_BASE = 56,
    TP_LATEST = 64,
    TP_RING_SLOTS = 72,
    TP_RESERVED = 76,
    TP_INSERTIONS = 80,
    TP_SHIFTS = 88,
    TP_EVICTED = 96,
    TP_REFUSED = 104,
    TP_CLAMPED = 112,
    TP_RESETS = 120,
    TP_ESTIMATE = 128,
    TP_GENERATION = 136
};

/* A slice's header in the payload, relative to the slice's start; its
 * ceil(bits / 64) words follow. */
enum {
    TS_BITS = 0,
    TS_CAPACITY = 8,
    TS_INSERTED = 16,
    TS_LAST_NS = 24,
    TS_HASH_INDEX = 32,
    TS_RESERVED = 36,
    TS_HEADER_LEN = 40
};

/* A snapshot in a malloc'd buffer (not the counting allocator: the test's
 * own memory must not look like a leak of the library), with 16 spare
 * bytes after its end. */
typedef struct tlbf_snap {
    unsigned char *bytes;
    size_t size;
} tlbf_snap;

tlbf_snap tlbf_snap_save(const ebb_tlbf *filter);
tlbf_snap tlbf_snap_copy(const tlbf_snap *s);
void tlbf_snap_free(tlbf_snap *s);
/* Loads s and fails the test unless it loads. */
ebb_tlbf *tlbf_snap_load(const tlbf_snap *s);

uint64_t tlbf_snap_get(const tlbf_snap *s, size_t offset, size_t width);
void tlbf_snap_set(tlbf_snap *s, size_t offset, size_t width, uint64_t v);
/* Rewrites the checksum so that only the field a test changed is wrong. */
void tlbf_snap_forge_checksum(tlbf_snap *s);
/* Offset of slice i's header (0 newest). */
size_t tlbf_snap_slice(const tlbf_snap *s, uint32_t i);

/* Fails the test (naming what) unless a and b are byte-identical. */
void tlbf_snap_expect_equal(const tlbf_snap *a, const tlbf_snap *b,
                            const char *what);

/* Sum of the slices' bits m_i, read from a snapshot. */
uint64_t tlbf_snap_total_bits(const tlbf_snap *s);

/* ------------------------------------------------------------------------ */
/* Filters                                                                  */
/* ------------------------------------------------------------------------ */

/* A config with the chooser's shape (every other field 0). */
ebb_tlbf_config tlbf_config_of(double fp, int64_t span, uint64_t initial,
                               size_t max_memory, ebb_tlbf_policy policy);
/* Creates a filter or fails the test, naming the config. */
ebb_tlbf *tlbf_create_or_fail(const ebb_tlbf_config *c, uint64_t seed);
ebb_tlbf_stats tlbf_stats_of(const ebb_tlbf *f);

#endif /* EBB_TESTS_TLBF_TESTKIT_H */
