#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# acl.sh: command metadata and read-only users (docs/redis.md "Commands,
# flags and ACL").
#
#   - COMMAND INFO: every command's arity, flags and key spec (RO access
#     for EXISTS, MEXISTS, INFO, SCANDUMP; RW insert for RESERVE; RW access
#     update for the adds; RW update for LOADCHUNK), begin_search index 1,
#     find_keys range 0 1 0, key positions 1 1 1;
#   - COMMAND GETKEYSANDFLAGS and COMMAND DOCS (summary, since) read the
#     same metadata back, so the structs handed to RedisModule_SetCommandInfo
#     have the server's layout;
#   - the server checks the arity before the module runs;
#   - the documented read-only recipes: a user with per-command rules, and a
#     user with read-only key permissions (%R~*), run EXISTS, MEXISTS, INFO
#     and SCANDUMP and are refused RESERVE, ADD, MADD, INSERT, ADDAT and
#     LOADCHUNK; on servers without module ACL categories (7.0) "+@all
#     -@write" alone does not stop the writes (the documented pitfall), on
#     servers with them it does.
#
#   bash acl.sh <ebb.so> <work directory>

source "$(dirname "$0")/lib.sh"

start_server main || exit 1
r() { rcli main "$@"; }

# as <user> <command...>: a command as that user (password "pw").
as() {
    local user=$1
    shift
    redis-cli -p "${SERVER_PORT[main]}" --no-auth-warning --user "$user" \
        --pass pw "$@" 2>&1
}

# ------------------------------------------------------------------------
# Metadata
# ------------------------------------------------------------------------

# command arity flags key-spec-flags
TABLE="
APBF.RESERVE -3 write,denyoom RW,insert
APBF.ADD -3 write,denyoom,fast RW,access,update
APBF.MADD -3 write,denyoom RW,access,update
APBF.INSERT -4 write,denyoom RW,access,update
APBF.EXISTS 3 readonly,fast RO,access
APBF.MEXISTS -3 readonly,fast RO,access
APBF.INFO 2 readonly,fast RO,access
APBF.SCANDUMP 3 readonly,denyoom RO,access
APBF.LOADCHUNK 4 write,denyoom RW,update
TLBF.RESERVE -3 write,denyoom RW,insert
TLBF.ADD -3 write,denyoom,fast RW,access,update
TLBF.MADD -3 write,denyoom RW,access,update
TLBF.ADDAT -4 write,denyoom RW,access,update
TLBF.INSERT -4 write,denyoom RW,access,update
TLBF.EXISTS 3 readonly,fast RO,access
TLBF.MEXISTS -3 readonly,fast RO,access
TLBF.INFO 2 readonly,fast RO,access
TLBF.SCANDUMP 3 readonly,denyoom RO,access
TLBF.LOADCHUNK 4 write,denyoom RW,update
"

# The reply of COMMAND INFO <command>, one word per line: name, arity,
# flags..., first key, last key, step, ACL categories..., tips..., then the
# key spec as "flags F... begin_search type index spec index 1 find_keys
# type range spec lastkey 0 keystep 1 limit 0".
while read -r command arity flags keyflags; do
    [ -n "$command" ] || continue
    info=$(r COMMAND INFO "$command" | paste -sd ' ')
    expect_match "$command: arity $arity, flags $flags, keys 1 1 1" \
        "^$command $arity ${flags//,/ } module( fast)? 1 1 1 " \
        "$(r COMMAND INFO "$command" | paste -sd ' ' | sed 's/ module fast / fast module /')"
    expect_match "$command: key spec ${keyflags//,/ } at argument 1" \
        " flags ${keyflags//,/ } begin_search type index spec index 1 find_keys type range spec lastkey 0 keystep 1 limit 0" \
        "$info"
    # As many arguments as the arity asks for (at least).
    words=$(seq 3 "${arity#-}" | sed 's/.*/1/' | paste -sd ' ')
    # shellcheck disable=SC2086
    expect "$command: GETKEYSANDFLAGS" "k ${keyflags//,/ }" \
        "$(r COMMAND GETKEYSANDFLAGS "$command" k $words | paste -sd ' ')"
    docs=$(r COMMAND DOCS "$command" | paste -sd ' ')
    expect_match "$command: COMMAND DOCS has a summary, since and the module" \
        "^$command summary [A-Z][^ ]* .* since 0\\.1\\.0 group module module ebb$" \
        "$docs"
