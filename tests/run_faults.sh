#!/bin/bash
# Fault injection, as Lua's test allocator does it: for each run below,
# count its allocations, then run it again once per allocation N with the
# Nth made to fail (SIMVM_FAIL_ALLOC=N). Every such run must end with the
# out-of-memory message and exit status 70: no crash, no other error, and,
# in the ASan build make faultinject uses, no sanitizer report or leak.
# usage: run_faults.sh BUILD_DIR   (simvm and simc built with -DSIMVM_FAULT_INJECTION)
set -u
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
simvm=$build/simvm
simc=$build/simc
passed=0
failed=0

printf 'main = {\n  say(1 +)\n}\n' >"$tmp/broken.sim"
printf 'fn f(x) = x / 0\nmain = {\n  fork(say(f(1)))\n  delay(1us)\n  say(f(2))\n}\n' >"$tmp/fails.sim"
cp "$root/examples/race.sim" "$tmp/race.sim"
cp "$root/tests/lang/stm/tqueue.sim" "$tmp/tqueue.sim"
"$simc" -o "$tmp/race.simc" "$tmp/race.sim" || { echo "FAIL: simc -o race.sim"; exit 1; }

# check NAME COMMAND...: every allocation of COMMAND failed in turn
check() {
  local name=$1
  shift
  local count
  count=$(cd "$tmp" && SIMVM_COUNT_ALLOCS=1 "$@" 2>&1 >/dev/null | sed -n 's/^allocations: //p' | tail -n 1)
  if [ -z "$count" ] || [ "$count" -lt 10 ]; then
    echo "FAIL $name: could not count its allocations"
    failed=$((failed + 1))
    return
  fi
  local n bad=0
  for ((n = 1; n <= count; n++)); do
    (cd "$tmp" && SIMVM_FAIL_ALLOC=$n "$@" >/dev/null 2>"$tmp/err")
    local status=$?
    local last
    last=$(tail -n 1 "$tmp/err")
    if [ "$status" != 70 ] || [ "${last#simvm: out of memory (allocating }" = "$last" ]; then
      echo "FAIL $name: allocation $n of $count: exit $status"
      head -n 20 "$tmp/err" | sed 's/^/    /'
      bad=$((bad + 1))
      [ "$bad" -ge 3 ] && break
    fi
  done
  if [ "$bad" = 0 ]; then
    passed=$((passed + 1))
    echo "ok   $name: $count allocations, each failed in turn"
  else
    failed=$((failed + 1))
  fi
}

check "run with every writer"  "$simvm" --trace --profile-json p.json --timeline t.json --trace-json t.jsonl race.sim
check "text profile, failures" "$simvm" --profile fails.sim
check "stm queue"              "$simvm" -q tqueue.sim
check "compile error"          "$simvm" broken.sim
check "bytecode file"          "$simvm" race.simc
check "simc -o and -l"         "$simc" -l -o out.simc race.sim

echo "faults: $passed passed, $failed failed"
[ "$failed" = 0 ]
