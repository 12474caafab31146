#!/bin/bash
# The mutation harness cannot rot (make mutate is too long for make check):
# every mutant's snippet still occurs exactly once in its file; a fixed
# sample of 5 mutants with fast tests is killed; and the runner refuses a
# snippet that is not found exactly once and reports a mutant its tests
# do not notice as survived (exit 1). doc/mutation.md.
. "$(dirname "$0")/lib.sh"
require_tools /usr/bin/python3 prove make
require_built "$TOP/checker/wtrack" "$TOP/plugin/nbdkit-wtrack-plugin.so" "$TOP/tests/unit/test-check-classes"
plan 7

M=$TOP/tests/mutate.py
SAMPLE="log-partial-zero-known,runs-disk-jump-continues,junit-failures-errors-swapped,plugin-trim-fua-dropped,replay-to-time-excludes-boundary"

"$M" --check >"$T/check.out" 2>&1; rc=$?
diag_file "$T/check.out" 20
check "every listed mutant's snippet occurs exactly once in its file" test "$rc" = 0
n=$("$M" --list | grep -cv ' equivalent$')
check "at least 40 non-equivalent mutants are listed ($n)" test "$n" -ge 40

"$M" --only "$SAMPLE" >"$T/sample.out" 2>&1; rc=$?
diag_file "$T/sample.out" 20
check "the sample of 5 mutants runs: exit 0" test "$rc" = 0
check "... each of the 5 killed, score 5 of 5" \
  test "$(grep -c ' killed  *[0-9]*$' "$T/sample.out") $(grep -c '^score: 5 of 5 ' "$T/sample.out")" = "5 1"

# A list with a snippet that is not in its file, and one found twice.
mkdir "$T/stale" "$T/weak"
cat >"$T/stale/x.mut" <<'MUT'
== stale
file: checker/check/runs.c
tests: tests/test-checker-check.sh
why: none
<<<
  return no_such_code;
===
  return 0;
>>>

== twice
file: checker/check/log.c
tests: tests/test-checker-check.sh
why: none
<<<
  return x < y ? -1 : x > y;
===
  return x > y ? -1 : x < y;
>>>
MUT
"$M" --mutants "$T/stale" --check >"$T/stale.out" 2>&1; rc=$?
diag_file "$T/stale.out" 5
check "a snippet not found, and one found twice: refused (exit 2), both named" \
  test "$rc $(grep -c -e 'stale .*occurs 0 times' -e 'twice .*occurs 2 times' "$T/stale.out")" = "2 2"

# A mutant its test cannot notice (a comment): survived, exit 1.
cat >"$T/weak/x.mut" <<'MUT'
== comment-only
file: checker/check/runs.c
tests: tests/test-checker-check.sh
why: none: the harness must say it survived
<<<
/* c->bad is sorted by file: a binary search. */
===
/* c->bad is sorted by file. */
>>>
MUT
"$M" --mutants "$T/weak" --only comment-only >"$T/weak.out" 2>&1; rc=$?
diag_file "$T/weak.out" 5
check "a mutant the tests do not notice: survived, exit 1" \
  test "$rc $(grep -c '^comment-only .* survived ' "$T/weak.out")" = "1 1"
# Its scratch tree is kept for a look; this test removes it.
kept=$(sed -n 's/^mutate: scratch tree kept in //p' "$T/weak.out")
check "... its scratch tree is kept and the real tree untouched" \
  test -d "$kept" -a -n "$(grep -c 'a binary search' "$TOP/checker/check/runs.c")"
[ -n "$kept" ] && rm -rf "$kept"
done_testing
