/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rm.c: Recurring Minimum (Cohen and Matias, "Spectral Bloom Filters",
 * SIGMOD 2003, sections 3.3 and 3.3.1), with its marker filter B_f and
 * the trapping refinement of Fig. 2.
 *
 * The idea (3.3). A key x suffers a Bloom error when each of its k
 * counters is shared with heavier keys; its minimum m_x is then usually
 * held by ONE counter, while a key whose minimum recurs over two or more
 * counters is very likely exact (Table 1: at gamma 0.7, k 5, 81% of the
 * keys recur and 0.2% of those are wrong). So every add goes to the
 * primary filter as under Minimum Selection, and a key whose minimum is
 * single after an add is "moved": the secondary filter, m_s counters
 * probed at secondary_k positions of an unrelated hash, gets m_x (the
 * primary minimum, which includes this add), and the key is marked. The
 * marker (params.marker) is by default EXACT: the key's 64-bit
 * fingerprint (spectral_fingerprint: the high half of its marker-part
 * hash, 0 mapped to 1) in `fingerprints`, marker_size slots, open
 * addressing from ebb_reduce(fp, slots) with linear probing, no deletion.
 * A full table refuses the move (stats.moves_refused): the key stays in
 * the primary and is answered by it, one-sided. BLOOM is the paper's B_f
 * (marker_size bits, k probes); NONE its plain RM. The secondary holds
 * few keys, so its own Bloom error is far below the primary's.
 *
 *     add x, r          primary  [ . . a . . b . . c . ]  += r at k spots
 *                         single minimum? and x not yet directed:
 *                       secondary[ . s . . t . . u . ]    += m_x
 *                       marker   [ 0 1 0 0 1 0 1 0 ]      x's bits := 1
 *                         x directed already: secondary   += r
 *     estimate x        directed and secondary min > 0:
 *                           min(secondary min, primary min)
 *                       else primary min
 *     remove x, r       primary -= r (refused, nothing changed, when a
 *                       counter < r); directed: secondary -= r when all
 *                       its counters >= r, else the secondary is left.
 *
 * "Directed" is: x's fingerprint is in the table (EXACT); all k bits set
 * (BLOOM); x's secondary minimum above 0 (NONE, the paper's plain "look
 * for x in the secondary").
 *
 * The one-sidedness rule, and why it holds. The paper sends a later add
 * of x to the secondary only when x's minimum is single at that moment
 * (or x is in B_f); without the marker a key moved once and recurring
 * later has its adds go to the primary only, its secondary entry frozen
 * below its count, and the lookup (single minimum: read the secondary)
 * answers below the truth. libbf's RM shows exactly that. ebb's rule:
 * once x is directed, EVERY later add of x also adds r to x's secondary
 * counters. Then, per key z, let C_z be z's contribution to each of its
 * secondary counters (all k get the same, so C_z is one number) and f_z
 * its true count. Invariant: C_z >= f_z whenever z is directed by its
 * own move. At the move C_z = m_z >= f_z (the primary never holds less
 * than the truth: MS adds, legitimate removals); an add raises both by r;
 * an applied removal lowers both by r; a refused one lowers f_z only.
 * A secondary counter is the sum of the C_z of the keys on it (coinciding
 * positions count a key twice), so each of x's secondary counters is
 * >= C_x >= f_x, and min(secondary min, primary min) >= f_x. Since C_z >=
 * f_z >= r for a legitimate removal of r, a removal of a truly directed
 * key is never left undone, and it never takes from another key's share.
 *
 * With the EXACT marker the argument is complete (up to a 2^-64
 * fingerprint collision): x is directed iff x was moved. At the move
 * every secondary counter of x gets m_x >= f_x (C_x = m_x); from then on
 * every add of x adds r to each (C_x and f_x both + r); a removal
 * subtracts r from x's secondary counters only when every one holds r
 * (C_x and f_x both - r), otherwise f_x alone falls. So C_x >= f_x
 * always, every secondary counter of x holds at least C_x, its minimum
 * is >= f_x, and the lookup min(secondary min, primary min) >= f_x (the
 * primary being MS, >= f_x). A key whose move was refused (table full)
 * is never directed and reads the primary minimum: one-sided too.
 *
 * The paper's markers. With BLOOM or NONE "directed" can also be a false
 * positive: x was never moved, yet its k marker bits (or its secondary
 * counters) were set by other keys. Before x's first add that is
 * harmless (all its adds reach the secondary); arising mid-stream, x's
 * earlier occurrences are missing from its secondary counters: C_x <
 * f_x, x's estimate can fall below f_x and its removals take from other
 * keys. Section 3.3 puts B_f's false-positive rate at (1 - e^(-0.2
 * gamma))^k = 3.8e-5 (gamma 0.7, k 5), assuming 20% of keys move; that
 * is wrong at the loads RM runs at: at the old equal-memory split (m_p =
 * 2m/3, gamma 1.05) 41.6% of keys move into m_p bits, a marker gamma of
 * 0.44 and a rate of 0.0036 per key, 18 answers below the truth in 5000
 * queries; docs/results/spectral.md ("The marker B_f") measures 3.3e-5
 * at Table 1's load and 7.7e-3 at equal memory with the paper's split.
 * tests/unit/test_spectral_rm.c: exact 0 violations at every load (also
 * with the table full); BLOOM 364,243 and NONE 394,706 (key checks over
 * 200 streams) on overloaded filters, all in tainted streams.
 *
 * Late detection (measured, not in the paper's Table 1 formula). A key
 * whose counters were all stepped on before its minimum first became
 * single moves with an inflated m_x; that is nearly all of RM's error.
 * With m/2 extra secondary RM errs about half as often as MS at m (0.015
 * vs 0.031 at gamma 0.7), not 18.5x less; at equal memory (default
 * split, table counted) its error ratio is above MS's (0.028 vs 0.022)
 * and its additive error about half (tests/stats/test_spectral_rm_error).
 *
 * Recurring means DISTINCT counters. With a small m two of x's k
 * positions can coincide; the counter then holds 2 f_x at least, but the
 * minimum seen twice there is no evidence of anything: rm_distinct_min
 * counts each counter once. Adds and removals act per position (a
 * coincident counter gets 2 r), as under MS, so the sums stay exact.
 *
 * Saturation. Counters clip at max and stick (never decremented); an
 * estimate read at max is EBB_SPECTRAL_SATURATED, which is UINT64_MAX,
 * so min() over the secondary's and the primary's readings never turns a
 * clipped counter into a wrong number. Every clip counts in
 * stats.saturations.
 *
 * Trapping RM (3.3.1, Fig. 2; params.trap_slots > 0). "Late detection":
 * x is found single only after its counters were stepped over, so m_x
 * carries another key's count. Fig. 2 therefore (a) at the move also
 * sets a trap on x's single minimum counter C, remembered in L (here
 * f->traps: open addressing by counter index, trap_slots entries; the
 * key is kept as its 128-bit hash so its positions can be recomputed),
 * and subtracts m_x from x's primary counters; (b) when a key y whose
 * minimum recurs steps on a trapped counter, the trap's owner x gets m_y
 * taken out of its secondary entry and put back into its primary
 * counters; (c) a lookup reads the secondary when the primary minimum is
 * single, else the primary minimum. The figure leaves gaps; decided here:
 *   - "Increase value of X by i" and "else increase X normally by i in
 *     main SBF" are one increment, done first on every add (not twice,
 *     and also when a trap is sprung).
 *   - A sprung trap is cleared (its slot freed; probing chains repaired by
 *     backward shift), so one step-over is compensated once. A key
 *     stepping on its own trap springs nothing. Every distinct trapped
 *     counter of y owned by another key is sprung.
 *   - The amount taken from the owner's secondary is m_y clipped to what
 *     the owner's secondary counters hold (never below 0), and the same
 *     amount goes back to its primary counters (saturating).
 *   - A counter already trapped keeps its first owner (no new trap; not a
 *     "full" event). A full table sets no trap: stats.traps_full.
 *   - "Decrease m_x from X's bits in main SBF" subtracts m_x from EVERY
 *     one of x's primary counters (clipped at 0; saturated ones stay). At
 *     C that removes x and whoever stepped over it; at x's other counters
 *     it removes m_x although only f_x <= m_x of it was x's: another key
 *     z on such a counter loses m_x - f_x of its count, and z's estimate
 *     can fall below f_z. Moreover x's own primary counters are now below
 *     f_x, so once x's minimum recurs the lookup (primary minimum) can
 *     answer below the truth, and x's later removals can be refused.
 *   - A directed key is, as in plain RM, in the marker or with a secondary
 *     minimum > 0; Fig. 2 adds to its secondary only while its minimum is
 *     single, and ebb follows the figure there (the one-sidedness rule
 *     above is plain RM's, not the figure's).
 *   - A lookup of a key with a single minimum and nothing in the secondary
 *     (never moved) falls back to the primary minimum (the figure would
 *     return 0, a false negative for every late arrival).
 *   - Fig. 2 has no removal: trapping RM removes as plain RM does.
 * So trapping RM is NOT one-sided; the property test measures how often
 * it answers below the truth, and the docs report it.
 *
 * Statistics: stats.moved counts moves (fingerprints_used equals it
 * unless two keys share a fingerprint or a partitioned union added
 * src's), stats.moves_refused the moves a full table refused.
 *
 * What is measured (tests/unit/test_spectral_rm.c, tests/stats/
 * test_spectral_rm_error.c, 40 runs with their own hash seeds): zero
 * answers below the truth with the exact marker on insert/delete streams
 * at every load and on section 6.1's Zipf data; the counts for BLOOM, NONE
 * and trapping; the error figures above.
 *
 * Nothing here allocates: positions live on the stack (k <= 32).
 */
#include <string.h>

#include "core/bits.h"
#include "spectral/store.h"

#define RM_NO_TRAP UINT64_MAX

/* The k positions of the key in a part (the primary, the Bloom marker). */
static void rm_positions(const ebb_spectral *f, ebb_hash128 h,
                         spectral_part part, uint64_t size, uint64_t *pos)
{
    spectral_positions(spectral_part_hash(h, part), f->params.k, size, pos);
}

/* The secondary_k positions of the key in the secondary. */
static void rm_secondary_positions(const ebb_spectral *f, ebb_hash128 h,
                                   uint64_t *sec)
{
    spectral_positions(spectral_part_hash(h, SPECTRAL_SECONDARY),
                       f->params.secondary_k, f->params.secondary, sec);
}

/* How many of pos[0..k-1] equal pos[j]. */
static uint32_t rm_multiplicity(const uint64_t *pos, uint32_t k, uint32_t j)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < k; i++)
        n += pos[i] == pos[j];
    return n;
}

