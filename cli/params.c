/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * params.c: `ebb params`, the shape and the analytic error rates of a
 * filter.
 *
 *   ebb params --window N --fp P [--max-npws F] [--max-accesses A]
 *              [BLOCKS] [--json]
 *   ebb params --k K --l L [--window N] [BLOCKS] [--json]
 *   ebb params --time-window DUR --rate R --fp P [--max-npws F] [--json]
 *   ebb params --stable (--memory SIZE --fp P | --cells M --cell-bits d
 *              --k K --p P) [...] [--json]
 *   ebb params --timing --window N (--bits-per-item X [--k K] |
 *              --memory SIZE | --fp P) [--json]
 *   ebb params --spectral [--method M] [--distinct N] [--error E |
 *              --memory SIZE [--k K] [--counter-bits B]]
 *              [--storage S] [--json]
 *   BLOCKS: --blocked [--block-bits B] [--block-hashes b]
 *           | --layout ring|sliced
 *
 * The first form asks the library which (k, l) it would choose (for a
 * blocked filter with the default bounds on NPWS and accesses, as `ebb
 * dedup --blocked` does), the second sizes an explicit (k, l); --blocked
 * does both for the blocked variant (APBBF). The third describes the
 * time-limited filter of `ebb dedup --time-window` (params_time.c), the
 * fourth the stable filter of `ebb dedup --stable` (params_stable.c), the
 * fifth the timing filter of `ebb dedup --timing` and `ebb recent`
 * (params_timing.c), the sixth the counting filter of `ebb count`
 * (params_spectral.c). All
 * numbers come from the library's sizing and analytics functions; this
 * file only parses and prints.
 *
 * fp, npws and the access figures: for plain slices the worst case of the
 * design (the --fill model's ratios, geometric by default), the rate ebb
 * promises whatever the window; for blocked slices the figures of the
 * exact shape (ebb_apbf_shape_fp, ebb_apbf_shape_npws, and the accesses
 * on ebb_apbf_shape_ratios), since no fill ramp describes them.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common.h"
#include "params.h"
#include "subcommands.h"
#include "units.h"

#include <ebb/ebb.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PROGRAM PARAMS_PROGRAM

/* The window an explicit (k, l) is sized for when --window is not given. */
#define DEFAULT_KL_WINDOW UINT64_C(1000000)

/* getopt_long value of params' own option without a short form
 * character. */
enum { OPTION_FILL = CLI_OPTION_FIRST_OWN };

/* Everything `ebb params` reports about one shape. */
typedef struct params_report {
    ebb_apbf_params shape;
    size_t memory_bytes;
    double bits_per_item;  /* (k + l) * m / w; sliced: W * m / w         */
    double fp;             /* ebb_apbf_fp: the geometric worst case      */
    uint64_t slack;        /* k * g items beyond w may still be reported */
    double npws;
    double accesses_false; /* slice accesses of a query answering false */
    /* All three access figures, for the human output only: the window
     * figure costs O(k^2 l^2), seconds for the largest shapes. */
    ebb_apbf_accesses accesses;
    uint32_t padding_bits; /* the sliced layout's unused planes per cell */
    uint64_t padding_bytes;
} params_report;

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: ebb params --window N --fp P [--max-npws F] [--max-accesses A]\n"
            "                  [BLOCKS] [--json]\n"
            "       ebb params --k K --l L [--window N] [--fill MODEL] [--json]\n"
            "       ebb params --k K --l L [--window N] BLOCKS [--json]\n"
            "       ebb params --time-window DUR --rate R --fp P [--max-npws F]\n"
            "                  [--json]\n"
            "       ebb params --stable --memory SIZE --fp P [--cell-bits d]\n"
            "                  [STABLE OPTIONS] [--gap G]... [--json]\n"
            "       ebb params --stable --cells M --cell-bits d --k K --p P\n"
            "                  [STABLE OPTIONS] [--gap G]... [--json]\n"
            "       ebb params --timing --window N (--bits-per-item X [--k K]\n"
            "                  | --memory SIZE | --fp P) [--json]\n"
            "       ebb params --spectral [--method M] [--distinct N]\n"
            "                  [--error E | --memory SIZE [--k K]\n"
            "                  [--counter-bits B]] [--storage S] [--json]\n"
            "  BLOCKS: --blocked [--block-bits B] [--block-hashes b]\n"
            "          | --layout ring|sliced\n"
            "  STABLE OPTIONS: [--draw independent|consecutive]\n"
            "                  [--importance-classes 2 [--important-fraction F]]\n"
            "                  [--importance-classes levels]\n"
            "                  [--decrement uniform|weighted]\n"
            "\n"
            "Shows the filter ebb would build: k (slices written per item),\n"
            "l (generations in the window), slice bits, generation size,\n"
            "guaranteed window, memory, bits per window item, the analytic\n"
            "worst-case false-positive rate, the slack (items beyond the\n"
            "window that may still be reported), the peak NPWS and the\n"
            "expected slice (or block) accesses of a query that answers\n"
            "false, of one for an item of the window and of a false positive.\n"
            "With --time-window: the time-limited filter of 'ebb dedup\n"
            "--time-window' at a steady rate of R items per second. With\n"
            "--stable: the stable filter of 'ebb dedup --stable'. With\n"
            "--timing: the timing filter of 'ebb dedup --timing' and 'ebb\n"
            "recent'. With --spectral: the counting filter of 'ebb count'.\n"
            "\n"
            "Options:\n"
            "  --window N     items the filter must remember (positive\n"
            "                 integer, 1e6 notation accepted); with --k/--l\n"
            "                 the default is 1000000\n"
            "  --fp P         target false-positive rate, 0 < P < 1\n"
            "  --max-npws F   bound on the peak NPWS (> 0; default: none, %g\n"
            "                 for the blocked chooser)\n"
            "  --max-accesses A\n"
            "                 bound on the expected slice (block) reads of a\n"
            "                 query answering false (> 0; default: none, %g\n"
            "                 for the blocked chooser); a ring unless --layout\n"
            "                 sliced, where it bounds k\n"
            "  --k K          slices written per item (1..%u); with --stable:\n"
            "                 cells per key (1..%u)\n"
            "  --l L          generations in the window (1..%u)\n"
            "  --fill MODEL   fill ratios behind fp and accesses: geometric\n"
            "                 (default; what ebb sizes with) or linear (the\n"
            "                 paper's ramp, reproduces its Table 2); plain only\n"
            "  --blocked      the blocked variant (APBBF, the paper's Table 3):\n"
            "                 fp, npws and accesses of the exact shape\n"
            "  --block-bits B  bits per block, 64 or 512 (default %u);\n"
            "                 implies --blocked\n"
            "  --block-hashes b\n"
            "                 bits set per block, 1, 2, 4 or 8 (default: the\n"
            "                 chooser picks; %u with --k/--l); implies --blocked\n"
            "  --layout L     ring or sliced: m cells of 16 to 128 bits,\n"
            "                 k + l + 1 <= 128, a query loads k cells; shows\n"
            "                 the cell bits and the padding's memory. Default:\n"
            "                 as ebb dedup (--k/--l: the ring)\n"
            "  --time-window DUR\n"
            "                 a window of time: a number and a unit, ns, us,\n"
            "                 ms, s, m, h or d (500ms, 30s, 1.5h, 7d)\n"
            "  --rate R       items per second (> 0), with --time-window\n",
            EBB_APBF_BLOCKED_MAX_NPWS, EBB_APBF_BLOCKED_MAX_ACCESSES,
            EBB_APBF_MAX_K, EBB_STABLE_MAX_K, EBB_APBF_MAX_L,
            CLI_DEFAULT_BLOCK_BITS, CLI_DEFAULT_BLOCK_HASHES);
    fprintf(out,
            "  --stable       the stable filter of 'ebb dedup --stable': cells,\n"
            "                 bits per cell, K, P, memory, the stable zero\n"
            "                 fraction, the stable false-positive rate (fps)\n"
            "                 and the probability that a duplicate is missed\n"
            "                 at a few gaps (lines since its last occurrence)\n"
            "  --memory SIZE  bytes of cells, with k, M, G or T for powers of\n"
            "                 1024 (with --fp, the target fps)\n"
            "  --cells M      cells (1..2^40); with --cell-bits, --k and --p\n"
            "                 an explicit shape\n"
            "  --cell-bits d  bits per cell, 1..%u (default 3)\n"
            "  --p P          cells decremented per line (1..M)\n"
            "  --draw D       consecutive (default) or independent\n"
            "  --importance-classes C\n"
            "                 an importance-aware filter: levels (one class per\n"
            "                 cell level, IBF-MC) or 2 (important or not,\n"
            "                 IBF-2C); false negatives are shown per class\n"
            "  --important-fraction F\n"
            "                 with --importance-classes 2: the share of\n"
            "                 important lines, 0..1 (default 0.5)\n"
            "  --decrement D  uniform (default) or weighted (IBF-H: low levels\n"
            "                 are decremented first); implies levels\n"
            "  --timing       the Block Timing Bloom filter of 'ebb dedup\n"
            "                 --timing' and 'ebb recent' for --window N: timers,\n"
            "                 k, timer bits, block, padding, T_Omega, timers\n"
            "                 swept per insertion, memory, bits per item and\n"
            "                 the analytic false-positive rate\n"
            "  --bits-per-item X\n"
            "                 the paper's sizing at X bits per window item\n"
            "                 (with --k K, 1..%u; default: the k of lowest\n"
            "                 rate); implies --timing. With --timing, --memory\n"
            "                 SIZE gives the lowest rate in SIZE bytes and --fp\n"
            "                 P the least memory for the rate P\n"
            "  --spectral     the Spectral Bloom filter of 'ebb count': method,\n"
            "                 counters, counter bits, k, memory, gamma and the\n"
            "                 expected Minimum Selection error ratio after\n"
            "                 --distinct N keys (default %" PRIu64 ")\n"
            "  --method M     with --spectral: ms (default), mi or rm\n"
            "  --distinct N   with --spectral: distinct keys counted\n"
            "  --error E      with --spectral: the least memory whose error\n"
            "                 ratio is at most E, 0 < E < 1 (default %g); or\n"
            "                 --memory SIZE for the most counters in SIZE\n"
            "                 bytes, with --k K (1..%u; default: the best for\n"
            "                 N) and --counter-bits B (1..%u, default %u)\n"
            "  --counter-bits B\n"
            "                 with --spectral --memory: bits per counter\n"
            "  --storage S    with --spectral: fixed (default), gamma, delta or\n"
            "                 steps (compact counters; memory bytes is then the\n"
            "                 empty filter's, which grows with the counts)\n"
            "  --gap G        a gap to show false negatives at (positive\n"
            "                 integer, up to %u times; default M/16, M/4, M\n"
            "                 and 4M)\n"
            "  --json         print one JSON object with the keys k, l,\n"
            "                 slice_bits, memory_bytes, bits_per_item, fp,\n"
            "                 slack, npws, accesses_false (the other figures\n"
            "                 are in the human output only); with\n"
            "                 --time-window the keys k, l, span_ns,\n"
            "                 generation_ns, items_per_generation, slice_bits,\n"
            "                 memory_bytes, bits_per_item, fp, slack_ns, npws;\n"
            "                 with --stable the keys variant, draw, cells,\n"
            "                 cell_bits, k, p, memory_bytes, zero_fraction,\n"
            "                 fps, mean_level and fn (an array of objects with\n"
            "                 class, level, gap, probability); with --timing\n"
            "                 the keys window, timers, k, timer_bits, block,\n"
            "                 padding, t_omega, sweep_per_add, memory_bytes,\n"
            "                 bits_per_item, fp; with --spectral the keys\n"
            "                 method, counters, counter_bits, k, secondary,\n"
            "                 secondary_k, marker, marker_size, memory_bytes,\n"
            "                 distinct, gamma, error_ratio\n"
            "  -h, --help     show this help\n",
            EBB_STABLE_MAX_CELL_BITS, EBB_TIMING_MAX_K,
            CLI_SPECTRAL_DEFAULT_DISTINCT, CLI_SPECTRAL_DEFAULT_ERROR,
            EBB_SPECTRAL_MAX_K, EBB_SPECTRAL_MAX_COUNTER_BITS,
            CLI_SPECTRAL_DEFAULT_COUNTER_BITS, PARAMS_MAX_GAPS);
}

