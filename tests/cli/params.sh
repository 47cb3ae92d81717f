#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# params.sh EBB WORK_DIR
#
# ebb params: the JSON object has exactly the nine documented keys with
# numbers of the right kind; the numbers obey the identities that define
# them; fp matches an independent computation (awk) of the worst-case
# false-positive rate; the human and JSON forms agree; and ebb dedup builds
# the filter ebb params describes. The same for the blocked variant
# (--blocked), which must reproduce the paper's Tables 3 and 4; plain
# output keeps its nine JSON keys and its values.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
WORK=$(absolute_path "$2")
fresh_dir "$WORK"

# json_value <file> <key>: the value of "key" in the one-line JSON object.
json_value() {
    awk -v key="\"$2\"" '{
        body = $0; sub(/^\{/, "", body); sub(/\}$/, "", body)
        n = split(body, pairs, ", ")
        for (i = 1; i <= n; i++) {
            split(pairs[i], kv, ": ")
            if (kv[1] == key) { print kv[2]; found = 1 }
        }
    } END { if (!found) exit 1 }' "$1"
}

# json_keys_ok <file> <integer keys> <real keys>: one line, one object, each
# key exactly once, integers where the value counts something, JSON reals
# elsewhere, no other key.
json_keys_ok() {
    awk -v ints_list="$2" -v reals_list="$3" '
    BEGIN {
        split(ints_list, ints, " ")
        for (i in ints) kind["\"" ints[i] "\""] = "int"
        split(reals_list, reals, " ")
        for (i in reals) kind["\"" reals[i] "\""] = "real"
        ok = 1
    }
    NR > 1 { print "more than one line"; ok = 0 }
    NR == 1 {
        if ($0 !~ /^\{.*\}$/) { print "not one object"; ok = 0 }
        body = $0; sub(/^\{/, "", body); sub(/\}$/, "", body)
        n = split(body, pairs, ", ")
        for (i = 1; i <= n; i++) {
            if (split(pairs[i], kv, ": ") != 2) {
                print "malformed pair " pairs[i]; ok = 0; continue
            }
            if (!(kv[1] in kind)) { print "unexpected key " kv[1]; ok = 0 }
            else if (seen[kv[1]]++) { print "repeated key " kv[1]; ok = 0 }
            else if (kind[kv[1]] == "int" && kv[2] !~ /^(0|[1-9][0-9]*)$/) {
                print "not an integer: " pairs[i]; ok = 0
            } else if (kind[kv[1]] == "real" &&
                       kv[2] !~ /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/) {
                print "not a JSON number: " pairs[i]; ok = 0
            }
        }
    }
    END {
        for (key in kind) if (!(key in seen)) { print "missing " key; ok = 0 }
        exit !ok
    }' "$1" >&2
}

# json_shape_ok <file>: the nine keys of a count window.
json_shape_ok() {
    json_keys_ok "$1" "k l slice_bits memory_bytes slack" \
        "bits_per_item fp npws accesses_false"
}

# The worst-case false-positive rate, computed here independently: slice i
# (newest first) is filled r_i = 1 - 2^(-(i+1)/k) for i < k, 1/2 after;
# a false positive is k consecutive matching slices among the k + l. The
# recurrence tracks the length of the current run of matches.
awk_fp() {
    awk -v k="$1" -v l="$2" 'BEGIN {
        for (j = 0; j < k; j++) p[j] = 0
        p[0] = 1; hit = 0
        for (i = 0; i < k + l; i++) {
            r = i < k ? 1 - 2 ^ (-(i + 1) / k) : 0.5
            for (j = 0; j < k; j++) q[j] = 0
            for (j = 0; j < k; j++) {
                q[0] += p[j] * (1 - r)
                if (j + 1 == k) hit += p[j] * r; else q[j + 1] += p[j] * r
            }
            for (j = 0; j < k; j++) p[j] = q[j]
        }
        printf "%.17g\n", hit
    }'
}

# close_to <a> <b> <relative tolerance>
close_to() {
    if ! awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {
        d = a - b; if (d < 0) d = -d
        m = b < 0 ? -b : b
        exit !(d <= t * m || d <= 1e-300) }'; then
        echo "  $1 is not within $3 (relative) of $2" >&2
        return 1
    fi
}

# at_most <a> <b>: a <= b as numbers.
at_most() {
    if ! awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; then
        echo "  $1 > $2" >&2
        return 1
    fi
}

# human_value <file> <name>: the value of "name: value" (aligned).
human_value() {
    awk -v name="$2" 'index($0, name ":") == 1 {
        v = substr($0, length(name) + 2); sub(/^ +/, "", v); print v
        found = 1 } END { if (!found) exit 1 }' "$1"
}