/* True when pos[j] appeared earlier in pos: a coincident position. */
static bool rm_seen_before(const uint64_t *pos, uint32_t j)
{
    for (uint32_t i = 0; i < j; i++)
        if (pos[i] == pos[j])
            return true;
    return false;
}

/* The minimum over the key's counters, *distinct = how many DISTINCT
 * counters hold it, *where = one of them (the single one when
 * *distinct is 1). */
static uint32_t rm_distinct_min(const ebb_spectral *f, spectral_part c,
                                const uint64_t *pos, uint32_t k,
                                uint32_t *distinct, uint64_t *where)
{
    /* pos[0] is never a repeat: start from it, so *where is set even when
     * every counter holds UINT32_MAX (32-bit counters, all saturated) */
    uint32_t lo = spectral_store_get(f, c, pos[0]), n = 1;
    *where = pos[0];
    for (uint32_t j = 1; j < k; j++) {
        if (rm_seen_before(pos, j))
            continue;
        uint32_t v = spectral_store_get(f, c, pos[j]);
        if (v < lo) {
            lo = v;
            n = 1;
            *where = pos[j];
        } else if (v == lo) {
            n++;
        }
    }
    *distinct = n;
    return lo;
}

/* Adds `by` at every position (a coincident one twice), clipping at the
 * maximum; each clip counted. */
