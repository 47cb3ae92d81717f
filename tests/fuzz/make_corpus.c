/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * make_corpus.c: writes the fuzz seed corpus (valid snapshots of every family).
 *
 * Seeds are small, valid snapshots of different shapes and states, so the
 * fuzzer starts from inputs that pass the frame and reach the parameter and
 * payload checks: an empty filter, a partly filled one, one whose circular
 * buffer has wrapped several times, a slice length that is not a multiple of
 * 64 (tail bits), the smallest and the widest shapes, a cleared filter, and
 * the blocked variant (family 2) with both block sizes, and time-limited
 * filters (family 3): fresh, past several shifts, grown by a burst, reset
 * after an idle gap, with clamped timestamps; and stable filters (family
 * 4): each variant, both draws, an empty one, refusals and clamps, and
 * shapes whose decrements use the scratch set (P > 16, P > m / 2); and
 * timing filters (family 5): fresh, the TBF (B = 1), blocks with T_+
 * wrapped, w not a multiple of B, each stream model; and spectral filters
 * (family 6): MS empty and saturated with removals, MI with straddling
 * counters, RM with its marker, without it, and with traps, and compact
 * counters of each code (gamma, delta, steps) in the string-array index.
 * Everything is deterministic (fixed seeds and keys), so running it again
 * must reproduce the committed files byte for byte: the fuzz_corpus_current
 * test checks exactly that, which also pins the snapshot encoding (a change
 * in it would make old snapshots load into filters that miss their keys).
 *
 * Usage: ebb_make_corpus DIR   (DIR must exist; files are overwritten)
 * Regenerate the committed corpus with: ebb_make_corpus tests/fuzz/corpus
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebb/ebb.h"
#include "ebb/spectral.h"
#include "ebb/stable.h"
#include "ebb/timing.h"

typedef struct corpus_seed {
    const char *name;
    uint32_t k;
    uint32_t l;
    uint64_t slice_bits;   /* plain slices: m, as in the paper            */
    uint32_t block_bits;   /* 0: plain slices; else B of the blocked ones */
    uint32_t block_hashes; /* blocked: b                                  */
    uint64_t window;       /* blocked: the window the shape is sized for  */
    uint64_t adds;
    uint64_t hash_seed;
    bool clear_after_adds;
    uint32_t layout; /* EBB_APBF_LAYOUT_RING, or _SLICED: family 7 */
} corpus_seed;

static const corpus_seed corpus_seeds[] = {
    /* The worked example of docs/format.md: g = 22, 120 bytes. */
    {"k2-l1-m64-empty", 2, 1, 64, 0, 0, 0, 0, 1, false, 0},
    {"k2-l1-m64-5adds", 2, 1, 64, 0, 0, 0, 5, 2, false, 0},
    /* g = 34: 50 adds is one shift and a partial generation. */
    {"k4-l3-m200-50adds", 4, 3, 200, 0, 0, 0, 50, 3, false, 0},
    /* g = 23: 500 adds is 21 shifts, the buffer of 5 wraps four times;
     * m = 100 leaves 28 tail bits in each slice's last word. */
    {"k3-l2-m100-500adds", 3, 2, 100, 0, 0, 0, 500, 4, false, 0},
    /* The smallest shape: g = 1, every add shifts. */
    {"k1-l1-m2-3adds", 1, 1, 2, 0, 0, 0, 3, 5, false, 0},
    /* g = 22, 12 slices of 4 words. */
    {"k8-l4-m256-1000adds", 8, 4, 256, 0, 0, 0, 1000, 6, false, 0},
    /* The widest k: g = 1, 65 slices of 2 words, about 1.1 KB. */
    {"k64-l1-m128-70adds", 64, 1, 128, 0, 0, 0, 70, 7, false, 0},
    /* Counters back at zero after clear, bits cleared. */
    {"k5-l7-m96-cleared", 5, 7, 96, 0, 0, 0, 40, 8, true, 0},
    /* Blocked slices (family 2): word blocks, then cache-line blocks. */
    {"blocked-k3-l2-B64-b2-100adds", 3, 2, 0, 64, 2, 40, 100, 9, false, 0},
    {"blocked-k2-l3-B512-b8-30adds", 2, 3, 0, 512, 8, 30, 30, 10, false, 0},
    {"blocked-k4-l2-B64-b4-empty", 4, 2, 0, 64, 4, 50, 0, 11, false, 0},
    /* The bit-sliced layout (family 7), one seed per cell width: W = 16
     * empty; W = 32 with g = 17 and 400 adds, the clearing cursor mid-way;
     * W = 64 and W = 128 after many shifts; counters back at zero. */
    {"sliced-k3-l4-m64-empty", 3, 4, 64, 0, 0, 0, 0, 12, false,
     EBB_APBF_LAYOUT_SLICED},
    {"sliced-k8-l8-m200-400adds", 8, 8, 200, 0, 0, 0, 400, 13, false,
     EBB_APBF_LAYOUT_SLICED},
    {"sliced-k20-l43-m128-300adds", 20, 43, 128, 0, 0, 0, 300, 14, false,
     EBB_APBF_LAYOUT_SLICED},
    {"sliced-k12-l88-m100-250adds", 12, 88, 100, 0, 0, 0, 250, 15, false,
     EBB_APBF_LAYOUT_SLICED},
    {"sliced-k5-l7-m96-cleared", 5, 7, 96, 0, 0, 0, 40, 16, true,
     EBB_APBF_LAYOUT_SLICED},
};