# params_both <name> <ebb params arguments...>: runs `ebb params` with and
# without --json, checks both exit 0, and leaves the outputs in
# $WORK/<name>.json and $WORK/<name>.txt.
params_both() {
    local name=$1
    shift
    run_capture "$WORK/$name-json" /dev/null "$EBB" params "$@" --json
    check "$name: --json exit 0 (got $status)" equals "$status" 0
    cp "$WORK/$name-json.out" "$WORK/$name.json"
    run_capture "$WORK/$name-human" /dev/null "$EBB" params "$@"
    check "$name: human exit 0 (got $status)" equals "$status" 0
    cp "$WORK/$name-human.out" "$WORK/$name.txt"
}

# check_shape <name> <ebb params arguments...>: runs both forms and checks
# the JSON shape, the identities, fp against awk, and human == JSON.
check_shape() {
    local name=$1
    shift
    local json="$WORK/$name.json" human="$WORK/$name.txt"
    params_both "$name" "$@"
    check "$name: JSON has exactly the nine keys" json_shape_ok "$json"

    local k l m g w mem bpi fp slack npws acc
    k=$(json_value "$json" k); l=$(json_value "$json" l)
    m=$(json_value "$json" slice_bits); mem=$(json_value "$json" memory_bytes)
    bpi=$(json_value "$json" bits_per_item); fp=$(json_value "$json" fp)
    slack=$(json_value "$json" slack); npws=$(json_value "$json" npws)
    acc=$(json_value "$json" accesses_false)
    g=$(human_value "$human" generation); w=$(human_value "$human" window)

    check "$name: window = l * generation" equals "$w" "$((l * g))"
    check "$name: slack = k * generation" equals "$slack" "$((k * g))"
    check "$name: generation <= m ln 2 / k (slices at most half full)" \
        awk -v g="$g" -v m="$m" -v k="$k" 'BEGIN { exit !(g <= m * log(2) / k) }'
    # Bits per slice position: k + l for the ring, the cell's W for the
    # bit-sliced layout (the human output's "cell bits" line).
    local per
    per=$(human_value "$human" 'cell bits' 2>/dev/null) || per=$((k + l))
    check "$name: bits per item = (k + l) m / window (W m / window sliced)" \
        close_to "$bpi" "$(awk -v p="$per" -v m="$m" -v w="$w" \
            'BEGIN { printf "%.17g", p * m / w }')" 1e-9
    check "$name: npws = sum_{i<k} 2^-i / l" \
        close_to "$npws" "$(awk -v k="$k" -v l="$l" \
            'BEGIN { for (i = 0; i < k; i++) s += 2 ^ -i; printf "%.17g", s / l }')" 1e-9
    check "$name: fp matches the independent computation" \
        close_to "$fp" "$(awk_fp "$k" "$l")" 1e-8
    check "$name: memory holds the (k + l) slices (m cells sliced)" \
        at_most "$(awk -v p="$per" -v m="$m" \
            'BEGIN { printf "%.0f", p * m / 8 }')" "$mem"
    check "$name: a false query reads between 1 and (l + 1) k slices" \
        awk -v a="$acc" -v k="$k" -v l="$l" 'BEGIN { exit !(a >= 1 && a <= (l + 1) * k) }'
    local field
    for field in k l fp npws slack; do
        check "$name: human $field equals JSON $field" \
            equals "$(human_value "$human" "$field")" "$(json_value "$json" "$field")"
    done
    check "$name: human slice bits equals JSON" \
        equals "$(human_value "$human" 'slice bits')" "$m"
    check "$name: human memory bytes equals JSON" \
        equals "$(human_value "$human" 'memory bytes')" "$mem"
    check "$name: human bits per item equals JSON" \
        equals "$(human_value "$human" 'bits per item')" "$bpi"
    check "$name: human accesses false equals JSON" \
        equals "$(human_value "$human" 'accesses false')" "$acc"
}

check_shape w1e6-fp01 --window 1e6 --fp 0.01
check_shape w1e6-fp001 --window 1000000 --fp 0.001
check_shape w1e6-npws --window 1e6 --fp 0.01 --max-npws 0.005
check_shape w1000-fp1 --window 1000 --fp 0.1
check_shape w1-fp5 --window 1 --fp 0.5
check_shape k1-l1 --k 1 --l 1
check_shape k2-l1 --k 2 --l 1
check_shape k4-l3 --k 4 --l 3
check_shape k4-l3-w100 --k 4 --l 3 --window 100
check_shape k64-l1024 --k 64 --l 1024 --window 1e5

# Chosen shapes meet their targets.
check "fp 0.01 is met" at_most "$(json_value "$WORK/w1e6-fp01.json" fp)" 0.01
check "fp 0.001 is met" at_most "$(json_value "$WORK/w1e6-fp001.json" fp)" 0.001
check "fp 0.1 is met" at_most "$(json_value "$WORK/w1000-fp1.json" fp)" 0.1
check "max-npws 0.005 is met" \
    at_most "$(json_value "$WORK/w1e6-npws.json" npws)" 0.005
check "window 1e6 is covered" \
    at_most 1000000 "$(human_value "$WORK/w1e6-fp01.txt" window)"
check "a lower fp costs memory" \
    at_most "$(json_value "$WORK/w1e6-fp01.json" memory_bytes)" \
        "$(($(json_value "$WORK/w1e6-fp001.json" memory_bytes) - 1))"