static void rm_add_all(ebb_spectral *f, spectral_part c, const uint64_t *pos,
                       uint32_t k, uint32_t by)
{
    for (uint32_t j = 0; j < k; j++)
        if (spectral_store_add(f, c, pos[j], by))
            f->stats.saturations =
                ebb_saturating_add(f->stats.saturations, 1u);
}

/* True when every unsaturated counter can give `by` per position on it
 * (saturated counters stay: their true sum is unknown). */
static bool rm_can_take(const ebb_spectral *f, spectral_part c,
                        const uint64_t *pos, uint32_t k, uint32_t by)
{
    for (uint32_t j = 0; j < k; j++) {
        uint32_t v = spectral_store_get(f, c, pos[j]);
        if (v != spectral_store_max(f, c) &&
            (uint64_t)v < (uint64_t)by * rm_multiplicity(pos, k, j))
            return false;
    }
    return true;
}

/* Subtracts `by` at every unsaturated position (rm_can_take said yes, or
 * the caller accepts the clip at 0). The saturation test is made on the
 * value before this call, so a coincident position is taken twice. */
static void rm_take_all(ebb_spectral *f, spectral_part c,
                        const uint64_t *pos, uint32_t k, uint32_t by)
{
    bool sticky[EBB_SPECTRAL_MAX_K];
    for (uint32_t j = 0; j < k; j++)
        sticky[j] = spectral_store_get(f, c, pos[j]) ==
                    spectral_store_max(f, c);
    for (uint32_t j = 0; j < k; j++)
        if (!sticky[j])
            (void)spectral_store_sub(f, c, pos[j], by);
}

