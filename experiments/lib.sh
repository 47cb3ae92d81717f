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
