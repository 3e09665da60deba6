#!/bin/bash
# Script tests: every tests/lang/**/*.sim, examples/*.sim, bench/compute/*.sim
# and bench/ab/*.sim (but the modules in directories named imports, which
# other tests import) states what it expects in comments. An expectation is
# a comment on the line of the statement that produces it, or on a line of
# its own; either way they are read in file order:
#   say(x)  -- expect: TEXT            the next line of stdout
#   f(0)    -- expect runtime error: MSG
#                                      the next line of stderr is
#                                      "FILE:LINE: runtime error: MSG",
#                                      LINE being this comment's line
#   -- expect-stderr: TEXT             the next line of stderr
# stdout and stderr must be exactly the lines expected, nothing more (no
# stderr expectation: stderr is empty). On lines of their own:
#   -- expect-exit: N                  the exit status (default 0)
#   -- args: A B ...                   the script's arguments
#   -- flags: F ...                    extra simvm options (e.g. --trace)
#   -- gc-stress: skip REASON          leave it out of the --gc-stress pass
#   -- gc-stress-limit: S              that pass's time limit for it
# Each script runs from its own directory (so messages name it plainly),
# under a 10 s limit, with both dispatch loops (computed goto and switch),
# under each of the four combinations of --actions (reified, direct) and
# --continuations (heap, stack): the default, -O0 and the two mixed ones,
# and compiled to a bytecode file; all must print the same. Then every
# script runs twice with --trace: the traces must be byte-identical, and
# equal under the other three combinations. (The combinations other than
# the default run with the computed-goto build only: the dispatch loops
# share every handler, and the switch build is checked with the default.)
# Last, io-sim's benchmark programs (bench/seed) must
# print exactly what io-sim's do, and their traces hold.
#
# With --gc-stress (make asan) each script instead runs once with
# SIMVM_GC_STRESS=1, the collector running at every allocation, and must
# meet the same expectations, under a limit of 60 s (or its own).
#
# The scripts (and io-sim's programs, as one more job) run in parallel, in
# SIMVM_TEST_JOBS processes (default: nproc), each job in a directory of
# its own; their reports are printed in the order of the scripts' paths
# once all have ended, so the output does not depend on the timing.
# Scripts named after SIMVM_SWITCH run alone, without io-sim's programs.
# usage: run_scripts.sh [--gc-stress] SIMVM SIMVM_SWITCH [SCRIPT...]
set -u
gc_stress=false
if [ "${1:-}" = --gc-stress ]; then gc_stress=true; shift; fi
simvm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
simvm_switch=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
shift 2
simc=$(dirname "$simvm")/simc
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
limit=10
jobs=${SIMVM_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}

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

# The expected stdout and stderr of the script at $1, shown as $2 in its
# messages, into $tmp/expected and $tmp/expected_err.
expectations() {
  awk -v name="$2" -v out="$tmp/expected" -v err="$tmp/expected_err" '
    BEGIN { printf "" > out; printf "" > err }
    match($0, /-- expect(-stderr| runtime error)?:( |$)/) {
      tag = substr($0, RSTART, RLENGTH)
      text = substr($0, RSTART + RLENGTH)
      if (tag ~ /-stderr/) print text > err
      else if (tag ~ /runtime error/) print name ":" NR ": runtime error: " text > err
      else print text > out
    }' "$1"
}

# Whether the output of the last run is exactly what $tmp/expected and
# $tmp/expected_err say; if not, counts the failure of $1 and shows it.
meets_expectations() {
  if ! cmp -s "$tmp/out" "$tmp/expected"; then
    fail "$1" "stdout differs (expected vs actual):"
    diff "$tmp/expected" "$tmp/out" | head -10 | sed 's/^/    /'
    return 1
  fi
  if ! cmp -s "$tmp/err" "$tmp/expected_err"; then
    fail "$1" "stderr differs (expected vs actual):"
    diff "$tmp/expected_err" "$tmp/err" | head -10 | sed 's/^/    /'
    return 1
  fi
}

