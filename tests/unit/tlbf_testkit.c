/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tlbf_testkit.c: simulated-time streams and the no-false-negative oracle
 * for the Time-limited Bloom Filter tests. See tlbf_testkit.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "tlbf_testkit.h"

static const double TWO_PI = 6.283185307179586477;

/* ------------------------------------------------------------------------ */
/* Arrivals                                                                 */
/* ------------------------------------------------------------------------ */

double scenario_uniform(uint64_t *state) {
    return (double)(support_splitmix64(state) >> 11) * 0x1.0p-53;
}

double scenario_rate(const scenario *s, int64_t t) {
    switch (s->shape) {
    case SHAPE_BURST:
        return t >= s->change_start && t < s->change_end
                   ? s->base_rate * s->factor
                   : s->base_rate;
    case SHAPE_DROP:
        return t >= s->change_start ? s->base_rate * s->factor : s->base_rate;
    case SHAPE_SINE:
        return s->base_rate *
               (1.0 + s->factor * sin(TWO_PI * (double)t / (double)s->period));
    case SHAPE_IDLE: /* the gap is handled by skipping over it */
    case SHAPE_CONSTANT:
    default:
        return s->base_rate;
    }
}

/* Draws the arrival after true time `after` (relative) into a. */
static void draw(arrivals *a, int64_t after) {
    const scenario *s = a->s;
    double rate = scenario_rate(s, after);
    /* Exponential gap at the current rate; u in (0, 1]. */
    double u = 1.0 - scenario_uniform(&a->rng);
    double gap = -log(u) * (double)s->span / rate;
    int64_t next = after + (gap < 1.0 ? 1 : (int64_t)gap);
    if (s->shape == SHAPE_IDLE && next >= s->change_start &&
        next < s->change_end)
        next = s->change_end;
    if (next >= s->duration) {
        a->done = true;
        return;
    }
    a->next_true = s->start + next;
    a->next_given = s->tick > 0 ? s->start + next - next % s->tick
                                : a->next_true;
    if (s->backstep_every != 0 &&
        support_splitmix64(&a->rng) % s->backstep_every == 0)
        a->next_given -= 1 + (int64_t)(support_splitmix64(&a->rng) %
                                       (uint64_t)s->backstep_max);
}

void arrivals_begin(arrivals *a, const scenario *s) {
    a->s = s;
    a->rng = s->seed;
    a->done = false;
    draw(a, 0);
}

bool arrivals_next(arrivals *a, int64_t *true_time, int64_t *given) {
    if (a->done)
        return false;
    *true_time = a->next_true;
    *given = a->next_given;
    draw(a, a->next_true - a->s->start);
    return true;
}

int64_t arrivals_peek(const arrivals *a) {
    return a->done ? INT64_MAX : a->next_true;
}

/* ------------------------------------------------------------------------ */
/* Oracle: the keys that must be present, oldest first                      */
/* ------------------------------------------------------------------------ */

typedef struct oracle {
    uint64_t *index;
    int64_t *time;   /* effective time of the add                         */
    size_t head, size, capacity; /* capacity a power of two               */
    int64_t span;
    uint32_t key_stream;
} oracle;

static void oracle_init(oracle *o, int64_t span, uint32_t key_stream) {
    o->capacity = 1024;
    o->index = malloc(o->capacity * sizeof *o->index);
    o->time = malloc(o->capacity * sizeof *o->time);
    assert_non_null(o->index);
    assert_non_null(o->time);
    o->head = o->size = 0;
    o->span = span;
    o->key_stream = key_stream;
}

static void oracle_free(oracle *o) {
    free(o->index);
    free(o->time);
}

static size_t slot(const oracle *o, size_t i) {
    return (o->head + i) & (o->capacity - 1);
}

static void oracle_grow(oracle *o) {
    size_t capacity = o->capacity * 2, i;
    uint64_t *index = malloc(capacity * sizeof *index);
    int64_t *time = malloc(capacity * sizeof *time);
    assert_non_null(index);
    assert_non_null(time);
    for (i = 0; i < o->size; i++) {
        index[i] = o->index[slot(o, i)];
        time[i] = o->time[slot(o, i)];
    }
    oracle_free(o);
    o->index = index;
    o->time = time;
    o->capacity = capacity;
    o->head = 0;
}

static void oracle_push(oracle *o, uint64_t index, int64_t time) {
    if (o->size == o->capacity)
        oracle_grow(o);
    o->index[slot(o, o->size)] = index;
    o->time[slot(o, o->size)] = time;
    o->size++;
}

/* The last moment key i (0 oldest) must be reported: its time + T. */
static int64_t deadline(const oracle *o, size_t i) {
    int64_t t = o->time[slot(o, i)];
    return t > INT64_MAX - o->span ? INT64_MAX : t + o->span;
}

static void expect_present(const ebb_tlbf *f, const oracle *o, size_t i,
                           int64_t q, const char *what, const char *name) {
    uint64_t index = o->index[slot(o, i)];
    support_key key = support_key_make(o->key_stream, index);
    CHECK(ebb_tlbf_contains(f, key.bytes, sizeof key.bytes, q),
          "%s: false negative (%s): key %llu added at %lld, queried at %lld "
          "(q - t = %lld, T = %lld)",
          name, what, (unsigned long long)index,
          (long long)o->time[slot(o, i)], (long long)q,
          (long long)(q - o->time[slot(o, i)]), (long long)o->span);
}