done <<<"$TABLE"

# Arity is the server's check now: a call with too few arguments is
# "rejected" (INFO commandstats), never reaches the module ("failed").
expect_match "too few arguments" "^ERR wrong number of arguments for" \
    "$(r APBF.EXISTS k)"
expect_match "too many arguments" "^ERR wrong number of arguments for" \
    "$(r TLBF.LOADCHUNK k 1 2 3)"
expect_match "the server rejected APBF.EXISTS before the module ran" \
    'rejected_calls=1,failed_calls=0' \
    "$(r INFO commandstats | grep -i '^cmdstat_apbf.exists:')"
expect_match "the server rejected TLBF.LOADCHUNK before the module ran" \
    'rejected_calls=1,failed_calls=0' \
    "$(r INFO commandstats | grep -i '^cmdstat_tlbf.loadchunk:')"

# ------------------------------------------------------------------------
# Read-only users
# ------------------------------------------------------------------------

r APBF.RESERVE a 1000 >/dev/null
r APBF.ADD a x >/dev/null
r TLBF.RESERVE t 60000 >/dev/null
r TLBF.ADD t x >/dev/null
r STABLE.RESERVE s1 MEMORY 65536 >/dev/null
r STABLE.ADD s1 x >/dev/null
r TIMING.RESERVE tm 1000 >/dev/null
r TIMING.ADD tm x >/dev/null
r SPECTRAL.RESERVE sp COUNTERS 1000 >/dev/null
r SPECTRAL.INCRBY sp x 2 >/dev/null
r SPECTRAL.RESERVE sp2 COUNTERS 1000 >/dev/null
chunk_iter=$(r --raw APBF.SCANDUMP a 0 | head -n 1)

READS="APBF.EXISTS a x|APBF.MEXISTS a x y|APBF.INFO a|APBF.SCANDUMP a 0|TLBF.EXISTS t x|TLBF.MEXISTS t x y|TLBF.INFO t|TLBF.SCANDUMP t 0"
READS+="|STABLE.EXISTS s1 x|STABLE.MEXISTS s1 x y|STABLE.INFO s1|STABLE.SCANDUMP s1 0"
READS+="|TIMING.EXISTS tm x|TIMING.MEXISTS tm x y|TIMING.POSTERIOR tm x PRIOR 0.5|TIMING.INFO tm|TIMING.SCANDUMP tm 0"
READS+="|SPECTRAL.QUERY sp x|SPECTRAL.ICEBERG sp 1 x|SPECTRAL.RANGE sp 1 2|SPECTRAL.INFO sp|SPECTRAL.SCANDUMP sp 0"
WRITES="APBF.RESERVE new 10|APBF.ADD a y|APBF.MADD a y z|APBF.INSERT a ITEMS y|APBF.LOADCHUNK new $chunk_iter xxxx|TLBF.RESERVE newt 10|TLBF.ADD t y|TLBF.MADD t y z|TLBF.ADDAT t 1 y|TLBF.INSERT t ITEMS y|TLBF.LOADCHUNK newt $chunk_iter xxxx"
WRITES+="|STABLE.RESERVE news MEMORY 65536|STABLE.ADD s1 y|STABLE.MADD s1 y z|STABLE.TESTADD s1 y|STABLE.LOADCHUNK news $chunk_iter xxxx"
WRITES+="|TIMING.RESERVE newtm 100|TIMING.ADD tm y|TIMING.MADD tm y z|TIMING.LOADCHUNK newtm $chunk_iter xxxx"
WRITES+="|SPECTRAL.RESERVE newsp COUNTERS 100|SPECTRAL.INCRBY sp y 1|SPECTRAL.DECRBY sp x 1|SPECTRAL.MERGE sp sp2|SPECTRAL.LOADCHUNK newsp $chunk_iter xxxx"

