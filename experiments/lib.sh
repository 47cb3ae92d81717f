# SPDX-License-Identifier: BSD-2-Clause
# experiments/lib.sh: what the experiment drivers (experiments/run.sh,
# experiments/tlbf/run.sh) share. Sourced, not run.
#
# Check files hold one verdict per line: "PASS|FAIL KIND what was compared".

# write_summary OUT KINDS CHECK_FILE...
#   Writes the summary table of a results page into OUT. KINDS is a file of
#   "kind<TAB>description" lines, in table order. A guarantee whose line
#   names an "issue bar:" counts under the kind "bar" when KINDS has one.
write_summary() {
    local out=$1 kinds=$2
    shift 2
    awk -F '\t' -v kinds_file="$kinds" '
        BEGIN {
            while ((getline line < kinds_file) > 0) {
                split(line, part, "\t")
                order[++count] = part[1]
                names[part[1]] = part[2]
            }
        }
        {
            split($0, word, " ")
            kind = word[2]
            if (kind == "guarantee" && ("bar" in names) && index($0, "issue bar:") > 0)
                kind = "bar"
            verdict[kind " " word[1]]++
            if (word[1] == "FAIL") failures[++n] = $0
        }
        END {
            print "| checks | passed | failed |"
            print "|---|---|---|"
            for (i = 1; i <= count; i++) {
                k = order[i]
                printf "| %s | %d | %d |\n", names[k], verdict[k " PASS"], verdict[k " FAIL"]
            }
            print ""
            if (n == 0) {
                print "Every check passed."
            } else {
                print "Failed checks (each line says what was compared with what):"
                print ""
                for (i = 1; i <= n; i++) print "- `" failures[i] "`"
            }
        }' "$@" >"$out"
}

# any_fatal_failure CHECK_FILE...: true when a check of a fatal kind
# (paper, discrepancy, guarantee) failed, even if its program forgot to say
# so in its exit status.
any_fatal_failure() {
    grep -qE '^FAIL (paper|discrepancy|guarantee) ' "$@"
}

# fill_template TEMPLATE PAGE WORK_DIR SEED WHO
#   Writes PAGE from TEMPLATE: "@@fragment NAME@@" lines become the contents
#   of WORK_DIR/NAME.md, "@@seed@@" becomes SEED. WHO names the caller in
#   errors.
fill_template() {
    local template=$1 page=$2 work=$3 seed=$4 who=$5
    awk -v work="$work" -v seed="$seed" -v who="$who" '
        /^@@fragment [a-z0-9_]+@@$/ {
            name = $2
            sub(/@@$/, "", name)
            file = work "/" name ".md"
            got = (getline line < file)
            if (got < 0) { print who ": missing fragment " file > "/dev/stderr"; exit 2 }
            while (got > 0) { print line; got = (getline line < file) }
            close(file)
            next
        }
        { gsub(/@@seed@@/, seed); print }
    ' "$template" >"$page.tmp"
    mv "$page.tmp" "$page"
}

