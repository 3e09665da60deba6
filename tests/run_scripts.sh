#!/bin/bash
# Script tests: every tests/lang/**/*.sim and examples/*.sim (but the
# modules in directories named imports, which other tests import) states what it
# expects in comments:
#   -- expect: TEXT           the next line of stdout (exact; order matters)
#   -- expect-stderr: TEXT    a line that must appear in stderr, in order;
#                             without any, stderr must be empty
#   -- expect-exit: N         the exit status (default 0)
#   -- args: A B ...          the script's arguments
#   -- flags: F ...           extra simvm options (e.g. --trace, --result)
# Each script runs from its own directory (so messages name it plainly),
# under a 10 s limit, with both dispatch loops (computed goto and switch)
# and with -O0; all must print the same. Then every script runs twice with
# --trace: the traces must be byte-identical, and equal under -O0.
# usage: run_scripts.sh SIMVM SIMVM_SWITCH
set -u
simvm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
simvm_switch=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
simc=$(dirname "$simvm")/simc
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
limit=10

fail() {
  echo "FAIL $1: $2"
  failed=$((failed + 1))
}

# run BINARY DIR SIMVM-ARGS...  -> $tmp/out $tmp/err, returns the exit status
run() {
  local bin=$1 dir=$2
  shift 2
  (cd "$dir" && timeout "$limit" "$bin" "$@" >"$tmp/out" 2>"$tmp/err")
}

field() { sed -n "s/^-- $1: \{0,1\}//p" "$2"; }