check_script() {
  local path=$1 name=${1#"$root"/}
  local dir file flags args expected_exit
  dir=$(dirname "$path")
  file=$(basename "$path")
  flags=$(field flags "$path")
  args=$(field args "$path")
  expected_exit=$(field expect-exit "$path")
  expected_exit=${expected_exit:-0}
  expectations "$path" "$file"

  if $gc_stress; then
    if [ -n "$(field gc-stress "$path")" ]; then return; fi
    local limit_here
    limit_here=$(field gc-stress-limit "$path")
    # shellcheck disable=SC2086
    (cd "$dir" && SIMVM_GC_STRESS=1 timeout "${limit_here:-60}" "$simvm" $flags "$file" $args >"$tmp/out" 2>"$tmp/err")
    local status=$?
    if [ "$status" = 124 ]; then fail "$name" "timed out after ${limit_here:-60}s with SIMVM_GC_STRESS=1"; return; fi
    if [ "$status" != "$expected_exit" ]; then
      fail "$name" "exit status $status with SIMVM_GC_STRESS=1, expected $expected_exit"
      sed 's/^/    stderr: /' "$tmp/err" | head -5
      return
    fi
    meets_expectations "$name" && passed=$((passed + 1))
    return
  fi

  # shellcheck disable=SC2086
  run "$simvm" "$dir" $flags "$file" $args
  local status=$?
  if [ "$status" = 124 ]; then fail "$name" "timed out after ${limit}s"; return; fi
  if [ "$status" != "$expected_exit" ]; then
    fail "$name" "exit status $status, expected $expected_exit"
    sed 's/^/    stderr: /' "$tmp/err" | head -5
    return
  fi
  meets_expectations "$name" || return
  cp "$tmp/out" "$tmp/reference"
  cp "$tmp/err" "$tmp/reference_err"

  # the switch-dispatch build, the other three combinations of the A/B
  # axes and the program compiled to a bytecode file (simc -o) must all
  # behave identically
  local variant variants="switch O0 reified heap"
  [ "$expected_exit" != 3 ] && variants="$variants bytecode"
  for variant in $variants; do
    # shellcheck disable=SC2086
    if [ $variant = switch ]; then run "$simvm_switch" "$dir" $flags "$file" $args
    elif [ $variant = O0 ]; then run "$simvm" "$dir" -O0 $flags "$file" $args
    elif [ $variant = reified ]; then run "$simvm" "$dir" --actions=reified --continuations=stack $flags "$file" $args
    elif [ $variant = heap ]; then run "$simvm" "$dir" --actions=direct --continuations=heap $flags "$file" $args
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

  # determinism: two traced runs byte-identical, and the same under the
  # other three combinations of --actions and --continuations
  # shellcheck disable=SC2086
  run "$simvm" "$dir" $flags --trace "$file" $args; cp "$tmp/out" "$tmp/trace1"
  # shellcheck disable=SC2086
  run "$simvm" "$dir" $flags --trace "$file" $args; cp "$tmp/out" "$tmp/trace2"
  if ! cmp -s "$tmp/trace1" "$tmp/trace2"; then fail "$name" "trace differs between two runs"; return; fi
  local combo
  for combo in -O0 "--actions=reified --continuations=stack" "--actions=direct --continuations=heap"; do
    # shellcheck disable=SC2086
    run "$simvm" "$dir" $flags $combo --trace "$file" $args
    if ! cmp -s "$tmp/trace1" "$tmp/out"; then
      fail "$name" "trace differs under $combo"
      diff "$tmp/trace1" "$tmp/out" | head -6 | sed 's/^/    /'
      return
    fi
  done
  passed=$((passed + 1))
}

# io-sim's benchmark programs print exactly what io-sim's do: a result
# (--result), or N empty lines (say ""), nothing on stderr.
check_seeds() {
seed=$root/bench/seed
# empty_lines N: N newlines
empty_lines() { [ "$1" = 0 ] || printf '%*s' "$1" '' | tr ' ' '\n'; }
# check_seed NAME EXPECTED-STDOUT SIMVM-ARGS...   (EXPECTED "@N": N empty lines)
check_seed() {
  local name=$1
  case $2 in
    @*) empty_lines "${2#@}" >"$tmp/expected" ;;
    *) printf '%s' "$2" >"$tmp/expected" ;;
  esac
  : >"$tmp/expected_err"
  shift 2
  run "$simvm" "$seed" "$@"
  local status=$?
  if [ "$status" != 0 ]; then fail "bench/seed $name" "exit status $status"; return; fi
  meets_expectations "bench/seed $name" && passed=$((passed + 1))
}
check_seed threadDelay         "()"$'\n'        --result threadDelay.sim
check_seed timeout_fail        "none"$'\n'      --result timeout_fail.sim
check_seed timeout_succeed     "some(())"$'\n'  --result timeout_succeed.sim
check_seed timeout_race        "some(())"$'\n'  --result timeout_race.sim
check_seed registerDelay       "()"$'\n'        --result registerDelay.sim
check_seed "forkIO 50"         ""                forkIO.sim 50
check_seed "forkIO 250"        ""                forkIO.sim 250
check_seed "forkIO 50 -q"      ""                -q forkIO.sim 50
check_seed "async 50"          @50               async.sim 50
check_seed "async 250"         @250              async.sim 250
check_seed "async 50 -q"       ""                -q async.sim 50
check_seed "bottleneck -q"     ""                -q bottleneck.sim
# a million empty lines, compared by their checksum
run "$simvm" "$seed" bottleneck.sim
if [ "$?" = 0 ] && [ ! -s "$tmp/err" ] &&
   [ "$(md5sum <"$tmp/out")" = "$(empty_lines 1000000 | md5sum)" ]; then passed=$((passed + 1))
