#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# manpage.sh EBB MANPAGE WORK_DIR
#
# The manual page (man/ebb.1) documents exactly the options that `--help`
# shows, for the top level and for every command; it renders without a
# warning (groff -ww) and with a valid NAME line (lexgrog); and its .TH
# version is the one `ebb --version` prints.
#
# The rules, kept simple so that a new option or command is caught without
# touching this script:
#
#  - An option word is "--" then a lowercase letter and more lowercase
#    letters, digits or "-" (--window, --max-npws), or "-" and one letter
#    (-h), standing alone: not preceded by a letter, digit, "_" or "-", and a
#    short one not followed by one ("time-limited", "1e-3" are not options).
#  - The commands are the first words of the lines that follow "Commands:" in
#    `ebb --help`, up to the next blank line.
#  - The options of a --help text are all its option words, wherever they
#    appear (usage lines, option list, prose). For `ebb --help` the command
#    list is left out: its summaries may name a command's options. (So a help
#    text must not name another command's option that it lacks itself.)
#  - The options of the page are the option words of the .TP items whose tag
#    (the line after .TP, with its macro name, quotes and roff escapes removed:
#    `.BI \-\-window " N"` is "--window N") starts with "-". The top level's
#    are those under ".SH OPTIONS", a command's those under ".SS ebb <command>",
#    each up to the next .SH or .SS.
#  - For the top level and each command the two sets must be equal; every
#    difference is reported with the command and the option. A ".SS ebb X"
#    for a command that `ebb --help` does not list fails too.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

EBB=$(absolute_path "$1")
PAGE=$(absolute_path "$2")
WORK=$(absolute_path "$3")
fresh_dir "$WORK"

# option_words: the option words of standard input, one per line, sorted and
# without repeats.
option_words() {
    perl -ne 'print "$1\n" while
        /(?<![A-Za-z0-9_-])(--[a-z][a-z0-9-]*|-[A-Za-z](?![A-Za-z0-9_-]))/g' |
        LC_ALL=C sort -u
}

# page_tags: for each .TP tag of the page whose first word starts with "-",
# one line "<section><TAB><tag>", the section being "ebb" under .SH OPTIONS,
# the command under ".SS ebb <command>". A line "<section><TAB>" marks where
# each such section starts, so an empty one is still seen.
page_tags() {
    perl -ne '
        sub plain {
            my ($text) = @_;
            $text =~ s/^\.[A-Za-z]+[ \t]*//;        # the macro name
            $text =~ s/\\f(\[[^]]*\]|\(..|.)//g;    # font changes
            $text =~ s/\\-/-/g;                     # \- is a minus sign
            $text =~ s/\\[&c]//g;                   # zero-width, \c
            $text =~ s/\\e/\\/g;
            $text =~ s/"//g;
            $text =~ s/^\s+|\s+$//g;
            return $text;
        }
        chomp;
        next if /^\.\\"/;                           # comments
        if (/^\.SH\b/) {
            $section = plain($_) eq "OPTIONS" ? "ebb" : "";
            print "$section\t\n" if $section ne "";
        } elsif (/^\.SS\b/) {
            my $title = plain($_);
            $section = $title =~ /^ebb\s+(\S+)/ ? $1 : "";
            print "$section\t\n" if $section ne "";
        } elsif (/^\.TP\b/) {
            $tag_next = 1;
        } elsif ($tag_next) {
            $tag_next = 0;
            my $tag = plain($_);
            print "$section\t$tag\n" if $section ne "" && $tag =~ /^-/;
        }' "$PAGE"
}

# help_commands: the commands listed by `ebb --help`.
help_commands() {
    awk '/^Commands:/ { listing = 1; next }
         listing && NF == 0 { exit }
         listing { print $1 }' "$WORK/top.help"
}

# compare_options <command label> <help options file> <page options file>
compare_options() {
    local label=$1 help=$2 page=$3 option
    checks=$((checks + 1))
    while IFS= read -r option; do
        fail "$label: $option is in --help but not in $PAGE"
    done < <(LC_ALL=C comm -23 "$help" "$page")
    while IFS= read -r option; do
        fail "$label: $option is in $PAGE but not in --help"
    done < <(LC_ALL=C comm -13 "$help" "$page")
}

