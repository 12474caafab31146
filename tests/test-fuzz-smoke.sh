#!/bin/bash
# The libFuzzer harnesses (tests/fuzz/, make fuzz-build) briefly: each one
# over its seed corpus (made by tests/fuzz/mkseeds and wtrack export), then
# a short fresh fuzz from those seeds. A crash, a sanitizer report, a leak,
# an input slower than FUZZ_SMOKE_TIMEOUT or an allocation over the RSS
# limit fails; the input that did it is kept in tests/fuzz/crashes/.
#   FUZZ_SMOKE_SECONDS  fresh fuzzing per harness (default 5)
#   FUZZ_SMOKE_SEED     libFuzzer's -seed (default: a random one, printed)
. "$(dirname "$0")/lib.sh"

names=(wtlog channel manifest dmlog check campaign collect cold trace)
seconds=${FUZZ_SMOKE_SECONDS:-5}
seed=${FUZZ_SMOKE_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}
timeout_s=${FUZZ_SMOKE_TIMEOUT:-30}
# Fresh fuzzing stops after this many inputs too, so the smoke test stays
# short on a loaded machine.
declare -A max_runs=([wtlog]=20000 [channel]=20000 [manifest]=20000 [dmlog]=20000 [check]=2000 [campaign]=20000 [collect]=5000 [cold]=5000 [trace]=5000)

for n in "${names[@]}"; do
  require_built "$TOP/tests/fuzz/fuzz-$n"
done
require_built "$TOP/tests/fuzz/seeds/.made"

plan $(( 2 * ${#names[@]} ))
diag "libFuzzer -seed=$seed (FUZZ_SMOKE_SEED to repeat)"
crashes=$TOP/tests/fuzz/crashes
mkdir -p "$crashes"

# fuzz NAME LOG ARGS...: the harness with the common options.
fuzz () {
  local n=$1 log=$2; shift 2
  "$TOP/tests/fuzz/fuzz-$n" -artifact_prefix="$crashes/smoke-$n-" -timeout="$timeout_s" \
    -rss_limit_mb=2048 -print_final_stats=1 "$@" >"$log" 2>&1
}

for n in "${names[@]}"; do
  seeds=$TOP/tests/fuzz/seeds/$n
  nseeds=$(find "$seeds" -type f | wc -l)
  if fuzz "$n" "$T/$n-seeds.log" -runs=0 "$seeds" && [ "$nseeds" -gt 0 ]; then
    ok "$n: its $nseeds seeds run clean"
  else
    not_ok "$n: its $nseeds seeds run clean"
    diag_file "$T/$n-seeds.log" 40
  fi
  mkdir "$T/corpus-$n"
  if fuzz "$n" "$T/$n-fuzz.log" -seed="$seed" -max_total_time="$seconds" \
       -runs="${max_runs[$n]}" "$T/corpus-$n" "$seeds"; then
    ok "$n: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$T/$n-fuzz.log" | grep -o '[0-9]*$') inputs in up to $seconds s, no finding"
  else
    not_ok "$n: fresh fuzzing for $seconds s found something (input in $crashes)"
    diag_file "$T/$n-fuzz.log" 60
  fi
done
done_testing