# Values known in closed form: (k, l) = (1, 1) has slices filled 1/2 and
# 1/2, so fp = 1 - (1/2)^2 = 3/4; (2, 1) has 1 - 2^-1/2, 1/2, 1/2.
check "fp(1, 1) = 0.75" equals "$(json_value "$WORK/k1-l1.json" fp)" 0.75
check "npws(1, 1) = 1" equals "$(json_value "$WORK/k1-l1.json" npws)" 1
check "fp(2, 1) = 0.3232233047" \
    equals "$(json_value "$WORK/k2-l1.json" fp)" 0.3232233047
check "npws(4, 3) = 0.625" equals "$(json_value "$WORK/k4-l3.json" npws)" 0.625
check "k=4, l=3 without --window is sized for 1e6" \
    at_most 1000000 "$(human_value "$WORK/k4-l3.txt" window)"
check "k=4, l=3 with --window 100 is sized for 100" \
    at_most 100 "$(human_value "$WORK/k4-l3-w100.txt" window)"

# Explicit (k, l) equal to the chosen ones give the chosen shape (an
# explicit shape is a ring unless --layout says otherwise; at 1e6 and 1%
# the default is the bit-sliced layout).
k=$(json_value "$WORK/w1e6-fp01.json" k)
l=$(json_value "$WORK/w1e6-fp01.json" l)
"$EBB" params --k "$k" --l "$l" --window 1e6 --layout sliced --json >"$WORK/explicit.json"
check "--k $k --l $l --window 1e6 --layout sliced equals --window 1e6 --fp 0.01" \
    same_file "$WORK/w1e6-fp01.json" "$WORK/explicit.json"
"$EBB" params --window 1e6 --fp 0.01 --layout ring --json >"$WORK/w1e6-ring.json"
rk=$(json_value "$WORK/w1e6-ring.json" k)
rl=$(json_value "$WORK/w1e6-ring.json" l)
"$EBB" params --k "$rk" --l "$rl" --window 1e6 --json >"$WORK/explicit-ring.json"
check "--k $rk --l $rl --window 1e6 equals --window 1e6 --fp 0.01 --layout ring" \
    same_file "$WORK/w1e6-ring.json" "$WORK/explicit-ring.json"

# ebb dedup builds exactly the filter ebb params describes.
"$EBB" dedup --window 1e6 --fp 0.01 --stats </dev/null 2>"$WORK/dedup.stats"
check "dedup k equals params k" \
    equals "$(stat_value "$WORK/dedup.stats" k)" "$k"
check "dedup l equals params l" \
    equals "$(stat_value "$WORK/dedup.stats" l)" "$l"
check "dedup window equals params window" \
    equals "$(stat_value "$WORK/dedup.stats" window)" \
        "$(human_value "$WORK/w1e6-fp01.txt" window)"
check "dedup memory equals params memory" \
    equals "$(stat_value "$WORK/dedup.stats" 'memory bytes')" \
        "$(json_value "$WORK/w1e6-fp01.json" memory_bytes)"
"$EBB" dedup --stats </dev/null 2>"$WORK/dedup-default.stats"
check "dedup defaults are --window 1e6 --fp 0.01" \
    equals "$(stat_value "$WORK/dedup-default.stats" 'memory bytes')" \
        "$(json_value "$WORK/w1e6-fp01.json" memory_bytes)"

# --fill linear reproduces the paper's Table 2; the default (geometric) is higher.
"$EBB" params --k 4 --l 3 --fill linear --json >"$WORK/k4-l3-linear.json"
check "--fill linear reproduces Table 2 for (4, 3)" \
    equals "$(json_value "$WORK/k4-l3-linear.json" fp)" 0.1005859375
check "--fill linear: accesses false of (4, 3) is the paper's 2.16" \
    equals "$(printf '%.2f' "$(json_value "$WORK/k4-l3-linear.json" accesses_false)")" 2.16
"$EBB" params --k 4 --l 3 --fill geometric --json >"$WORK/k4-l3-geometric.json"
check "--fill geometric is the default" \
    same_file "$WORK/k4-l3-geometric.json" "$WORK/k4-l3.json"
"$EBB" params --k 13 --l 23 --fill linear --json >"$WORK/k13-l23-linear.json"
check "(13, 23) under the paper's own formula is 0.000990, not its printed 0.000928" \
    equals "$(printf '%.6f' "$(json_value "$WORK/k13-l23-linear.json" fp)")" 0.000990

# The human output adds the other access figures; with --fill linear they
# are the paper's Table 2 (4.71 window, 4.38 fp for (4, 3)).
"$EBB" params --k 4 --l 3 --fill linear >"$WORK/k4-l3-linear.txt"
check "--fill linear: accesses window of (4, 3) is the paper's 4.71" \
    equals "$(printf '%.2f' "$(human_value "$WORK/k4-l3-linear.txt" 'accesses window')")" 4.71