static ebb_status seed_params(const corpus_seed *seed, ebb_apbf_params *out)
{
    if (seed->block_bits == 0) {
        ebb_status st = ebb_apbf_params_from_klm(seed->k, seed->l,
                                                 seed->slice_bits, out);
        out->layout = seed->layout;
        return st;
    }
    return ebb_apbf_params_from_kl_blocked(seed->k, seed->l, seed->window,
                                           seed->block_bits,
                                           seed->block_hashes, out);
}

static bool build_filter(const corpus_seed *seed, ebb_apbf **out)
{
    ebb_apbf_params params;
    if (seed_params(seed, &params) != EBB_OK ||
        ebb_apbf_create(&params, seed->hash_seed, out) != EBB_OK) {
        return false;
    }
    for (uint64_t i = 0; i < seed->adds; i++) {
        char key[32];
        int len = snprintf(key, sizeof key, "key-%" PRIu64, i);
        ebb_apbf_add(*out, key, (size_t)len);
    }
    if (seed->clear_after_adds) {
        ebb_apbf_clear(*out);
    }
    return true;
}

static bool write_bytes(const char *path, const void *bytes, size_t size)
{
    FILE *file = fopen(path, "wb");
    if (file == NULL) {
        return false;
    }
    bool written = fwrite(bytes, 1, size, file) == size;
    return fclose(file) == 0 && written;
}

/* Writes the snapshot in bytes (NULL when it could not be made) as DIR/NAME
 * and frees it. */
static bool write_snapshot(const char *dir, const char *name,
                           unsigned char *bytes, size_t size)
{
    char path[4096];
    bool ok = bytes != NULL &&
              snprintf(path, sizeof path, "%s/%s", dir, name) <
                  (int)sizeof path &&
              write_bytes(path, bytes, size);
    if (!ok) {
        fprintf(stderr, "make_corpus: cannot write %s into %s\n", name, dir);
    }
    free(bytes);
    return ok;
}

static bool write_seed(const char *dir, const corpus_seed *seed)
{
    ebb_apbf *filter = NULL;
    if (!build_filter(seed, &filter)) {
        fprintf(stderr, "make_corpus: cannot build %s\n", seed->name);
        return false;
    }
    size_t size = ebb_apbf_snapshot_size(filter);
    unsigned char *bytes = malloc(size);
    if (bytes != NULL && ebb_apbf_save(filter, bytes, size, NULL) != EBB_OK) {
        free(bytes);
        bytes = NULL;
    }
    ebb_apbf_destroy(filter);
    return write_snapshot(dir, seed->name, bytes, size);
}

/* A time-limited filter seed: span 1 s at fp 0.1 ((k, l) = (6, 13)) sized
 * for `capacity` items per span, fed `adds` keys `step_ns` apart. */
typedef struct tlbf_seed {
    const char *name;
    uint64_t capacity;
    uint64_t adds;
    int64_t step_ns;
    int64_t gap_after; /* add an idle gap of 3 s after this many adds    */
    bool step_back;    /* every 7th timestamp is 5 ms in the past         */
    ebb_tlbf_policy policy;
    size_t max_memory;
} tlbf_seed;

static const tlbf_seed tlbf_seeds[] = {
    {"tlbf-fresh", 13, 0, 0, -1, false, EBB_TLBF_REFUSE, 1u << 16},
    {"tlbf-shifted", 13, 60, 20000000, -1, false, EBB_TLBF_REFUSE, 1u << 16},
    {"tlbf-burst", 13, 120, 1000000, -1, false, EBB_TLBF_EVICT, 1u << 13},
    {"tlbf-reset", 13, 40, 30000000, 25, false, EBB_TLBF_REFUSE, 1u << 16},
    {"tlbf-clamped", 26, 50, 10000000, -1, true, EBB_TLBF_EVICT, 1u << 16},
};