static bool parse_bounded_u32(const char *text, uint32_t max, uint32_t *out)
{
    uint64_t value;
    if (cli_parse_positive_integer(text, &value) != CLI_NUMBER_OK ||
        value > max)
        return false;
    *out = (uint32_t)value;
    return true;
}

/* --k or --l: an integer from 1 to max. Returns -1 to go on, otherwise
 * the exit status. */
static int parse_kl(const char *option, const char *value, uint32_t max,
                    uint32_t *out, bool *given)
{
    if (!parse_bounded_u32(value, max, out)) {
        char requirement[64];
        snprintf(requirement, sizeof requirement,
                 "must be an integer from 1 to %" PRIu32, max);
        return cli_invalid_value(PROGRAM, option, value, requirement);
    }
    *given = true;
    return -1;
}

/* A cli_option_handler: returns -1 to go on, otherwise the exit status. */
static int parse_option(int option, const char *value, void *context)
{
    params_request *req = context;
    switch (option) {
    case 'k':
        /* Whose K it is depends on --stable, which may come later. */
        req->have_k = true;
        req->k_text = value;
        return -1;
    case 'l':
        return parse_kl("--l", value, EBB_APBF_MAX_L, &req->l, &req->have_l);
    case 'j':
        req->json = true;
        return -1;
    case OPTION_FILL:
        if (strcmp(value, "geometric") == 0)
            req->fill = EBB_FILL_GEOMETRIC;
        else if (strcmp(value, "linear") == 0)
            req->fill = EBB_FILL_LINEAR;
        else
            return cli_invalid_value(PROGRAM, "--fill", value,
                                     "must be geometric or linear");
        req->have_fill = true;
        return -1;
    case PARAMS_OPTION_IMPORTANT_FRACTION:
    case PARAMS_OPTION_GAP:
        return params_stable_option(option, value, req);
    case CLI_SPECTRAL_OPTION_SPECTRAL:
        req->spectral_requested = true;
        return -1;
    default:
        if (cli_is_spectral_option(option))
            return cli_apply_spectral_option(PROGRAM, option, value,
                                             &req->spectral);
        if (cli_is_stable_option(option))
            return cli_apply_stable_option(PROGRAM, option, value,
                                           &req->stable);
        if (cli_is_timing_option(option))
            return cli_apply_timing_option(PROGRAM, option, value,
                                           &req->timing);
        return cli_apply_sizing_option(PROGRAM, option, value, &req->sizing);
    }
}