check "--fill linear: accesses fp of (4, 3) is the paper's 4.38" \
    equals "$(printf '%.2f' "$(human_value "$WORK/k4-l3-linear.txt" 'accesses fp')")" 4.38
"$EBB" params --k 12 --l 14 --fill linear >"$WORK/k12-l14-linear.txt"
check "--fill linear: accesses window of (12, 14) is the paper's 13.11" \
    equals "$(printf '%.2f' "$(human_value "$WORK/k12-l14-linear.txt" 'accesses window')")" 13.11
check "--fill linear: accesses fp of (12, 14) is the paper's 12.75" \
    equals "$(printf '%.2f' "$(human_value "$WORK/k12-l14-linear.txt" 'accesses fp')")" 12.75
check "plain human output: no block lines" \
    test -z "$(grep '^block' "$WORK/w1e6-fp01.txt")"
check "plain human output: 13 lines (ring)" \
    equals "$(wc -l < <("$EBB" params --window 1e6 --fp 0.01 --layout ring))" 13
check "plain human output: 17 lines (sliced: layout, cell and padding lines)" \
    equals "$(wc -l <"$WORK/w1e6-fp01.txt")" 17
# A window item reads at least its k matching slices, a false positive too.
check "plain: accesses window >= k" \
    awk -v a="$(human_value "$WORK/w1e6-fp01.txt" 'accesses window')" \
        -v k="$(json_value "$WORK/w1e6-fp01.json" k)" 'BEGIN { exit !(a >= k) }'
check "plain: accesses fp >= k" \
    awk -v a="$(human_value "$WORK/w1e6-fp01.txt" 'accesses fp')" \
        -v k="$(json_value "$WORK/w1e6-fp01.json" k)" 'BEGIN { exit !(a >= k) }'

# --- Blocked (APBBF) -----------------------------------------------------

# check_blocked <name> <B> <b> <ebb params arguments...>: JSON keys, the
# identities of a blocked shape, human == JSON.
check_blocked() {
    local name=$1 B=$2 b=$3
    shift 3
    local json="$WORK/$name.json" human="$WORK/$name.txt"
    params_both "$name" "$@"
    check "$name: JSON has exactly the nine keys" json_shape_ok "$json"

    local k l m g w mem bpi slack
    k=$(json_value "$json" k); l=$(json_value "$json" l)
    m=$(json_value "$json" slice_bits); mem=$(json_value "$json" memory_bytes)
    bpi=$(json_value "$json" bits_per_item); slack=$(json_value "$json" slack)
    g=$(human_value "$human" generation); w=$(human_value "$human" window)
    check "$name: block bits $B" equals "$(human_value "$human" 'block bits')" "$B"
    check "$name: block hashes $b" \
        equals "$(human_value "$human" 'block hashes')" "$b"
    check "$name: 15 human lines" equals "$(wc -l <"$human")" 15
    check "$name: slices are whole blocks" equals "$((m % B))" 0
    check "$name: window = l * generation" equals "$w" "$((l * g))"
    check "$name: slack = k * generation" equals "$slack" "$((k * g))"
    # Blocked capacity: g <= n ln(1/2) / ln(1 - b/B) / k for n blocks.
    check "$name: generation within the blocked capacity" \
        awk -v g="$g" -v n="$((m / B))" -v k="$k" -v B="$B" -v b="$b" \
            'BEGIN { exit !(g <= n * log(0.5) / log(1 - b / B) / k) }'
    check "$name: bits per item = (k + l) m / window" \
        close_to "$bpi" "$(awk -v k="$k" -v l="$l" -v m="$m" -v w="$w" \
            'BEGIN { printf "%.17g", (k + l) * m / w }')" 1e-9
    check "$name: memory holds the (k + l) slices" \
        at_most "$(( (k + l) * m / 8 ))" "$mem"
    check "$name: a false query reads between 1 and (l + 1) k blocks" \
        awk -v a="$(json_value "$json" accesses_false)" -v k="$k" -v l="$l" \
            'BEGIN { exit !(a >= 1 && a <= (l + 1) * k) }'
    local field
    for field in k l fp npws slack; do
        check "$name: human $field equals JSON $field" \
            equals "$(human_value "$human" "$field")" "$(json_value "$json" "$field")"
    done
    check "$name: human accesses false equals JSON" \
        equals "$(human_value "$human" 'accesses false')" \
            "$(json_value "$json" accesses_false)"
    check "$name: human memory bytes equals JSON" \
        equals "$(human_value "$human" 'memory bytes')" "$mem"
}