static bool build_tlbf(const tlbf_seed *seed, ebb_tlbf **out)
{
    ebb_tlbf_config config = {
        .span_ns = 1000000000,
        .fp = 0.1,
        .initial_capacity = seed->capacity,
        .max_memory = seed->max_memory,
        .policy = seed->policy,
    };
    if (ebb_tlbf_create(&config, 11, out) != EBB_OK) {
        return false;
    }
    int64_t now = 0;
    for (uint64_t i = 0; i < seed->adds; i++) {
        char key[32];
        int len = snprintf(key, sizeof key, "t-%" PRIu64, i);
        now += seed->step_ns;
        if ((int64_t)i == seed->gap_after) {
            now += 3000000000;
        }
        int64_t at = seed->step_back && i % 7 == 6 ? now - 5000000 : now;
        ebb_status st = ebb_tlbf_add(*out, key, (size_t)len, at);
        if (st != EBB_OK && st != EBB_ELIMIT) {
            ebb_tlbf_destroy(*out);
            return false;
        }
    }
    return true;
}

static bool write_tlbf_seed(const char *dir, const tlbf_seed *seed)
{
    ebb_tlbf *filter = NULL;
    if (!build_tlbf(seed, &filter)) {
        fprintf(stderr, "make_corpus: cannot build %s\n", seed->name);
        return false;
    }
    size_t size = ebb_tlbf_snapshot_size(filter);
    unsigned char *bytes = malloc(size);
    if (bytes != NULL && ebb_tlbf_save(filter, bytes, size, NULL) != EBB_OK) {
        free(bytes);
        bytes = NULL;
    }
    ebb_tlbf_destroy(filter);
    return write_snapshot(dir, seed->name, bytes, size);
}

/* A stable filter seed: m cells of d bits, K, P, fed `adds` keys with
 * importances cycling over -1 .. 11 in a range [0, 10] (so some are
 * clamped or, under REFUSE, refused). */
typedef struct stable_seed {
    const char *name;
    uint64_t cells;
    uint32_t cell_bits, k, p;
    ebb_stable_variant variant;
    ebb_stable_draw draw;
    ebb_stable_range_policy policy;
    uint64_t adds;
} stable_seed;

static const stable_seed stable_seeds[] = {
    {"stable-plain-empty", 64, 3, 3, 4, EBB_STABLE_PLAIN,
     EBB_STABLE_DRAW_CONSECUTIVE, EBB_STABLE_CLAMP, 0},
    {"stable-plain-consecutive", 200, 3, 5, 10, EBB_STABLE_PLAIN,
     EBB_STABLE_DRAW_CONSECUTIVE, EBB_STABLE_CLAMP, 300},
    {"stable-2c-independent", 150, 2, 3, 6, EBB_STABLE_IBF_2C,
     EBB_STABLE_DRAW_INDEPENDENT, EBB_STABLE_CLAMP, 200},
    {"stable-mc-refuse", 100, 5, 4, 20, EBB_STABLE_IBF_MC,
     EBB_STABLE_DRAW_INDEPENDENT, EBB_STABLE_REFUSE, 150},
    {"stable-h-d8", 48, 8, 2, 3, EBB_STABLE_IBF_H,
     EBB_STABLE_DRAW_CONSECUTIVE, EBB_STABLE_CLAMP, 100},
    {"stable-all-but-d1", 70, 1, 2, 50, EBB_STABLE_PLAIN,
     EBB_STABLE_DRAW_INDEPENDENT, EBB_STABLE_CLAMP, 40},
};

static bool build_stable(const stable_seed *seed, ebb_stable **out)
{
    ebb_stable_params params;
    if (ebb_stable_params_init(seed->cells, seed->cell_bits, seed->k, seed->p,
                               &params) != EBB_OK) {
        return false;
    }
    params.variant = seed->variant;
    params.draw = seed->draw;
    params.importance.low = 0.0;
    params.importance.high = 10.0;
    params.importance.threshold = 5.0;
    params.importance.policy = seed->policy;
    if (ebb_stable_create(&params, 12, out) != EBB_OK) {
        return false;
    }
    for (uint64_t i = 0; i < seed->adds; i++) {
        char key[32];
        int len = snprintf(key, sizeof key, "s-%" PRIu64, i % 97);
        bool seen;
        ebb_status st = ebb_stable_test_and_add(
            *out, key, (size_t)len, (double)(i % 13) - 1.0, &seen);
        if (st != EBB_OK && st != EBB_EINVAL) {
            ebb_stable_destroy(*out);
            return false;
        }
    }
    return true;
}