# family_paths FAMILY ARGS...: the prologue of experiments/FAMILY/run.sh.
#   ARGS must be one build directory (exit 2 otherwise). Sets build_dir,
#   here (experiments/FAMILY), root, bin_dir, work_dir, page, out_dir,
#   template, plots and seed (EBB_EXPERIMENT_SEED, default 1), then checks
#   the tools.
family_paths() {
    local family=$1
    shift
    if [[ $# -ne 1 ]]; then
        echo "usage: bash experiments/$family/run.sh <build-dir>" >&2
        exit 2
    fi
    [[ -d $1 ]] || { echo "$family/run.sh: no build directory '$1'" >&2; exit 2; }
    build_dir=$(cd "$1" && pwd)
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")/$family" && pwd)
    root=$(cd "$here/../.." && pwd)
    bin_dir=$build_dir/experiments/$family
    work_dir=$bin_dir/work
    page=$root/docs/results/$family.md
    out_dir=$root/docs/results/$family
    template=$here/$family.md.in
    plots=$here/plots
    seed=${EBB_EXPERIMENT_SEED:-1}
    check_tools "$family/run.sh" "$seed"
}

# check_tools WHO SEED: the seed is a decimal integer and gnuplot is there;
# exits 2 otherwise.
check_tools() {
    local who=$1 seed=$2
    [[ $seed =~ ^[0-9]+$ ]] || {
        echo "$who: EBB_EXPERIMENT_SEED must be a decimal integer" >&2
        exit 2
    }
    command -v gnuplot >/dev/null || {
        echo "$who: gnuplot not found (Debian: apt-get install gnuplot-nox)" >&2
        exit 2
    }
}

# check_built WHO BUILD PREFIX NAME...: every $bin_dir/PREFIXNAME exists;
# exits 2 otherwise.
check_built() {
    local who=$1 build=$2 prefix=$3 name
    shift 3
    for name in "$@"; do
        [[ -x $bin_dir/$prefix$name ]] || {
            echo "$who: $bin_dir/$prefix$name is missing: build first (cmake --build $build)" >&2
            exit 2
        }
    done
}

# run_lane PREFIX NAME...: runs $bin_dir/PREFIXNAME one after the other
# with ($out_dir, $work_dir, $seed); each exit status goes to
# $work_dir/NAME.status (0 fine, 1 a fatal check failed, 2 an error).
run_lane() {
    local prefix=$1 name status
    shift
    for name in "$@"; do
        local t0=$SECONDS
        status=0
        "$bin_dir/$prefix$name" "$out_dir" "$work_dir" "$seed" \
            >"$work_dir/$name.log" 2>&1 || status=$?
        echo "$status" >"$work_dir/$name.status"
        echo "  $prefix$name: exit $status, $((SECONDS - t0)) s"
    done
}

# run_two_lanes WHO PREFIX "LANE A NAMES" "LANE B NAMES": runs the two lanes
# at once, one per core, then exits 2 (with the log) when a program failed
# with an error, and sets fatal=1 when one only reported a fatal check.
run_two_lanes() {
    local who=$1 prefix=$2 name status pid_a pid_b
    local -a lane_a lane_b
    read -r -a lane_a <<<"$3"
    read -r -a lane_b <<<"$4"
    run_lane "$prefix" "${lane_a[@]}" &
    pid_a=$!
    run_lane "$prefix" "${lane_b[@]}" &
    pid_b=$!
    wait "$pid_a"
    wait "$pid_b"
    fatal=0
    for name in "${lane_a[@]}" "${lane_b[@]}"; do
        status=$(cat "$work_dir/$name.status")
        if [[ $status -ge 2 ]]; then
            echo "$who: $prefix$name failed:" >&2
            cat "$work_dir/$name.log" >&2
            exit 2
        fi
        [[ $status -eq 0 ]] || fatal=1
    done
}

# start_family FAMILY PREFIX "LANE A NAMES" "LANE B NAMES": after
# family_paths, a fresh work directory, started=$SECONDS, then the two lanes
# (run_two_lanes, which sets fatal).
start_family() {
    local family=$1 prefix=$2
    rm -rf "$work_dir"
    mkdir -p "$work_dir" "$out_dir"
    started=$SECONDS
    echo "$family experiments: seed $seed, outputs in ${out_dir#"$root"/}"
    run_two_lanes "$family/run.sh" "$prefix" "$3" "$4"
}

# finish_family FAMILY WHAT SUMMARY KINDS CHECK_FILE...: the summary table
# into SUMMARY (write_summary), the page from the template, the summary on
# stdout; then exits 1, saying "WHAT failed", when a check of a fatal kind
# failed or fatal is already 1.
finish_family() {
    local family=$1 what=$2 summary=$3 kinds=$4
    shift 4
    write_summary "$summary" "$kinds" "$@"
    if any_fatal_failure "$@"; then
        fatal=1
    fi
    fill_template "$template" "$page" "$work_dir" "$seed" "$family/run.sh"
    echo
    cat "$summary"
    echo
    echo "$family experiments: wrote ${page#"$root"/} and ${out_dir#"$root"/}/ in $((SECONDS - started)) s"
    if [[ $fatal -ne 0 ]]; then
        echo "$family/run.sh: $what failed (see above)" >&2
        exit 1
    fi
}