# The paper's Table 3 (at the default window of 10^6): per (k, l, B, b) its
# fp, query accesses (window item, false positive, false) and peak NPWS.
# The exact shapes' fp differs from the printed design values by < 0.2%.
while read -r k l B b fp win afp afalse npws; do
    name="table3-$k-$l-$B-$b"
    # All the identities on a few rows; the table's figures on all of them.
    case "$k $l $B $b" in
    "2 3 64 4" | "2 5 512 4" | "3 8 512 8")
        check_blocked "$name" "$B" "$b" --k "$k" --l "$l" --block-bits "$B" \
            --block-hashes "$b" ;;
    *)
        "$EBB" params --k "$k" --l "$l" --block-bits "$B" --block-hashes "$b" \
            --json >"$WORK/$name.json"
        "$EBB" params --k "$k" --l "$l" --block-bits "$B" --block-hashes "$b" \
            >"$WORK/$name.txt" ;;
    esac
    check "$name: fp $fp (Table 3)" awk -v a="$(json_value "$WORK/$name.json" fp)" \
        -v p="$fp" 'BEGIN { d = a - p; if (d < 0) d = -d
                            exit !(d <= 0.002 * p + 5e-8) }'
    check "$name: accesses window $win" \
        equals "$(printf '%.2f' "$(human_value "$WORK/$name.txt" 'accesses window')")" "$win"
    check "$name: accesses fp $afp" \
        equals "$(printf '%.2f' "$(human_value "$WORK/$name.txt" 'accesses fp')")" "$afp"
    check "$name: accesses false $afalse" \
        equals "$(printf '%.2f' "$(json_value "$WORK/$name.json" accesses_false)")" "$afalse"
    check "$name: npws $npws" \
        equals "$(printf '%.2f' "$(json_value "$WORK/$name.json" npws)")" "$npws"
done <<'TABLE3'
2 3 64 4 0.0159865 3.30 2.72 2.25 0.36
2 3 512 4 0.0121825 3.31 2.71 2.23 0.35
2 5 64 4 0.0257532 3.80 3.28 3.37 0.21
2 5 512 4 0.0197654 3.81 3.26 3.33 0.21
3 5 64 4 0.0016005 4.40 3.85 2.29 0.22
3 5 512 4 0.0010688 4.40 3.83 2.26 0.21
3 8 64 4 0.0026767 4.92 4.41 3.43 0.13
3 8 512 4 0.0017993 4.92 4.39 3.38 0.13
2 3 64 8 0.0005608 3.33 2.70 2.05 0.34
2 3 512 8 0.0000738 3.33 2.68 2.02 0.33
2 5 64 8 0.0009231 3.80 3.23 3.08 0.20
2 5 512 8 0.0001226 3.80 3.21 3.03 0.20
3 5 64 8 0.0000104 4.40 3.82 2.05 0.20
3 5 512 8 0.0000005 4.40 3.78 2.02 0.20
3 8 64 8 0.0000178 4.88 4.35 3.08 0.13
3 8 512 8 0.0000009 4.88 4.32 3.03 0.13
TABLE3

# The paper's Table 4: bits per element of four of those (B = 512).
for row in "2 5 4 16.2" "3 8 4 23.9" "2 5 8 32.6" "3 8 8 48.0"; do
    set -- $row
    check "(k=$1, l=$2, B=512, b=$3) at window 1e6: $4 bits per item (Table 4)" \
        equals "$(printf '%.1f' "$(json_value "$WORK/table3-$1-$2-512-$3.json" bits_per_item)")" "$4"
done
# --blocked alone means 512-bit blocks with 8 bits each; --block-bits or
# --block-hashes alone imply --blocked.
"$EBB" params --k 2 --l 5 --blocked --json >"$WORK/blocked-default.json"
check "--blocked defaults to B = 512, b = 8" \
    same_file "$WORK/table3-2-5-512-8.json" "$WORK/blocked-default.json"
"$EBB" params --k 2 --l 5 --block-hashes 4 --json >"$WORK/blocked-implied.json"
check "--block-hashes implies --blocked (B = 512)" \
    same_file "$WORK/table3-2-5-512-4.json" "$WORK/blocked-implied.json"
"$EBB" params --k 2 --l 5 --block-bits 64 --json >"$WORK/blocked-implied64.json"
check "--block-bits implies --blocked (b = 8)" \
    same_file "$WORK/table3-2-5-64-8.json" "$WORK/blocked-implied64.json"
check "blocked and plain shapes differ" \
    test "$(json_value "$WORK/table3-2-5-512-8.json" slice_bits)" != \
        "$("$EBB" params --k 2 --l 5 --json | awk -F'"slice_bits": ' '{ split($2, a, ","); print a[1] }')"

# The chooser: the target is met by the shape's fp, the NPWS bound by its
# NPWS, and ebb dedup --blocked builds what ebb params --blocked describes.
# Without --max-npws / --max-accesses a blocked shape is chosen with
# NPWS <= 0.25 and at most 4 block reads per false query, and b is the
# chooser's unless --block-hashes is given.
"$EBB" params --window 1e6 --fp 0.01 --blocked >"$WORK/chosen-b.txt"
chosen_b=$(human_value "$WORK/chosen-b.txt" 'block hashes')
check "blocked chooser picks b = 1, 2, 4 or 8 (got $chosen_b)" \
    grep -Eqx '1|2|4|8' <<<"$chosen_b"
check_blocked chosen 512 "$chosen_b" --window 1e6 --fp 0.01 --blocked
check "blocked chooser: fp 0.01 is met" \
    at_most "$(json_value "$WORK/chosen.json" fp)" 0.01