# --- options -------------------------------------------------------------

check "ebb --help exits 0" "$EBB" --help >"$WORK/top.help"
help_commands >"$WORK/commands"
check "ebb --help lists commands after 'Commands:'" test -s "$WORK/commands"
page_tags >"$WORK/page.tags"
cut -f1 "$WORK/page.tags" | LC_ALL=C sort -u >"$WORK/page.sections"

# page_options <section>: the option words of that section's .TP tags.
page_options() {
    awk -F '\t' -v section="$1" '$1 == section { print $2 }' \
        "$WORK/page.tags" | option_words
}

check "$PAGE has a .SH OPTIONS with the top level's options" \
    grep -qx ebb "$WORK/page.sections"
awk '/^Commands:/ { listing = 1; next }
     listing && NF == 0 { listing = 0 }
     !listing' "$WORK/top.help" | option_words >"$WORK/top.help.options"
page_options ebb >"$WORK/top.page.options"
check "ebb --help names options" test -s "$WORK/top.help.options"
compare_options "ebb" "$WORK/top.help.options" "$WORK/top.page.options"

while IFS= read -r command; do
    if ! check "ebb $command --help exits 0" \
        "$EBB" "$command" --help >"$WORK/$command.help"; then
        continue
    fi
    if ! check "ebb $command: $PAGE has a section '.SS ebb $command'" \
        grep -qx "$command" "$WORK/page.sections"; then
        continue
    fi
    option_words <"$WORK/$command.help" >"$WORK/$command.help.options"
    page_options "$command" >"$WORK/$command.page.options"
    check "ebb $command --help names options" \
        test -s "$WORK/$command.help.options"
    compare_options "ebb $command" "$WORK/$command.help.options" \
        "$WORK/$command.page.options"
done <"$WORK/commands"

# A section for a command that no longer exists.
while IFS= read -r section; do
    [ "$section" = ebb ] && continue
    check "$PAGE: '.SS ebb $section' is a command of 'ebb --help'" \
        grep -qx "$section" "$WORK/commands"
done <"$WORK/page.sections"

# --- rendering -----------------------------------------------------------

# groff -ww enables every warning; -z renders without output. Any line on
# stderr is a defect of the page.
if check "groff is installed (Debian package groff-base)" \
    command -v groff >/dev/null; then
    groff -man -Tutf8 -ww -z "$PAGE" 2>"$WORK/groff.err"
    check "groff -man -ww renders $PAGE (exit $?)" test $? -eq 0
    check "groff -man -ww: no warning on $PAGE" test ! -s "$WORK/groff.err" ||
        cat "$WORK/groff.err" >&2
fi

# lexgrog reads the NAME section as mandb and lintian do: "ebb \- summary".
if check "lexgrog is installed (Debian package man-db)" \
    command -v lexgrog >/dev/null; then
    lexgrog "$PAGE" >"$WORK/lexgrog.out" 2>&1
    check "lexgrog parses the NAME line of $PAGE" test $? -eq 0 ||
        cat "$WORK/lexgrog.out" >&2
    check "lexgrog: the whatis entry is 'ebb - ...'" \
        grep -q ': "ebb - [^"]' "$WORK/lexgrog.out"
fi

# --- version -------------------------------------------------------------

# .TH EBB 1 <date> "ebb <version>" "User Commands": the fourth argument is
# what `ebb --version` prints. th[0] is ".TH" itself.
th_source=$(perl -ne 'if (/^\.TH\s/) {
        my @args; push @args, defined $1 ? $1 : $2
            while /\G\s*(?:"([^"]*)"|([^\s"]+))/gc;
        print join("\n", @args), "\n"; last }' "$PAGE")
mapfile -t th <<<"$th_source"
check "$PAGE: .TH names EBB section 1" equals "${th[1]-} ${th[2]-}" "EBB 1"
version=$("$EBB" --version)
check "ebb --version exits 0" test $? -eq 0
check "$PAGE: .TH version '${th[4]-}' is ebb --version's" \
    equals "${th[4]-}" "$version"

finish
