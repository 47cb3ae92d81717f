/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * params_time.c: `ebb params --time-window DUR --rate R --fp P`, the
 * sizing of the time-limited filter `ebb dedup --time-window` builds, at a
 * steady rate of R items per second (docs/tlbf.md):
 *
 *   (k, l)      the APBF chooser's at a window of 10^6 (choice 4 of
 *               docs/tlbf.md): they depend on fp (and max-npws) only;
 *   generation  T / l; a slice is written for k generations and kept
 *               until its last write is T old, so about k + l slices live;
 *   items       g = ceil(R T / l) per generation, the library's first
 *               estimate for an expected R T items per span, and what its
 *               rate estimate settles at for a steady R;
 *   slice bits  m = ceil(k g / ln 2), so a slice ends half full;
 *   memory      the library's steady state: (k + l) slices of m bits in
 *               size-classed blocks, the slice descriptors and the handle
 *               (ebb_tlbf_plan_config);
 *   slack       k T / l: how long an item may outlive T, fading.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "params.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PROGRAM PARAMS_PROGRAM


typedef struct time_report {
    uint32_t k, l;
    int64_t span_ns, generation_ns, slack_ns;
    uint64_t items_per_generation;
    uint64_t slice_bits;
    size_t memory_bytes;
    double bits_per_item, fp, npws;
} time_report;

static int sizing_error(const params_request *req, const char *reason)
{
    cli_error(PROGRAM, "cannot size a time window for --time-window %s "
              "--rate %s --fp %s%s%s: %s", req->sizing.time_window_text,
              req->sizing.rate_text, req->sizing.fp_text,
              req->sizing.have_max_npws ? " --max-npws " : "",
              req->sizing.have_max_npws ? req->sizing.max_npws_text : "", reason);
    return CLI_EXIT_USAGE;
}

/* Returns -1 to go on, otherwise the exit status. All sizing is the
 * library's (ebb_tlbf_capacity_for_rate, ebb_tlbf_plan_config). */
static int build_time_report(const params_request *req, time_report *r)
{
    uint64_t items;
    if (ebb_tlbf_capacity_for_rate(req->sizing.rate, req->sizing.span_ns,
                                   &items) != EBB_OK)
        return sizing_error(req, "more than 2^64 items per window");
    ebb_tlbf_config config = {
        .span_ns = req->sizing.span_ns,
        .fp = req->sizing.fp,
        .max_npws = req->sizing.have_max_npws ? req->sizing.max_npws : 0.0,
        .initial_capacity = items,
        .max_memory = SIZE_MAX, /* the plan reports; nothing is allocated */
        .policy = EBB_TLBF_REFUSE,
    };
    ebb_tlbf_plan plan;
    ebb_status status = ebb_tlbf_plan_config(&config, &plan);
    if (status != EBB_OK)
        return sizing_error(req, ebb_strerror(status));
    if (!isfinite(plan.fp) || !isfinite(plan.npws)) {
        cli_error(PROGRAM, "the library gave a non-finite rate for k=%" PRIu32
                  ", l=%" PRIu32, plan.k, plan.l);
        return CLI_EXIT_IO;
    }
    *r = (time_report){
        .k = plan.k,
        .l = plan.l,
        .span_ns = req->sizing.span_ns,
        .generation_ns = plan.generation_ns,
        .slack_ns = plan.slack_ns,
        .items_per_generation = plan.generation_items,
        .slice_bits = plan.slice_bits,
        .memory_bytes = plan.steady_bytes,
        .bits_per_item = plan.bits_per_item,
        .fp = plan.fp,
        .npws = plan.npws,
    };
    return -1;
}

static void print_time_json(const time_report *r)
{
    printf("{\"k\": %" PRIu32 ", \"l\": %" PRIu32 ", \"span_ns\": %" PRId64
           ", \"generation_ns\": %" PRId64 ", \"items_per_generation\": %" PRIu64
           ", \"slice_bits\": %" PRIu64 ", \"memory_bytes\": %zu"
           ", \"bits_per_item\": %.10g, \"fp\": %.10g, \"slack_ns\": %" PRId64
           ", \"npws\": %.10g}\n",
           r->k, r->l, r->span_ns, r->generation_ns, r->items_per_generation,
           r->slice_bits, r->memory_bytes, r->bits_per_item, r->fp,
           r->slack_ns, r->npws);
}

static void print_time_human(const time_report *r)
{
    char span[32], generation[32], slack[32];
    cli_format_seconds(r->span_ns, span, sizeof span);
    cli_format_seconds(r->generation_ns, generation, sizeof generation);
    cli_format_seconds(r->slack_ns, slack, sizeof slack);
    printf("k:                    %" PRIu32 "\n", r->k);
    printf("l:                    %" PRIu32 "\n", r->l);
    printf("span:                 %s\n", span);
    printf("generation:           %s\n", generation);
    printf("items per generation: %" PRIu64 "\n", r->items_per_generation);
    printf("slice bits:           %" PRIu64 "\n", r->slice_bits);
    printf("memory bytes:         %zu\n", r->memory_bytes);
    printf("bits per item:        %.10g\n", r->bits_per_item);
    printf("fp:                   %.10g\n", r->fp);
    printf("slack:                %s\n", slack);
    printf("npws:                 %.10g\n", r->npws);
}

int params_time_window(const params_request *req)
{
    time_report report;
    int status = build_time_report(req, &report);
    if (status >= 0)
        return status;
    if (req->json)
        print_time_json(&report);
    else
        print_time_human(&report);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(PROGRAM, "write error: %s", strerror(errno));
        return CLI_EXIT_IO;
    }
    return CLI_EXIT_OK;
}
