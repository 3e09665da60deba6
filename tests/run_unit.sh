#!/bin/sh
# Run the cmocka unit-test binaries (make unit-test builds them and passes
# them here), every one, showing the full log of those that fail. Counts
# cmocka test cases; a binary that fails without reporting a failed case (a
# crash, a failed group setup) counts as one failure. Last line:
#   unit: N passed, M failed
# usage: run_unit.sh TEST_BINARY...
set -u
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT INT TERM
# cmocka's plain output format, whatever the environment says
CMOCKA_MESSAGE_OUTPUT=stdout
export CMOCKA_MESSAGE_OUTPUT
unset CMOCKA_XML_FILE

for bin in "$@"; do
  case $bin in */*) path=$bin ;; *) path=./$bin ;; esac
  "$path" >"$log" 2>&1
  status=$?
  ok=$(grep -c '^\[       OK \]' "$log")
  run=$(grep -c '^\[ RUN      \]' "$log")
  bad=$((run - ok))
  if [ "$status" -ne 0 ] && [ "$bad" -eq 0 ]; then
    echo "$bin: exited with status $status"
    bad=1
  fi
  passed=$((passed + ok))
  failed=$((failed + bad))
  if [ "$bad" -ne 0 ]; then
    cat "$log"
    echo "FAIL $bin: $bad failed"
  else
    echo "ok   $bin: $ok passed"
  fi
done

echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