check "blocked chooser: window 1e6 is covered" \
    at_most 1000000 "$(human_value "$WORK/chosen.txt" window)"
check "blocked defaults: npws <= 0.25" \
    at_most "$(json_value "$WORK/chosen.json" npws)" 0.25
check "blocked defaults: accesses false <= 4" \
    at_most "$(json_value "$WORK/chosen.json" accesses_false)" 4
check "blocked defaults: more than one slice written per item" \
    test "$(json_value "$WORK/chosen.json" k)" -gt 1
# Why the defaults: the least memory alone, with b = 8, is k = l = 1 (one
# slice written, one retired: the slack is the whole window, NPWS 1); with b
# free it reads 15 blocks per false query.
"$EBB" params --window 1e6 --fp 0.01 --blocked --block-hashes 8 \
    --max-npws 1e9 --max-accesses 1e9 --json >"$WORK/blocked-unbounded-8.json"
check "unbounded blocked (b = 8) collapses to k = 1" \
    equals "$(json_value "$WORK/blocked-unbounded-8.json" k)" 1
check "unbounded blocked (b = 8) collapses to l = 1" \
    equals "$(json_value "$WORK/blocked-unbounded-8.json" l)" 1
check "unbounded blocked (b = 8): slack = the whole window" \
    equals "$(json_value "$WORK/blocked-unbounded-8.json" slack)" 1000000
"$EBB" params --window 1e6 --fp 0.01 --blocked --max-npws 1e9 \
    --max-accesses 1e9 --json >"$WORK/blocked-unbounded.json"
check "unbounded blocked (b free) reads more than 4 blocks per false query" \
    at_most 4 "$(json_value "$WORK/blocked-unbounded.json" accesses_false)"
# Explicit bounds replace the defaults; --block-hashes fixes b.
"$EBB" params --window 1e6 --fp 0.01 --blocked --max-accesses 3 \
    --json >"$WORK/blocked-acc3.json"
check "--max-accesses 3: accesses false <= 3" \
    at_most "$(json_value "$WORK/blocked-acc3.json" accesses_false)" 3
check "--max-accesses 3: npws stays <= 0.25 (default kept)" \
    at_most "$(json_value "$WORK/blocked-acc3.json" npws)" 0.25
check "--max-accesses 3 costs memory" \
    at_most "$(json_value "$WORK/chosen.json" memory_bytes)" \
        "$(json_value "$WORK/blocked-acc3.json" memory_bytes)"
check_blocked chosen-b8 512 8 --window 1e6 --fp 0.01 --blocked --block-hashes 8
check "--block-hashes 8: npws <= 0.25" \
    at_most "$(json_value "$WORK/chosen-b8.json" npws)" 0.25
check "--block-hashes 8: accesses false <= 4" \
    at_most "$(json_value "$WORK/chosen-b8.json" accesses_false)" 4
check_blocked chosen-npws 64 4 --window 1e5 --fp 0.001 --max-npws 0.1 \
    --block-bits 64 --block-hashes 4
check "blocked chooser: fp 0.001 is met" \
    at_most "$(json_value "$WORK/chosen-npws.json" fp)" 0.001
check "blocked chooser: max-npws 0.1 is met" \
    at_most "$(json_value "$WORK/chosen-npws.json" npws)" 0.1
check "blocked chooser: default max-accesses 4 is met" \
    at_most "$(json_value "$WORK/chosen-npws.json" accesses_false)" 4
"$EBB" dedup --window 1e6 --fp 0.01 --blocked --stats </dev/null \
    2>"$WORK/dedup-blocked.stats"
for field in k l window 'block hashes'; do
    check "dedup --blocked $field equals params --blocked" \
        equals "$(stat_value "$WORK/dedup-blocked.stats" "$field")" \
            "$(human_value "$WORK/chosen.txt" "$field")"
done
check "dedup --blocked memory equals params --blocked" \
    equals "$(stat_value "$WORK/dedup-blocked.stats" 'memory bytes')" \
        "$(json_value "$WORK/chosen.json" memory_bytes)"

# --max-accesses bounds a plain shape too (default: none, so plain shapes
# are what they always were: w1e6-fp01 above is the unbounded one).
"$EBB" params --window 1e6 --fp 0.01 --max-accesses 5 --json \
    >"$WORK/plain-acc5.json"
check "plain --max-accesses 5: accesses false <= 5" \
    at_most "$(json_value "$WORK/plain-acc5.json" accesses_false)" 5
check "plain without --max-accesses reads more (the bound changed the shape)" \
    at_most 5 "$(json_value "$WORK/w1e6-fp01.json" accesses_false)"
check "plain --max-accesses 5: fp 0.01 still met" \
    at_most "$(json_value "$WORK/plain-acc5.json" fp)" 0.01
"$EBB" dedup --window 1e6 --fp 0.01 --max-accesses 5 --stats </dev/null \
    2>"$WORK/dedup-acc5.stats"