static bool write_stable_seed(const char *dir, const stable_seed *seed)
{
    ebb_stable *filter = NULL;
    if (!build_stable(seed, &filter)) {
        fprintf(stderr, "make_corpus: cannot build %s\n", seed->name);
        return false;
    }
    size_t size = ebb_stable_snapshot_size(filter);
    unsigned char *bytes = malloc(size);
    if (bytes != NULL &&
        ebb_stable_save(filter, bytes, size, NULL) != EBB_OK) {
        free(bytes);
        bytes = NULL;
    }
    ebb_stable_destroy(filter);
    return write_snapshot(dir, seed->name, bytes, size);
}

/* A timing filter seed: the explicit shape, a model, `adds` keys. */
typedef struct timing_seed {
    const char *name;
    uint64_t window, timers;
    uint32_t k, timer_bits;
    uint64_t block, padding;
    ebb_timing_model_kind kind;
    uint64_t adds;
} timing_seed;

static const timing_seed timing_seeds[] = {
    {"timing-fresh", 6, 6, 2, 3, 3, 0, EBB_TIMING_MODEL_DISTINCT, 0},
    {"timing-tbf-wrapped", 20, 64, 3, 5, 1, 4, EBB_TIMING_MODEL_UNIFORM, 150},
    {"timing-block-wrapped", 30, 100, 4, 4, 4, 2, EBB_TIMING_MODEL_ZIPF, 400},
    {"timing-uneven-table", 50, 333, 3, 7, 7, 9, EBB_TIMING_MODEL_TABLE, 77},
};

static bool build_timing(const timing_seed *seed, ebb_timing **out)
{
    ebb_timing_params params;
    ebb_timing_model model = {.kind = seed->kind, .universe = 1000};
    if (seed->kind == EBB_TIMING_MODEL_TABLE) {
        model.default_prior = 0.001;
        model.points = 3;
        model.j[0] = 1, model.j[1] = 10, model.j[2] = 100;
        model.d[0] = 1.0, model.d[1] = 9.5, model.d[2] = 80.0;
    }
    if (ebb_timing_params_init(seed->window, seed->timers, seed->k,
                               seed->timer_bits, seed->block, seed->padding,
                               &params) != EBB_OK ||
        ebb_timing_create(&params, &model, 13, out) != EBB_OK) {
        return false;
    }
    for (uint64_t i = 0; i < seed->adds; i++) {
        char key[32];
        int len = snprintf(key, sizeof key, "t-%" PRIu64, i % 61);
        ebb_timing_add(*out, key, (size_t)len);
    }
    return true;
}

static bool write_timing_seed(const char *dir, const timing_seed *seed)
{
    ebb_timing *filter = NULL;
    if (!build_timing(seed, &filter)) {
        fprintf(stderr, "make_corpus: cannot build %s\n", seed->name);
        return false;
    }
    size_t size = ebb_timing_snapshot_size(filter);
    unsigned char *bytes = malloc(size);
    if (bytes != NULL &&
        ebb_timing_save(filter, bytes, size, NULL) != EBB_OK) {
        free(bytes);
        bytes = NULL;
    }
    ebb_timing_destroy(filter);
    return write_snapshot(dir, seed->name, bytes, size);
}

/* A spectral filter seed: the shape, `adds` adds of counts 1..4 over 40
 * keys, then `removes` removals of 1 (refusals included). */
typedef struct spectral_seed {
    const char *name;
    uint64_t counters;
    uint32_t bits, k;
    ebb_spectral_method method;
    ebb_spectral_marker marker; /* RM; params_init's size unless NONE */
    uint64_t traps;
    uint32_t adds, removes;
    ebb_spectral_storage storage; /* 0: FIXED */
} spectral_seed;