check_script() {
  local path=$1 name=${1#"$root"/}
  local dir file flags args expected_exit
  dir=$(dirname "$path")
  file=$(basename "$path")
  flags=$(field flags "$path")
  args=$(field args "$path")
  expected_exit=$(field expect-exit "$path")
  expected_exit=${expected_exit:-0}
  field expect "$path" >"$tmp/expected"
  field expect-stderr "$path" >"$tmp/expected_err"

  # shellcheck disable=SC2086
  run "$simvm" "$dir" $flags "$file" $args
  local status=$?
  if [ "$status" = 124 ]; then fail "$name" "timed out after ${limit}s"; return; fi
  if [ "$status" != "$expected_exit" ]; then
    fail "$name" "exit status $status, expected $expected_exit"
    sed 's/^/    stderr: /' "$tmp/err" | head -5
    return
  fi
  if ! cmp -s "$tmp/out" "$tmp/expected"; then
    fail "$name" "stdout differs (expected vs actual):"
    diff "$tmp/expected" "$tmp/out" | head -10 | sed 's/^/    /'
    return
  fi
  if [ -s "$tmp/expected_err" ]; then
    # every expected stderr line, in order, as a subsequence of stderr
    if ! awk 'NR == FNR { want[n++] = $0; next } i < n && $0 == want[i + 0] { i++ } END { exit (i < n) ? 1 : 0 }' \
        "$tmp/expected_err" "$tmp/err"; then
      fail "$name" "stderr lacks expected lines; it was:"
      sed 's/^/    /' "$tmp/err" | head -10
      return
    fi
  elif [ -s "$tmp/err" ]; then
    fail "$name" "unexpected stderr:"
    sed 's/^/    /' "$tmp/err" | head -5
    return
  fi
  cp "$tmp/out" "$tmp/reference"
  cp "$tmp/err" "$tmp/reference_err"

  # the switch-dispatch build, the -O0 strategy and the program compiled to
  # a bytecode file (simc -o) must all behave identically
  local variant variants="switch O0"
  [ "$expected_exit" != 3 ] && variants="$variants bytecode"
  for variant in $variants; do
    # shellcheck disable=SC2086
    if [ $variant = switch ]; then run "$simvm_switch" "$dir" $flags "$file" $args
    elif [ $variant = O0 ]; then run "$simvm" "$dir" -O0 $flags "$file" $args
    else
      if ! (cd "$dir" && "$simc" -o "$tmp/program.simc" "$file" 2>"$tmp/simc_err"); then
        fail "$name" "simc -o failed: $(head -1 "$tmp/simc_err")"
        return
      fi
      run "$simvm" "$dir" $flags "$tmp/program.simc" $args
    fi
    status=$?
    if [ "$status" != "$expected_exit" ] || ! cmp -s "$tmp/out" "$tmp/reference" ||
       ! cmp -s "$tmp/err" "$tmp/reference_err"; then
      fail "$name" "differs under $variant (exit $status)"
      diff "$tmp/reference" "$tmp/out" | head -6 | sed 's/^/    /'
      return
    fi
  done

  # determinism: two traced runs byte-identical, and the same under -O0
  # shellcheck disable=SC2086
  run "$simvm" "$dir" $flags --trace "$file" $args; cp "$tmp/out" "$tmp/trace1"
  # shellcheck disable=SC2086
  run "$simvm" "$dir" $flags --trace "$file" $args; cp "$tmp/out" "$tmp/trace2"
  # shellcheck disable=SC2086
  run "$simvm" "$dir" $flags -O0 --trace "$file" $args; cp "$tmp/out" "$tmp/trace3"
  if ! cmp -s "$tmp/trace1" "$tmp/trace2"; then fail "$name" "trace differs between two runs"; return; fi
  if ! cmp -s "$tmp/trace1" "$tmp/trace3"; then
    fail "$name" "trace differs under -O0"
    diff "$tmp/trace1" "$tmp/trace3" | head -6 | sed 's/^/    /'
    return
  fi
  passed=$((passed + 1))
}

while IFS= read -r script; do
  check_script "$script"
done < <(find "$root/tests/lang" "$root/examples" "$root/bench/compute" -name imports -prune -o -name '*.sim' -print | LC_ALL=C sort)

# io-sim's benchmark programs, with the outputs io-sim gives.
seed=$root/bench/seed
check_seed() {
  local name=$1 expected=$2
  shift 2
  run "$simvm" "$seed" "$@"
  local status=$?
  local got
  got="exit=$status lines=$(wc -l <"$tmp/out") bytes=$(wc -c <"$tmp/out") stderr=$(wc -c <"$tmp/err")"
  if [ "$got" = "$expected" ]; then passed=$((passed + 1)); else fail "bench/seed $name" "$got, expected $expected"; fi
}
check_seed threadDelay         "exit=0 lines=1 bytes=3 stderr=0" --result threadDelay.sim
check_seed timeout_fail        "exit=0 lines=1 bytes=5 stderr=0" --result timeout_fail.sim
check_seed timeout_succeed     "exit=0 lines=1 bytes=9 stderr=0" --result timeout_succeed.sim
check_seed timeout_race        "exit=0 lines=1 bytes=9 stderr=0" --result timeout_race.sim
check_seed "forkIO 50"         "exit=0 lines=0 bytes=0 stderr=0" forkIO.sim 50
check_seed "forkIO 250"        "exit=0 lines=0 bytes=0 stderr=0" forkIO.sim 250
check_seed bottleneck          "exit=0 lines=1000000 bytes=1000000 stderr=0" bottleneck.sim
check_seed "bottleneck -q"     "exit=0 lines=0 bytes=0 stderr=0" -q bottleneck.sim
check_seed registerDelay       "exit=0 lines=1 bytes=3 stderr=0" --result registerDelay.sim
check_seed "async 50"          "exit=0 lines=50 bytes=50 stderr=0" async.sim 50
check_seed "async 250"         "exit=0 lines=250 bytes=250 stderr=0" async.sim 250
check_seed "async 50 -q"       "exit=0 lines=0 bytes=0 stderr=0" -q async.sim 50
check_seed "forkIO 50 -q"      "exit=0 lines=0 bytes=0 stderr=0" -q forkIO.sim 50
for f in threadDelay timeout_fail timeout_succeed timeout_race; do
  run "$simvm" "$seed" --result "$f.sim"
  echo "$f: $(cat "$tmp/out")" >>"$tmp/results"
done
if [ "$(cat "$tmp/results")" = "threadDelay: ()
timeout_fail: none
timeout_succeed: some(())
timeout_race: some(())" ]; then passed=$((passed + 1)); else fail "bench/seed results" "$(cat "$tmp/results")"; fi

# and their traces are byte-identical run to run, and under -O0
for spec in "threadDelay.sim" "timeout_fail.sim" "timeout_succeed.sim" "timeout_race.sim" \
            "forkIO.sim 50" "forkIO.sim 250" "--max-time 20ms bottleneck.sim" "registerDelay.sim" "async.sim 50" \
            "async.sim 250"; do
  # shellcheck disable=SC2086
  run "$simvm" "$seed" --trace $spec; sum1=$(md5sum <"$tmp/out")
  # shellcheck disable=SC2086
  run "$simvm" "$seed" --trace $spec; sum2=$(md5sum <"$tmp/out")
  # shellcheck disable=SC2086
  run "$simvm" "$seed" -O0 --trace $spec; sum3=$(md5sum <"$tmp/out")
  if [ "$sum1" = "$sum2" ] && [ "$sum1" = "$sum3" ]; then passed=$((passed + 1))
  else fail "bench/seed $spec" "trace differs between runs or under -O0"; fi
done

echo "scripts: $passed passed, $failed failed"
[ "$failed" = 0 ]