else fail "bench/seed bottleneck" "not a million empty lines: $(wc -l <"$tmp/out") lines, $(wc -c <"$tmp/out") bytes"; fi

# the small ones' traces, exactly
check_seed "threadDelay --trace" "       0ns  main         delay 1us
       1us  main         wake
       1us  main         exit
" --trace threadDelay.sim
check_seed "timeout_fail --trace" "       0ns  main         timeout 1us
       0ns  main         delay 2us
       1us  main         timeout fired
       1us  main         exit
" --trace timeout_fail.sim
check_seed "timeout_succeed --trace" "       0ns  main         timeout 2us
       0ns  main         delay 1us
       1us  main         wake
       1us  main         exit
" --trace timeout_succeed.sim
check_seed "timeout_race --trace" "       0ns  main         timeout 1us
       0ns  main         delay 1us
       1us  main         wake
       1us  main         exit
" --trace timeout_race.sim
check_seed "registerDelay --trace" "       0ns  main         retry: blocked on <tvar>
       1us  main         wake (by <tvar>)
       1us  main         committed
       1us  main         exit
" --trace registerDelay.sim

# and every trace is byte-identical run to run, and under the other three
# combinations of --actions and --continuations
for spec in "threadDelay.sim" "timeout_fail.sim" "timeout_succeed.sim" "timeout_race.sim" \
            "forkIO.sim 50" "forkIO.sim 250" "--max-time 20ms bottleneck.sim" "registerDelay.sim" "async.sim 50" \
            "async.sim 250"; do
  # shellcheck disable=SC2086
  run "$simvm" "$seed" --trace $spec; sum1=$(md5sum <"$tmp/out")
  # shellcheck disable=SC2086
  run "$simvm" "$seed" --trace $spec; sum2=$(md5sum <"$tmp/out")
  # shellcheck disable=SC2086
  run "$simvm" "$seed" -O0 --trace $spec; sum3=$(md5sum <"$tmp/out")
  # shellcheck disable=SC2086
  run "$simvm" "$seed" --actions=reified --continuations=stack --trace $spec; sum4=$(md5sum <"$tmp/out")
  # shellcheck disable=SC2086
  run "$simvm" "$seed" --actions=direct --continuations=heap --trace $spec; sum5=$(md5sum <"$tmp/out")
  if [ "$sum1" = "$sum2" ] && [ "$sum1" = "$sum3" ] && [ "$sum1" = "$sum4" ] && [ "$sum1" = "$sum5" ]; then
    passed=$((passed + 1))
  else fail "bench/seed $spec" "trace differs between runs or under -O0 or a mixed --actions/--continuations"; fi
done
}

# run_job "INDEX SPEC": one job (a script's path, or @seed for io-sim's
# programs) in a directory of its own, its report into $work/INDEX.log and
# its counts, "PASSED FAILED", into $work/INDEX.count.
run_job() {
  local index=${1%% *} spec=${1#* }
  local tmp passed=0 failed=0
  tmp=$(mktemp -d "$work/job.XXXXXX")
  if [ "$spec" = @seed ]; then check_seeds; else check_script "$spec"; fi >"$work/$index.log" 2>&1
  echo "$passed $failed" >"$work/$index.count"
  rm -rf "$tmp"
}
export -f run_job check_script check_seeds fail run field expectations meets_expectations
export simvm simvm_switch simc root work limit gc_stress

if [ $# -gt 0 ]; then
  for script in "$@"; do (cd "$(dirname "$script")" && echo "$(pwd)/$(basename "$script")"); done
else
  find "$root/tests/lang" "$root/examples" "$root/bench/compute" "$root/bench/ab" -name imports -prune -o -name '*.sim' -print | LC_ALL=C sort
fi | awk '{ printf "%05d %s\n", NR, $0 }' >"$work/scripts"
# io-sim's programs, the longest job, start first and report last
specs=$work/scripts
if ! $gc_stress && [ $# = 0 ]; then
  { echo "99999 @seed"; cat "$work/scripts"; } >"$work/specs"
  specs=$work/specs
fi
xargs -d '\n' -P "$jobs" -I{} bash -c 'run_job "$1"' _ {} <"$specs"

passed=0
failed=0
while read -r index spec; do
  if [ -f "$work/$index.count" ]; then
    cat "$work/$index.log"
    read -r p f <"$work/$index.count"
    passed=$((passed + p))
    failed=$((failed + f))
  else
    echo "FAIL ${spec#"$root"/}: its job ended without a result"
    failed=$((failed + 1))
  fi
done < <(LC_ALL=C sort "$specs")

if $gc_stress; then
  echo "scripts with SIMVM_GC_STRESS=1: $passed passed, $failed failed"
else
  echo "scripts: $passed passed, $failed failed"
fi
[ "$failed" = 0 ]