static const spectral_seed spectral_seeds[] = {
#define MS_NO_MARKER EBB_SPECTRAL_MARKER_EXACT /* 0: MS and MI */
#define FIXED EBB_SPECTRAL_FIXED
    {"spectral-ms-empty", 64, 8, 3, EBB_SPECTRAL_MS, MS_NO_MARKER, 0, 0, 0,
     FIXED},
    {"spectral-ms-saturated", 50, 3, 4, EBB_SPECTRAL_MS, MS_NO_MARKER, 0, 200,
     30, FIXED},
    {"spectral-mi-straddling", 70, 7, 3, EBB_SPECTRAL_MI, MS_NO_MARKER, 0, 300,
     0, FIXED},
    {"spectral-rm-marker", 90, 6, 3, EBB_SPECTRAL_RM,
     EBB_SPECTRAL_MARKER_BLOOM, 0, 200, 20, FIXED},
    {"spectral-rm-plain", 90, 6, 3, EBB_SPECTRAL_RM, EBB_SPECTRAL_MARKER_NONE,
     0, 200, 20, FIXED},
    {"spectral-rm-traps", 120, 8, 3, EBB_SPECTRAL_RM,
     EBB_SPECTRAL_MARKER_BLOOM, 16, 300, 20, FIXED},
    {"spectral-rm-exact", 200, 8, 3, EBB_SPECTRAL_RM,
     EBB_SPECTRAL_MARKER_EXACT, 0, 300, 20, FIXED},
    {"spectral-rm-exact-full", 90, 6, 3, EBB_SPECTRAL_RM,
     EBB_SPECTRAL_MARKER_EXACT, 8, 200, 20, FIXED},
    /* Compact counters (the string-array index): its offsets, codes and
     * slack for the fuzzer to break; enough adds for pushes into slack. */
    {"spectral-ms-gamma", 600, 8, 3, EBB_SPECTRAL_MS, MS_NO_MARKER, 0, 3000,
     200, EBB_SPECTRAL_COMPACT_GAMMA},
    {"spectral-mi-delta", 600, 8, 3, EBB_SPECTRAL_MI, MS_NO_MARKER, 0, 3000,
     0, EBB_SPECTRAL_COMPACT_DELTA},
    {"spectral-ms-steps", 1100, 8, 3, EBB_SPECTRAL_MS, MS_NO_MARKER, 0, 800,
     100, EBB_SPECTRAL_COMPACT_STEPS},
#undef FIXED
};

static bool build_spectral(const spectral_seed *seed, ebb_spectral **out)
{
    ebb_spectral_params params;
    if (ebb_spectral_params_init(seed->counters, seed->bits, seed->k,
                                 seed->method, &params) != EBB_OK)
        return false;
    if (seed->method == EBB_SPECTRAL_RM) {
        params.marker = seed->marker;
        /* The Bloom marker as the paper's, m_p bits; the exact one at
         * params_init's size (full in spectral-rm-exact-full). */
        params.marker_size =
            seed->marker == EBB_SPECTRAL_MARKER_NONE    ? 0
            : seed->marker == EBB_SPECTRAL_MARKER_BLOOM ? params.counters
                                                        : params.marker_size;
    }
    params.trap_slots = seed->traps;
    params.storage = seed->storage;
    params.seed = 17;
    if (ebb_spectral_create(&params, out) != EBB_OK)
        return false;
    char key[16];
    for (uint32_t i = 0; i < seed->adds; i++) {
        int len = snprintf(key, sizeof key, "k%u", i % 40);
        ebb_spectral_add(*out, key, (size_t)len, 1 + i % 4);
    }
    for (uint32_t i = 0; i < seed->removes; i++) {
        int len = snprintf(key, sizeof key, "k%u", (i * 7) % 40);
        ebb_spectral_remove(*out, key, (size_t)len, 1);
    }
    return true;
}

static bool write_spectral_seed(const char *dir, const spectral_seed *seed)
{
    ebb_spectral *filter = NULL;
    if (!build_spectral(seed, &filter)) {
        fprintf(stderr, "make_corpus: cannot build %s\n", seed->name);
        return false;
    }
    size_t size = ebb_spectral_snapshot_size(filter);
    unsigned char *bytes = malloc(size);
    if (bytes != NULL &&
        ebb_spectral_save(filter, bytes, size, NULL) != EBB_OK) {
        free(bytes);
        bytes = NULL;
    }
    ebb_spectral_destroy(filter);
    return write_snapshot(dir, seed->name, bytes, size);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof corpus_seeds / sizeof corpus_seeds[0]; i++) {
        if (!write_seed(argv[1], &corpus_seeds[i])) {
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof tlbf_seeds / sizeof tlbf_seeds[0]; i++) {
        if (!write_tlbf_seed(argv[1], &tlbf_seeds[i])) {
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof stable_seeds / sizeof stable_seeds[0]; i++) {
        if (!write_stable_seed(argv[1], &stable_seeds[i])) {
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof timing_seeds / sizeof timing_seeds[0]; i++) {
        if (!write_timing_seed(argv[1], &timing_seeds[i])) {
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof spectral_seeds / sizeof spectral_seeds[0];
         i++) {
        if (!write_spectral_seed(argv[1], &spectral_seeds[i])) {
            return 1;
        }
    }
    return 0;
}