lines() { printf '%s\n' "$@"; }

# read_only <user> <refusal regex>: the user runs every read, and every
# write is refused with a NOPERM matching the regex and changes nothing.
read_only() {
    local user=$1 refusal=$2 command
    IFS='|' read -ra commands <<<"$READS"
    for command in "${commands[@]}"; do
        # shellcheck disable=SC2086
        expect_match "$user may run $command" '^[^N]' \
            "$(as "$user" $command | head -n 1)"
    done
    IFS='|' read -ra commands <<<"$WRITES"
    for command in "${commands[@]}"; do
        # shellcheck disable=SC2086
        expect_match "$user is refused $command" "$refusal" \
            "$(as "$user" $command)"
    done
    expect "$user changed nothing (APBF)" 0 "$(r APBF.EXISTS a y)"
    expect "$user changed nothing (TLBF)" 0 "$(r TLBF.EXISTS t y)"
    expect "$user changed nothing (STABLE)" 0 "$(r STABLE.EXISTS s1 y)"
    expect "$user changed nothing (TIMING)" 0 "$(r TIMING.EXISTS tm y)"
    expect "$user changed nothing (SPECTRAL)" "$(lines 2 0)" \
        "$(r SPECTRAL.QUERY sp x y)"
    expect "$user created nothing" 0 "$(r EXISTS new newt news newtm newsp)"
}

# The recipe for Redis 7.0, where module commands have no ACL category:
# the reads by name, and read-only key permissions as a second lock.
expect "recipe: per-command rules" OK "$(r ACL SETUSER reader on '>pw' \
    resetkeys '%R~*' resetchannels -@all +@read \
    +apbf.exists +apbf.mexists +apbf.info +apbf.scandump \
    +tlbf.exists +tlbf.mexists +tlbf.info +tlbf.scandump \
    +stable.exists +stable.mexists +stable.info +stable.scandump \
    +timing.exists +timing.mexists +timing.posterior +timing.info \
    +timing.scandump +spectral.query +spectral.iceberg +spectral.range \
    +spectral.info +spectral.scandump)"
read_only reader "^NOPERM this user has no permissions to run the '(APBF|TLBF|STABLE|TIMING|SPECTRAL)\\.[A-Z]+' command"
expect_match "reader still reads core types" '^$|^[^N]' "$(as reader GET s)"

# Read-only key permissions alone stop every write of the module, because
# every write's key spec says RW (and every read's RO): the fix for an
# existing "+@all -@write" user.
expect "recipe: read-only keys" OK \
    "$(r ACL SETUSER keys-ro on '>pw' resetkeys '%R~*' +@all -@write)"
read_only keys-ro '^NOPERM this user has no permissions to access one of the keys'
expect_match "keys-ro is refused core writes too" '^NOPERM' "$(as keys-ro SET s 1)"

# The pitfall on servers without module ACL categories: "+@all -@write"
# does not cover module writes. With categories (7.2+), it does.
r ACL SETUSER naive on '>pw' '~*' +@all -@write >/dev/null
categories=$(r COMMAND INFO APBF.ADD | paste -sd ' ')
if [[ $categories =~ @write ]]; then
    read_only naive "^NOPERM this user has no permissions to run"
else
    expect "7.0: +@all -@write still runs APBF.ADD (use a recipe above)" 1 \
        "$(as naive APBF.ADD a naive-item)"
    expect "7.0: APBF.ADD is in no category" 0 \
        "$(r ACL CAT write | grep -ci '^apbf\.' || true)"
fi

finish