/* Whether the key's updates also go to the secondary: its fingerprint
 * in the exact marker, its k bits in the Bloom marker, or, without a
 * marker, a secondary minimum above 0. */
static bool rm_directed(const ebb_spectral *f, ebb_hash128 h,
                        const uint64_t *sec)
{
    const ebb_spectral_params *p = &f->params;
    if (p->marker == EBB_SPECTRAL_MARKER_NONE)
        return spectral_store_min(f, SPECTRAL_SECONDARY, sec, p->secondary_k,
                                  NULL) > 0;
    if (p->marker == EBB_SPECTRAL_MARKER_EXACT) {
        uint64_t fp = spectral_fingerprint(h);
        uint64_t i = spectral_fingerprint_slot(f->fingerprints,
                                               p->marker_size, fp);
        return i != UINT64_MAX && f->fingerprints[i] == fp;
    }
    uint64_t mark[EBB_SPECTRAL_MAX_K];
    rm_positions(f, h, SPECTRAL_MARKER, p->marker_size, mark);
    for (uint32_t j = 0; j < p->k; j++)
        if (ebb_cells_get(&f->marker, mark[j]) == 0)
            return false;
    return true;
}

bool spectral_fingerprint_insert(ebb_spectral *f, uint64_t fp)
{
    uint64_t i = spectral_fingerprint_slot(f->fingerprints,
                                           f->params.marker_size, fp);
    if (i == UINT64_MAX)
        return false;
    if (f->fingerprints[i] == 0) {
        if (f->fingerprints_used >=
            spectral_fingerprint_capacity(f->params.marker_size))
            return false;
        spectral_note(f, SPECTRAL_NOTE_FINGERPRINT, i);
        f->fingerprints[i] = fp;
        f->fingerprints_used++;
    }
    return true;
}

/* Marks the key as moved; false (nothing changed, counted) when the
 * exact marker's table is full, and the key must then not move. */
static bool rm_mark(ebb_spectral *f, ebb_hash128 h)
{
    const ebb_spectral_params *p = &f->params;
    if (p->marker == EBB_SPECTRAL_MARKER_NONE)
        return true;
    if (p->marker == EBB_SPECTRAL_MARKER_EXACT) {
        if (spectral_fingerprint_insert(f, spectral_fingerprint(h)))
            return true;
        f->stats.moves_refused =
            ebb_saturating_add(f->stats.moves_refused, 1u);
        return false;
    }
    uint64_t mark[EBB_SPECTRAL_MAX_K];
    rm_positions(f, h, SPECTRAL_MARKER, p->marker_size, mark);
    for (uint32_t j = 0; j < p->k; j++) {
        if (f->compact != NULL && ebb_cells_get(&f->marker, mark[j]) == 0)
            spectral_note(f, SPECTRAL_NOTE_MARKER_BIT, mark[j]);
        ebb_cells_set(&f->marker, mark[j], 1);
    }
    return true;
}

/* ---- The trap table L ------------------------------------------------
 * Open addressing with linear probing, keyed by the primary counter's
 * index; an empty slot has counter RM_NO_TRAP. */

static uint64_t trap_home(const ebb_spectral *f, uint64_t counter)
{
    return ebb_reduce(ebb_mix64(counter), f->params.trap_slots);
}

static uint64_t trap_next(const ebb_spectral *f, uint64_t i)
{
    return i + 1 == f->params.trap_slots ? 0 : i + 1;
}

