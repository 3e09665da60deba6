#!/bin/bash
# Run libFuzzer targets one after another, one job each, for SECONDS each,
# on their growing corpus (BUILD/fuzz/corpus/TARGET), the committed corpus
# (tests/fuzz/corpus) and the seeds. Prints a line per target for the log
# in tests/fuzz/README.md; fails if any target finds anything (the input
# is left in BUILD/fuzz/findings/TARGET: add it to tests/fuzz/corpus when
# fixed, so that make test replays it for ever).
# usage: run.sh BUILD SECONDS TARGET...   (make fuzz-smoke: 60 s each)
# FUZZ_MAX_LEN=N overrides the targets' max_len (smaller inputs run faster).
set -u
build=$(cd "$1" && pwd)
seconds=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
failed=0
for target in "$@"; do
  kind=${target#fuzz_}
  case $kind in wide | explore) kind=source ;; esac # fuzz_source.c built two more ways
  # (fuzz_schedule's seeds are the kind schedule)
  work=$build/fuzz/corpus/$target
  findings=$build/fuzz/findings/$target
  mkdir -p "$work" "$findings"
  rm -f "$findings"/fuzz-*.log
  dict=()
  [ -f "$build/fuzz/fuzz_$kind.dict" ] && dict=(-dict="$build/fuzz/fuzz_$kind.dict")
  max_len=${FUZZ_MAX_LEN:-$(sed -n 's/^max_len *= *//p' "$root/tests/fuzz/fuzz_$kind.options")}
  committed=()  # the bytecode findings are made into the seeds (make_findings.sh)
  for dir in "$root/tests/fuzz/corpus/$kind" "$root/tests/fuzz/corpus/${target#fuzz_}"; do
    [ -d "$dir" ] && [[ " ${committed[*]} " != *" $dir "* ]] && committed+=("$dir")
  done
  (cd "$findings" && "$build/fuzz/$target" -jobs=1 -workers=1 -max_total_time="$seconds" "${dict[@]}" \
    -max_len="${max_len:-8192}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" \
    "$work" "${committed[@]}" "$build/fuzz/seeds/$kind") >"$findings/run.out" 2>&1
  status=$?
  log="$findings/fuzz-0.log"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
  artifacts=$(ls "$findings" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' || true)
  echo "$target: $seconds s, ${runs:-?} executions, ${rate:-?}/s, ${cov:-no coverage line}, corpus $(ls "$work" | wc -l), findings $(echo -n "$artifacts" | grep -c .)"
  if [ "$status" != 0 ] || [ -n "$artifacts" ]; then
    failed=1
    echo "FAIL $target (exit $status):"
    grep -A 12 -E '==ERROR|^SUMMARY|Deadly signal|timeout after|out-of-memory' "$log" | head -40 | sed 's/^/    /'
    for a in $artifacts; do echo "    finding: $findings/$a"; done
  fi
done
exit $failed