check "dedup --max-accesses 5 builds the shape params describes" \
    equals "$(stat_value "$WORK/dedup-acc5.stats" 'memory bytes')" \
        "$(json_value "$WORK/plain-acc5.json" memory_bytes)"

# --- The bit-sliced layout (--layout sliced) --------------------------------

# At fp 0.157 the 16-bit shape (5, 10) fills its cells: no padding, 16 bits
# per cell; (8, 8) needs 17 planes, so a 32-bit cell with 15 unused.
"$EBB" params --window 1e6 --fp 0.157 --layout sliced --json \
    >"$WORK/sliced.json"
"$EBB" params --window 1e6 --fp 0.157 --layout sliced >"$WORK/sliced.txt"
check "sliced: JSON keeps exactly the nine keys" json_shape_ok "$WORK/sliced.json"
check "sliced: (5, 10) in 16-bit cells" \
    equals "$(json_value "$WORK/sliced.json" k),$(json_value "$WORK/sliced.json" l),$(human_value "$WORK/sliced.txt" 'cell bits')" "5,10,16"
check "sliced: human output names the layout" \
    equals "$(human_value "$WORK/sliced.txt" layout)" sliced
check "sliced: no padding" \
    equals "$(human_value "$WORK/sliced.txt" 'padding bytes')" 0
check "sliced: bits per item = 16 m / w" \
    close_to "$(json_value "$WORK/sliced.json" bits_per_item)" \
        "$(awk -v m="$(json_value "$WORK/sliced.json" slice_bits)" 'BEGIN { printf "%.10g", 16 * m / 1e6 }')" 1e-9
check "sliced: a query loads k cells" \
    equals "$(json_value "$WORK/sliced.json" accesses_false)" 5
check "sliced: fp 0.157 met" at_most "$(json_value "$WORK/sliced.json" fp)" 0.157
"$EBB" params --k 8 --l 8 --layout sliced >"$WORK/sliced-8-8.txt"
check "sliced (8, 8): 32-bit cells" \
    equals "$(human_value "$WORK/sliced-8-8.txt" 'cell bits')" 32
check "sliced (8, 8): 15 padding bits per cell" \
    equals "$(human_value "$WORK/sliced-8-8.txt" 'padding bits')" 15
check "sliced (8, 8): padding bytes = ceil(15 m / 8)" \
    equals "$(human_value "$WORK/sliced-8-8.txt" 'padding bytes')" \
        "$(( (15 * $(human_value "$WORK/sliced-8-8.txt" 'slice bits') + 7) / 8 ))"
# The default layout (ebb_apbf_preferred_layout): sliced where its least
# memory is within 10% of the ring's (1e6 at 1%: 1.07x), the ring where it
# is not (w = 1000: 2x) and for shapes bounded by --max-npws.
no_layout_line() { ! human_value "$1" layout >/dev/null 2>&1; }
check "sliced is the default layout at 1e6 and 1%" \
    equals "$(human_value "$WORK/w1e6-fp01.txt" layout)" sliced
check "the ring at w = 1000 (the sliced cells cost 2x there)" \
    no_layout_line "$WORK/w1000-fp1.txt"
check "the ring for a shape bounded by --max-npws" \
    no_layout_line "$WORK/w1e6-npws.txt"
"$EBB" params --window 1e6 --fp 0.01 --max-accesses 20 >"$WORK/w1e6-acc.txt"
check "the ring for a shape bounded by --max-accesses" \
    no_layout_line "$WORK/w1e6-acc.txt"
check "an explicit --k/--l is a ring" no_layout_line "$WORK/k4-l3.txt"
"$EBB" dedup --window 1e6 --fp 0.157 --layout sliced --stats </dev/null \
    2>"$WORK/dedup-sliced.stats"
check "dedup --layout sliced builds the shape params describes" \
    equals "$(stat_value "$WORK/dedup-sliced.stats" 'memory bytes')" \
        "$(json_value "$WORK/sliced.json" memory_bytes)"
check "dedup --layout sliced: stats name the layout" \
    equals "$(stat_value "$WORK/dedup-sliced.stats" layout)" sliced
check "dedup --layout sliced: stats give the padding" \
    equals "$(stat_value "$WORK/dedup-sliced.stats" 'padding bytes')" 0
run_capture "$WORK/sliced-blocked" /dev/null \
    "$EBB" params --window 1e6 --fp 0.01 --layout sliced --blocked
check "sliced + blocked is a usage error (status 2)" equals "$status" 2
check "sliced + blocked says why" stderr_is "$WORK/sliced-blocked.err" \
    "ebb params: --layout sliced cannot be combined with --blocked (the bit-sliced layout holds plain slices)"
run_capture "$WORK/layout-bad" /dev/null \
    "$EBB" params --window 1e6 --fp 0.01 --layout bits
check "an unknown layout is a usage error (status 2)" equals "$status" 2
check "an unknown layout says what is allowed" stderr_is "$WORK/layout-bad.err" \
    "ebb params: invalid --layout 'bits': must be ring or sliced"

# --- Time windows (TLBF) -------------------------------------------------