/* The first option given that only `ebb params --stable` takes, or NULL. */
static const char *stable_option_given(const params_request *req)
{
    const char *option, *value;
    if (cli_stable_option_given(&req->stable, &option, &value))
        return option;
    if (req->have_important_fraction)
        return "--important-fraction";
    if (req->gap_count > 0)
        return "--gap";
    return NULL;
}

/* The first option given that only a count window takes, or NULL. */
static const char *count_option_given(const params_request *req)
{
    const struct {
        bool given;
        const char *name;
    } count_options[] = {
        {req->sizing.have_window, "--window"},
        {req->have_k, "--k"},
        {req->have_l, "--l"},
        {req->have_fill, "--fill"},
    };
    for (size_t i = 0; i < sizeof count_options / sizeof count_options[0]; i++)
        if (count_options[i].given)
            return count_options[i].name;
    return cli_blocked_option_given(&req->sizing);
}

/* Returns -1 to go on, otherwise the exit status. */
static int check_time_request(const params_request *req)
{
    const char *count_option = count_option_given(req);
    if (count_option != NULL) {
        cli_error(PROGRAM, "%s cannot be combined with --time-window",
                  count_option);
        return CLI_EXIT_USAGE;
    }
    if (!req->sizing.have_rate || !req->sizing.have_fp) {
        cli_error(PROGRAM, "give --time-window, --rate and --fp "
                           "(run 'ebb params --help')");
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* Returns -1 to go on, otherwise the exit status. */
static int check_count_request(const params_request *req)
{
    const cli_sizing_options *sizing = &req->sizing;
    if (sizing->have_rate) {
        cli_error(PROGRAM, "--rate requires --time-window");
        return CLI_EXIT_USAGE;
    }
    /* Blocked slices have no fill ramp: their figures come from the block
     * model of the exact shape. */
    if (sizing->blocked && req->have_fill) {
        cli_error(PROGRAM, "--fill cannot be combined with --blocked");
        return CLI_EXIT_USAGE;
    }
    if (cli_check_layout(PROGRAM, sizing) != CLI_CONTINUE)
        return CLI_EXIT_USAGE;
    bool explicit_kl = req->have_k || req->have_l;
    if (explicit_kl) {
        if (!req->have_k || !req->have_l) {
            cli_error(PROGRAM, "--k and --l must be given together");
            return CLI_EXIT_USAGE;
        }
        if (sizing->have_fp || sizing->have_max_npws ||
            sizing->have_max_accesses) {
            cli_error(PROGRAM, "--%s cannot be combined with --k and --l",
                      sizing->have_fp         ? "fp"
                      : sizing->have_max_npws ? "max-npws"
                                              : "max-accesses");
            return CLI_EXIT_USAGE;
        }
        return -1;
    }
    if (!sizing->have_window || !sizing->have_fp) {
        cli_error(PROGRAM, "give --window and --fp, or --k and --l "
                           "(run 'ebb params --help')");
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* Returns -1 to go on, otherwise the exit status. */
static int parse_command_line(int argc, char **argv, params_request *req)
{
    static const struct option options[] = {
        CLI_SIZING_LONG_OPTIONS,
        {"k", required_argument, NULL, 'k'},
        {"l", required_argument, NULL, 'l'},
        {"json", no_argument, NULL, 'j'},
        {"fill", required_argument, NULL, OPTION_FILL},
        CLI_STABLE_LONG_OPTIONS,
        CLI_TIMING_LONG_OPTIONS,
        {"spectral", no_argument, NULL, CLI_SPECTRAL_OPTION_SPECTRAL},
        CLI_SPECTRAL_LONG_OPTIONS,
        {"important-fraction", required_argument, NULL,
         PARAMS_OPTION_IMPORTANT_FRACTION},
        {"gap", required_argument, NULL, PARAMS_OPTION_GAP},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };

    req->sizing.block_bits = CLI_DEFAULT_BLOCK_BITS;
    cli_stable_defaults(&req->stable);
    cli_spectral_defaults(&req->spectral);
    int status = cli_parse_options(PROGRAM, argc, argv, options, print_usage,
                                   parse_option, req);
    if (status >= 0)
        return status;
    if (optind < argc)
        return cli_report_unexpected_operand(PROGRAM, argv[optind]);
    if (req->spectral_requested)
        return params_check_spectral_request(req);
    const char *spectral_option, *spectral_value;
    if (cli_spectral_option_given(&req->spectral, &spectral_option,
                                  &spectral_value)) {
        cli_error(PROGRAM, "%s requires --spectral", spectral_option);
        return CLI_EXIT_USAGE;
    }
    if (params_timing_requested(req))
        return params_check_timing_request(req);
    if (req->stable.stable) {
        req->stable.have_k = req->have_k;
        req->stable.k_text = req->k_text;
        req->have_k = false;
        return params_check_stable_request(req);
    }
    const char *stable_option = stable_option_given(req);
    if (stable_option != NULL) {
        cli_error(PROGRAM, "%s requires --stable", stable_option);
        return CLI_EXIT_USAGE;
    }
    if (req->have_k) {
        status = parse_kl("--k", req->k_text, EBB_APBF_MAX_K, &req->k,
                          &req->have_k);
        if (status >= 0)
            return status;
    }
    return req->sizing.have_time_window ? check_time_request(req)
                                        : check_count_request(req);
}

/* The chooser's goal: the options' bounds, or for a blocked shape the
 * defaults that keep it from collapsing to k = l = 1 (cli_sizing_goal). */
static ebb_apbf_goal request_goal(const params_request *req)
{
    const cli_sizing_options *s = &req->sizing;
    return cli_sizing_goal(s, s->window, s->blocked ? s->block_bits : 0,
                           s->blocked && s->have_block_hashes
                               ? s->block_hashes
                               : 0);
}

/* Returns -1 to go on, otherwise the exit status. */
static int choose_shape(const params_request *req, ebb_apbf_params *shape)
{
    ebb_status status;
    if (req->have_k) {
        uint64_t window = req->sizing.have_window ? req->sizing.window : DEFAULT_KL_WINDOW;
        uint32_t hashes = req->sizing.have_block_hashes ? req->sizing.block_hashes
                                                 : CLI_DEFAULT_BLOCK_HASHES;
        status = ebb_apbf_params_from_kl_blocked(
            req->k, req->l, window, req->sizing.blocked ? req->sizing.block_bits : 0,
            req->sizing.blocked ? hashes : 0, shape);
        if (status == EBB_OK)
            status = ebb_apbf_params_set_layout(
                shape, cli_explicit_layout(&req->sizing));
        if (status != EBB_OK) {
            cli_error(PROGRAM, "cannot size k=%" PRIu32 ", l=%" PRIu32
                      " for a window of %" PRIu64 ": %s",
                      req->k, req->l, window, ebb_strerror(status));
            return CLI_EXIT_USAGE;
        }
        return -1;
    }
    ebb_apbf_goal goal = request_goal(req);
    status = ebb_apbf_choose_goal(&goal, shape);
    if (status != EBB_OK) {
        /* The bounds in effect: the defaults too, for a blocked shape. */
        char npws[48] = "", accesses[48] = "";
        if (goal.max_npws > 0.0)
            snprintf(npws, sizeof npws, " --max-npws %g", goal.max_npws);
        if (goal.max_accesses > 0.0)
            snprintf(accesses, sizeof accesses, " --max-accesses %g",
                     goal.max_accesses);
        cli_error(PROGRAM, "cannot size a filter for --window %s --fp %s%s%s%s"
                  ": %s", req->sizing.window_text, req->sizing.fp_text, npws, accesses,
                  req->sizing.blocked                     ? " (blocked)"
                  : goal.layout == EBB_APBF_LAYOUT_SLICED ? " (sliced)"
                                                          : "",
                  ebb_strerror(status));
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* The match probabilities behind fp and the accesses: the fill model's
 * worst case for plain slices, the exact shape's for blocked ones. */
static ebb_status report_ratios(const ebb_apbf_params *shape,
                                ebb_fill_model fill, double *ratios)
{
    if (shape->block_bits != 0)
        return ebb_apbf_shape_ratios(shape, ratios);
    return ebb_apbf_worst_fill(shape->k, shape->l, fill, ratios);
}

/* Returns -1 to go on, otherwise the exit status. */
static int build_report(const ebb_apbf_params *shape, ebb_fill_model fill,
                        bool human, params_report *report)
{
    double ratios[EBB_APBF_MAX_K + EBB_APBF_MAX_L];
    report->shape = *shape;
    ebb_status status = ebb_apbf_params_memory(shape, &report->memory_bytes);
    if (status != EBB_OK) {
        cli_error(PROGRAM, "cannot compute the memory: %s",
                  ebb_strerror(status));
        return CLI_EXIT_USAGE;
    }
    bool sliced = shape->layout == EBB_APBF_LAYOUT_SLICED;
    uint32_t planes = sliced ? shape->cell_bits : shape->k + shape->l;
    report->bits_per_item = (double)planes * (double)shape->slice_bits /
                            (double)shape->window;
    status = ebb_apbf_layout_padding(shape, &report->padding_bits,
                                     &report->padding_bytes);
    if (status != EBB_OK) {
        cli_error(PROGRAM, "cannot compute the padding: %s",
                  ebb_strerror(status));
        return CLI_EXIT_USAGE;
    }
    status = report_ratios(shape, fill, ratios);
    if (status == EBB_OK && human)
        status = ebb_apbf_expected_accesses(shape->k, shape->l, ratios,
                                            &report->accesses);
    if (status != EBB_OK) {
        cli_error(PROGRAM, "cannot compute the fill ratios: %s",
                  ebb_strerror(status));
        return CLI_EXIT_USAGE;
    }
    report->fp = ebb_apbf_fp_ratios(shape->k, shape->l, ratios);
    report->slack = (uint64_t)shape->k * shape->generation;
    report->npws = shape->block_bits != 0
                       ? ebb_apbf_shape_npws(shape)
                       : ebb_apbf_npws(shape->k, shape->l);
    report->accesses_false =
        ebb_apbf_accesses_false_ratios(shape->k, shape->l, ratios);
    if (sliced) /* every query loads its k cells, whatever they hold */
        report->accesses_false = report->accesses.window_item =
            report->accesses.false_positive = (double)shape->k;

    /* Neither JSON nor a reader can do anything with NaN or infinity: a
     * non-finite value means the library refused the shape. */
    if (!isfinite(report->bits_per_item) || !isfinite(report->fp) ||
        !isfinite(report->npws) || !isfinite(report->accesses_false)) {
        cli_error(PROGRAM, "the library gave a non-finite rate for k=%" PRIu32
                  ", l=%" PRIu32, shape->k, shape->l);
        return CLI_EXIT_IO;
    }
    return -1;
}

static void print_json(const params_report *r)
{
    printf("{\"k\": %" PRIu32 ", \"l\": %" PRIu32 ", \"slice_bits\": %" PRIu64
           ", \"memory_bytes\": %zu, \"bits_per_item\": %.10g, \"fp\": %.10g"
           ", \"slack\": %" PRIu64 ", \"npws\": %.10g"
           ", \"accesses_false\": %.10g}\n",
           r->shape.k, r->shape.l, r->shape.slice_bits, r->memory_bytes,
           r->bits_per_item, r->fp, r->slack, r->npws, r->accesses_false);
}

/* The human-only access figures: the library gives NaN for a false
 * positive whose probability is 0 in double precision (k = 64, l = 1024),
 * which says "not applicable" rather than "failed". */
static void print_human_figure(const char *label, double value)
{
    if (isfinite(value))
        printf("%s%.10g\n", label, value);
    else
        printf("%sn/a\n", label);
}

static void print_human(const params_report *r)
{
    printf("k:               %" PRIu32 "\n", r->shape.k);
    printf("l:               %" PRIu32 "\n", r->shape.l);
    printf("slice bits:      %" PRIu64 "\n", r->shape.slice_bits);
    printf("generation:      %" PRIu64 "\n", r->shape.generation);
    printf("window:          %" PRIu64 "\n", r->shape.window);
    printf("memory bytes:    %zu\n", r->memory_bytes);
    printf("bits per item:   %.10g\n", r->bits_per_item);
    printf("fp:              %.10g\n", r->fp);
    printf("slack:           %" PRIu64 "\n", r->slack);
    printf("npws:            %.10g\n", r->npws);
    printf("accesses false:  %.10g\n", r->accesses_false);
    print_human_figure("accesses window: ", r->accesses.window_item);
    print_human_figure("accesses fp:     ", r->accesses.false_positive);
    if (r->shape.block_bits != 0) {
        printf("block bits:      %" PRIu32 "\n", r->shape.block_bits);
        printf("block hashes:    %" PRIu32 "\n", r->shape.block_hashes);
    }
    /* Like the block lines, for the bit-sliced layout only. */
    if (r->shape.layout == EBB_APBF_LAYOUT_SLICED) {
        printf("layout:          sliced\n");
        printf("cell bits:       %" PRIu32 "\n", r->shape.cell_bits);
        printf("padding bits:    %" PRIu32 "\n", r->padding_bits);
        printf("padding bytes:   %" PRIu64 "\n", r->padding_bytes);
    }
}

int ebb_cli_params(int argc, char **argv)
{
    params_request req;
    memset(&req, 0, sizeof req);
    int status = parse_command_line(argc, argv, &req);
    if (status >= 0)
        return status;
    if (req.spectral_requested)
        return params_spectral(&req);
    if (params_timing_requested(&req))
        return params_timing(&req);
    if (req.stable.stable)
        return params_stable(&req);
    if (req.sizing.have_time_window)
        return params_time_window(&req);

    ebb_apbf_params shape;
    status = choose_shape(&req, &shape);
    if (status >= 0)
        return status;
    params_report report;
    status = build_report(&shape, req.fill, !req.json, &report);
    if (status >= 0)
        return status;

    if (req.json)
        print_json(&report);
    else
        print_human(&report);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(PROGRAM, "write error: %s", strerror(errno));
        return CLI_EXIT_IO;
    }
    return CLI_EXIT_OK;
}