/* The slot holding the counter's trap, or RM_NO_TRAP. */
static uint64_t trap_find(const ebb_spectral *f, uint64_t counter)
{
    uint64_t i = trap_home(f, counter);
    for (uint64_t n = 0; n < f->params.trap_slots; n++) {
        if (f->traps[i].counter == RM_NO_TRAP)
            return RM_NO_TRAP;
        if (f->traps[i].counter == counter)
            return i;
        i = trap_next(f, i);
    }
    return RM_NO_TRAP;
}

/* Sets a trap on the counter for the key, unless one is there already
 * (the first owner stays) or the table is full (counted). */
static void trap_set(ebb_spectral *f, uint64_t counter, ebb_hash128 h)
{
    if (trap_find(f, counter) != RM_NO_TRAP)
        return;
    if (f->traps_used == f->params.trap_slots) {
        f->stats.traps_full++;
        return;
    }
    uint64_t i = trap_home(f, counter);
    while (f->traps[i].counter != RM_NO_TRAP)
        i = trap_next(f, i);
    f->traps[i].counter = counter;
    f->traps[i].key = h;
    f->traps_used++;
    f->stats.traps_set++;
}

/* True when home h lies cyclically in (gap, j]: the entry at j may not
 * move back to gap. */
static bool trap_between(uint64_t gap, uint64_t h, uint64_t j)
{
    return gap <= j ? gap < h && h <= j : gap < h || h <= j;
}

/* Empties slot i and shifts later entries of the probe chain back, so
 * that every remaining entry stays reachable from its home. */
static void trap_clear(ebb_spectral *f, uint64_t i)
{
    uint64_t gap = i, j = i;
    f->traps[gap].counter = RM_NO_TRAP;
    f->traps_used--;
    for (;;) {
        j = trap_next(f, j);
        if (f->traps[j].counter == RM_NO_TRAP)
            return;
        if (trap_between(gap, trap_home(f, f->traps[j].counter), j))
            continue;
        f->traps[gap] = f->traps[j];
        f->traps[j].counter = RM_NO_TRAP;
        gap = j;
    }
}

/* Fig. 2's compensation: the owner of a trap y stepped on gives back up
 * to m_y from its secondary entry to its primary counters. */
static void trap_spring(ebb_spectral *f, uint64_t slot, uint32_t m_y)
{
    uint32_t k = f->params.k, ks = f->params.secondary_k;
    ebb_hash128 owner = f->traps[slot].key;
    uint64_t sec[EBB_SPECTRAL_MAX_K], pri[EBB_SPECTRAL_MAX_K];
    rm_secondary_positions(f, owner, sec);
    rm_positions(f, owner, SPECTRAL_PRIMARY, f->params.counters, pri);
    uint32_t give = m_y;
    for (uint32_t j = 0; j < ks; j++) {
        uint32_t v = spectral_store_get(f, SPECTRAL_SECONDARY, sec[j]);
        uint32_t per = v / rm_multiplicity(sec, ks, j);
        if (v != f->secondary.max && per < give)
            give = per;
    }
    rm_take_all(f, SPECTRAL_SECONDARY, sec, ks, give);
    rm_add_all(f, SPECTRAL_PRIMARY, pri, k, give);
    trap_clear(f, slot);
    f->stats.traps_sprung++;
}

/* Fig. 2 after the primary increment: m_x and the distinct count are the
 * primary's after it. */
static void trap_add(ebb_spectral *f, ebb_hash128 h, const uint64_t *pri,
                     uint32_t r, uint32_t m_x, uint32_t distinct,
                     uint64_t single)
{
    uint32_t k = f->params.k;
    if (distinct > 1) {
        for (uint32_t j = 0; j < k; j++) {
            if (rm_seen_before(pri, j))
                continue;
            uint64_t slot = trap_find(f, pri[j]);
            if (slot == RM_NO_TRAP)
                continue;
            ebb_hash128 owner = f->traps[slot].key;
            if (owner.lo == h.lo && owner.hi == h.hi)
                continue;
            trap_spring(f, slot, m_x);
        }
        return;
    }
    uint32_t ks = f->params.secondary_k;
    uint64_t sec[EBB_SPECTRAL_MAX_K] = {0}; /* -Wmaybe-uninitialized */
    rm_secondary_positions(f, h, sec);
    if (rm_directed(f, h, sec)) {
        rm_add_all(f, SPECTRAL_SECONDARY, sec, ks, r);
        return;
    }
    if (!rm_mark(f, h))
        return; /* exact marker full: x stays in the primary */
    trap_set(f, single, h);
    rm_add_all(f, SPECTRAL_SECONDARY, sec, ks, m_x);
    rm_take_all(f, SPECTRAL_PRIMARY, pri, k, m_x);
    f->stats.moved++;
}