/* Queries every key whose deadline is before `before` at its deadline,
 * and forgets it. */
static void check_deadlines(const ebb_tlbf *f, oracle *o, int64_t before,
                            const char *name, scenario_report *r) {
    while (o->size > 0 && deadline(o, 0) < before) {
        expect_present(f, o, 0, deadline(o, 0), "at t + T", name);
        r->deadline_checks++;
        o->head = slot(o, 1);
        o->size--;
    }
}

/* A round at q: every remembered key (deadline >= q by construction), or
 * a rotating sample of at most `most`. */
static void check_round(const ebb_tlbf *f, const oracle *o, int64_t q,
                        uint32_t most, const char *name,
                        scenario_report *r) {
    size_t stride = 1, i;
    if (most != 0 && o->size > most)
        stride = (o->size + most - 1) / most;
    for (i = (size_t)(r->rounds % stride); i < o->size; i += stride) {
        expect_present(f, o, i, q, "in a round", name);
        r->round_checks++;
    }
    r->rounds++;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct run_state {
    ebb_tlbf *f;
    const scenario *s;
    const oracle_plan *p;
    oracle o;
    scenario_report *r;
    ebb_tlbf_stats initial;
    int64_t next_round;
    bool any;           /* an add was accepted                            */
} run_state;

/* Rounds and deadlines due before an add at effective time e. */
static void before_add(run_state *st, int64_t e) {
    const scenario *s = st->s;
    while (st->p->round_every > 0 && st->next_round < e) {
        int64_t q = st->any && st->next_round < st->r->latest
                        ? st->r->latest
                        : st->next_round;
        check_deadlines(st->f, &st->o, q, s->name, st->r);
        check_round(st->f, &st->o, q, st->p->round_checks, s->name, st->r);
        st->next_round += st->p->round_every;
    }
    check_deadlines(st->f, &st->o, e, s->name, st->r);
}

static void after_accepted(run_state *st, uint64_t index, int64_t e) {
    scenario_report *r = st->r;
    support_key key = support_key_make(st->s->key_stream, index);
    if (st->initial.policy == EBB_TLBF_EVICT) {
        ebb_tlbf_stats now;
        ebb_tlbf_get_stats(st->f, &now);
        if (now.evicted_slices != st->initial.evicted_slices) {
            /* The guarantee is void for what was added before. */
            st->initial.evicted_slices = now.evicted_slices;
            st->o.size = 0;
            r->evictions++;
        }
    }
    oracle_push(&st->o, index, e);
    r->latest = e;
    st->any = true;
    r->added++;
    CHECK(ebb_tlbf_contains(st->f, key.bytes, sizeof key.bytes, e),
          "%s: key %llu not present right after its add at %lld",
          st->s->name, (unsigned long long)index, (long long)e);
}

static void one_add(run_state *st, int64_t given) {
    scenario_report *r = st->r;
    uint64_t index = r->next_key++;
    support_key key = support_key_make(st->s->key_stream, index);
    int64_t e = st->any && given < r->latest ? r->latest : given;
    ebb_status status;
    size_t memory;

    if (st->any && given < r->latest)
        r->backsteps++;
    before_add(st, e);
    status = ebb_tlbf_add(st->f, key.bytes, sizeof key.bytes, given);
    r->attempted++;
    if (status == EBB_OK) {
        after_accepted(st, index, e);
    } else {
        CHECK(status == EBB_ELIMIT && st->p->allow_refusals,
              "%s: add of key %llu at %lld returned %d (%s)", st->s->name,
              (unsigned long long)index, (long long)given, (int)status,
              ebb_strerror(status));
        r->refused++;
    }
    memory = ebb_tlbf_memory(st->f);
    CHECK(memory <= st->initial.max_memory,
          "%s: memory %zu > max_memory %zu after add %llu", st->s->name,
          memory, st->initial.max_memory, (unsigned long long)index);
    if (memory > r->peak_memory)
        r->peak_memory = memory;
    if (st->p->after_add != NULL)
        st->p->after_add(st->f, status, given, st->p->context);
}

void scenario_run(ebb_tlbf *f, const scenario *s, const oracle_plan *p,
                  scenario_report *out) {
    run_state st;
    arrivals a;
    int64_t true_time, given;

    st.f = f;
    st.s = s;
    st.p = p;
    st.r = out;
    st.any = false;
    *out = (scenario_report){0};
    out->latest = INT64_MIN;
    ebb_tlbf_get_stats(f, &st.initial);
    assert_int_equal(st.initial.span_ns, s->span);
    oracle_init(&st.o, s->span, s->key_stream);
    st.next_round = s->start + p->round_every;

    arrivals_begin(&a, s);
    while (arrivals_next(&a, &true_time, &given)) {
        one_add(&st, given);
        if ((out->attempted & 63) == 0) {
            ebb_tlbf_stats now;
            ebb_tlbf_get_stats(f, &now);
            if (now.slices > out->peak_slices)
                out->peak_slices = now.slices;
        }
    }
    /* Every remaining key at its deadline, after the last add. */
    check_deadlines(f, &st.o, INT64_MAX, s->name, out);
    if (st.o.size > 0) /* only a deadline of INT64_MAX is left */
        expect_present(f, &st.o, 0, INT64_MAX, "at the end", s->name);
    oracle_free(&st.o);
}

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                */
/* ------------------------------------------------------------------------ */

tlbf_snap tlbf_snap_save(const ebb_tlbf *filter) {
    tlbf_snap s;
    size_t written = 0;
    s.size = ebb_tlbf_snapshot_size(filter);
    s.bytes = malloc(s.size + 16);
    assert_non_null(s.bytes);
    memset(s.bytes + s.size, 0, 16);
    assert_int_equal(ebb_tlbf_save(filter, s.bytes, s.size, &written),
                     EBB_OK);
    assert_int_equal(written, s.size);
    return s;
}

tlbf_snap tlbf_snap_copy(const tlbf_snap *s) {
    tlbf_snap c;
    c.size = s->size;
    c.bytes = malloc(s->size + 16);
    assert_non_null(c.bytes);
    memcpy(c.bytes, s->bytes, s->size + 16);
    return c;
}

void tlbf_snap_free(tlbf_snap *s) {
    free(s->bytes);
    s->bytes = NULL;
    s->size = 0;
}

ebb_tlbf *tlbf_snap_load(const tlbf_snap *s) {
    ebb_tlbf *f = NULL;
    ebb_status st = ebb_tlbf_load(s->bytes, s->size, &f);
    CHECK(st == EBB_OK, "load of a saved snapshot: %d (%s)", (int)st,
          ebb_strerror(st));
    assert_non_null(f);
    return f;
}

uint64_t tlbf_snap_get(const tlbf_snap *s, size_t offset, size_t width) {
    assert_true(offset + width <= s->size + 16);
    return support_get_le(s->bytes + offset, width);
}

void tlbf_snap_set(tlbf_snap *s, size_t offset, size_t width, uint64_t v) {
    assert_true(offset + width <= s->size + 16);
    support_put_le(s->bytes + offset, width, v);
}

void tlbf_snap_forge_checksum(tlbf_snap *s) {
    support_put_le(s->bytes + s->size - SNAP_CHECKSUM_LEN, 8,
                   XXH3_64bits(s->bytes, s->size - SNAP_CHECKSUM_LEN));
}

size_t tlbf_snap_slice(const tlbf_snap *s, uint32_t i) {
    size_t offset = SNAP_OFF_PAYLOAD;
    uint32_t j;
    for (j = 0; j < i; j++) {
        uint64_t bits = tlbf_snap_get(s, offset + TS_BITS, 8);
        offset += TS_HEADER_LEN + (size_t)((bits + 63) / 64) * 8;
    }
    return offset;
}

void tlbf_snap_expect_equal(const tlbf_snap *a, const tlbf_snap *b,
                            const char *what) {
    size_t i = 0;
    CHECK(a->size == b->size, "%s: snapshot sizes %zu and %zu", what,
          a->size, b->size);
    while (i < a->size && a->bytes[i] == b->bytes[i])
        i++;
    CHECK(i == a->size, "%s: snapshots differ first at byte %zu of %zu", what,
          i, a->size);
}

uint64_t tlbf_snap_total_bits(const tlbf_snap *s) {
    uint32_t count = (uint32_t)tlbf_snap_get(s, SNAP_OFF_PARAMS + TP_SLICES, 4);
    uint64_t total = 0;
    size_t offset = SNAP_OFF_PAYLOAD;
    uint32_t j;
    for (j = 0; j < count; j++) {
        uint64_t bits = tlbf_snap_get(s, offset + TS_BITS, 8);
        total += bits;
        offset += TS_HEADER_LEN + (size_t)((bits + 63) / 64) * 8;
    }
    return total;
}

ebb_tlbf_config tlbf_config_of(double fp, int64_t span, uint64_t initial,
                               size_t max_memory, ebb_tlbf_policy policy) {
    ebb_tlbf_config c;
    memset(&c, 0, sizeof c);
    c.span_ns = span;
    c.fp = fp;
    c.initial_capacity = initial;
    c.max_memory = max_memory;
    c.policy = policy;
    return c;
}

ebb_tlbf *tlbf_create_or_fail(const ebb_tlbf_config *c, uint64_t seed) {
    ebb_tlbf *f = NULL;
    ebb_status st = ebb_tlbf_create(c, seed, &f);
    CHECK(st == EBB_OK, "create (fp %g, T %lld, initial %llu, max %zu): %s",
          c->fp, (long long)c->span_ns,
          (unsigned long long)c->initial_capacity, c->max_memory,
          ebb_strerror(st));
    assert_non_null(f);
    return f;
}

ebb_tlbf_stats tlbf_stats_of(const ebb_tlbf *f) {
    ebb_tlbf_stats s;
    ebb_tlbf_get_stats(f, &s);
    return s;
}
