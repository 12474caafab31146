#!/bin/bash
# The repository explains itself: no file points at the design notes that
# lived outside it, and every doc/*.md a file names exists.
. "$(dirname "$0")/lib.sh"
require_tools git

plan 2

cd "$TOP" || bail_out
# Spelt in two pieces so that this file does not match itself.
outside='\.\./shar''ed|/work/shar''ed|DESI''GN\.md'
hits=$(git ls-files -z | xargs -0 grep -InE "$outside" 2>/dev/null)
check "no file refers to a document outside the repository" test -z "$hits"
[ -z "$hits" ] || diag "$hits"

missing=$(git ls-files -z | xargs -0 grep -IohE 'doc/[a-z0-9-]+\.md' 2>/dev/null \
  | sort -u | while read -r f; do [ -f "$f" ] || echo "$f"; done)
check "every doc/*.md named in a file exists" test -z "$missing"
[ -z "$missing" ] || diag "missing: $missing"

done_testing