/* ---- The four entry points -------------------------------------------- */

void spectral_rm_add(ebb_spectral *f, ebb_hash128 h, uint32_t r)
{
    uint32_t k = f->params.k, ks = f->params.secondary_k, distinct;
    /* Zeroed: gcc cannot see that k >= 1 fills them (-Wmaybe-uninit). */
    uint64_t pri[EBB_SPECTRAL_MAX_K] = {0}, sec[EBB_SPECTRAL_MAX_K] = {0};
    uint64_t single = 0;
    if (r == 0)
        return;
    rm_positions(f, h, SPECTRAL_PRIMARY, f->params.counters, pri);
    rm_add_all(f, SPECTRAL_PRIMARY, pri, k, r);
    uint32_t m_x =
        rm_distinct_min(f, SPECTRAL_PRIMARY, pri, k, &distinct, &single);
    if (f->params.trap_slots > 0) {
        trap_add(f, h, pri, r, m_x, distinct, single);
        return;
    }
    rm_secondary_positions(f, h, sec);
    if (rm_directed(f, h, sec)) {
        rm_add_all(f, SPECTRAL_SECONDARY, sec, ks, r); /* one-sidedness */
    } else if (distinct == 1 && rm_mark(f, h)) {
        rm_add_all(f, SPECTRAL_SECONDARY, sec, ks, m_x);
        f->stats.moved++;
    }
}

ebb_status spectral_rm_remove(ebb_spectral *f, ebb_hash128 h, uint32_t r)
{
    uint32_t k = f->params.k, ks = f->params.secondary_k;
    uint64_t pri[EBB_SPECTRAL_MAX_K] = {0}, sec[EBB_SPECTRAL_MAX_K] = {0};
    rm_positions(f, h, SPECTRAL_PRIMARY, f->params.counters, pri);
    if (!rm_can_take(f, SPECTRAL_PRIMARY, pri, k, r)) {
        f->stats.refused_removals =
            ebb_saturating_add(f->stats.refused_removals, 1u);
        return EBB_EUNDERFLOW;
    }
    rm_secondary_positions(f, h, sec);
    /* Directedness depends on the secondary and marker only: decided
     * before the primary changes, as the add decides it. */
    if (rm_directed(f, h, sec) &&
        rm_can_take(f, SPECTRAL_SECONDARY, sec, ks, r))
        rm_take_all(f, SPECTRAL_SECONDARY, sec, ks, r);
    rm_take_all(f, SPECTRAL_PRIMARY, pri, k, r);
    return EBB_OK;
}

uint64_t spectral_rm_estimate(const ebb_spectral *f, ebb_hash128 h)
{
    uint32_t k = f->params.k, distinct;
    uint64_t pri[EBB_SPECTRAL_MAX_K] = {0}, sec[EBB_SPECTRAL_MAX_K] = {0};
    uint64_t single;
    rm_positions(f, h, SPECTRAL_PRIMARY, f->params.counters, pri);
    uint32_t p =
        rm_distinct_min(f, SPECTRAL_PRIMARY, pri, k, &distinct, &single);
    uint64_t primary = spectral_value(&f->primary, p);
    rm_secondary_positions(f, h, sec);
    uint32_t s = spectral_store_min(f, SPECTRAL_SECONDARY, sec,
                                    f->params.secondary_k, NULL);
    if (s == 0 || !rm_directed(f, h, sec))
        return primary;
    uint64_t secondary = spectral_value(&f->secondary, s);
    if (f->params.trap_slots > 0) /* TRAPLOOKUP */
        return distinct == 1 ? secondary : primary;
    return secondary < primary ? secondary : primary;
}

void spectral_rm_forget(ebb_spectral *f)
{
    spectral_store_clear(f, SPECTRAL_SECONDARY);
    if (f->marker.words != NULL)
        ebb_cells_clear(&f->marker);
    if (f->fingerprints != NULL)
        memset(f->fingerprints, 0,
               (size_t)f->params.marker_size * sizeof(uint64_t));
    f->fingerprints_used = 0;
    if (f->traps != NULL)
        spectral_clear_traps(f);
    f->traps_used = 0;
}