# time_json_shape_ok <file>: the eleven keys of a time window.
time_json_shape_ok() {
    json_keys_ok "$1" \
        "k l span_ns generation_ns items_per_generation slice_bits memory_bytes slack_ns" \
        "bits_per_item fp npws"
}

# time_case <name> <span> <span ns> <rate> <fp> [more params options]
time_case() {
    local name=$1 span=$2 span_ns=$3 rate=$4 fp=$5
    shift 5
    local json="$WORK/$name.json" human="$WORK/$name.txt"
    params_both "$name" --time-window "$span" --rate "$rate" --fp "$fp" "$@"
    check "$name: JSON has exactly the eleven keys" time_json_shape_ok "$json"

    local k l gen g m mem bpi slack
    k=$(json_value "$json" k); l=$(json_value "$json" l)
    gen=$(json_value "$json" generation_ns); g=$(json_value "$json" items_per_generation)
    m=$(json_value "$json" slice_bits); mem=$(json_value "$json" memory_bytes)
    bpi=$(json_value "$json" bits_per_item); slack=$(json_value "$json" slack_ns)
    check "$name: span_ns = $span_ns" equals "$(json_value "$json" span_ns)" "$span_ns"
    check "$name: generation_ns = span / l" equals "$gen" "$((span_ns / l))"
    check "$name: slack_ns = floor(k span / l)" \
        equals "$slack" "$(( span_ns / l * k + span_ns % l * k / l ))"
    check "$name: items per generation = ceil(rate span / l)" \
        equals "$g" "$(awk -v r="$rate" -v s="$span_ns" -v l="$l" 'BEGIN {
            n = r * s / 1e9; n = (n == int(n)) ? n : int(n) + 1
            g = n / l; printf "%.0f", (g == int(g)) ? g : int(g) + 1 }')"
    check "$name: slice bits hold k g items at fill 1/2 (m ln 2 >= k g)" \
        awk -v m="$m" -v k="$k" -v g="$g" 'BEGIN { exit !(m * log(2) >= k * g && (m - 1) * log(2) < k * g) }'
    # The library's steady-state figure: (k + l) slices of m bits in words,
    # plus at most 1/64 of size-class rounding and a cache line per slice,
    # plus the handle and the ring of slice descriptors.
    local bits_bytes=$(( (k + l) * ((m + 63) / 64) * 8 ))
    check "$name: memory holds (k + l) slices of m bits ($mem >= $bits_bytes)" \
        [ "$mem" -ge "$bits_bytes" ]
    check "$name: memory adds only rounding, lines and descriptors" \
        [ "$mem" -le "$(( bits_bytes + bits_bytes / 64 + (k + l) * 64 + (k + l + 8) * 64 + 4096 ))" ]
    check "$name: bits per item = (k + l) m / (l g)" \
        close_to "$bpi" "$(awk -v k="$k" -v l="$l" -v m="$m" -v g="$g" \
            'BEGIN { printf "%.17g", (k + l) * m / (l * g) }')" 1e-9
    # (k, l) are the APBF ring chooser's at a window of 10^6 (docs/tlbf.md;
    # the TLBF's slices are a ring).
    "$EBB" params --window 1e6 --fp "$fp" "$@" --layout ring --json >"$WORK/$name.apbf.json"
    local field
    for field in k l fp npws; do
        check "$name: $field equals the APBF chooser's at 1e6" \
            equals "$(json_value "$json" "$field")" \
                "$(json_value "$WORK/$name.apbf.json" "$field")"
    done
    check "$name: human k equals JSON" equals "$(human_value "$human" k)" "$k"
    check "$name: human memory equals JSON" \
        equals "$(human_value "$human" 'memory bytes')" "$mem"
    check "$name: human items per generation equals JSON" \
        equals "$(human_value "$human" 'items per generation')" "$g"
    check "$name: 11 human lines" equals "$(wc -l <"$human")" 11
}
time_case t60s 60s 60000000000 1000 0.01
check "t60s: human span 60s" equals "$(human_value "$WORK/t60s.txt" span)" 60s
check "t60s: human generation is T / l in seconds" \
    equals "$(human_value "$WORK/t60s.txt" generation)" 0.689655172s
time_case t1h 1h 3600000000000 25000 0.001
time_case t500ms 500ms 500000000 1e6 0.0001 --max-npws 0.05
check "t500ms: max-npws 0.05 met" \
    at_most "$(json_value "$WORK/t500ms.json" npws)" 0.05
time_case t1-5h 1.5h 5400000000000 0.5 0.1
# ebb dedup --time-window builds the (k, l) params describes.
"$EBB" dedup --time-window 60s --rate 1000 --fp 0.01 --stats </dev/null \
    2>"$WORK/dedup-time.stats"
for field in k l; do
    check "dedup --time-window $field equals params --time-window" \
        equals "$(stat_value "$WORK/dedup-time.stats" "$field")" \
            "$(json_value "$WORK/t60s.json" "$field")"
done
check "dedup --time-window span 1m" \
    equals "$(stat_value "$WORK/dedup-time.stats" span)" 1m

finish
