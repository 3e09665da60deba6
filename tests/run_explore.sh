#!/bin/bash
# Schedule exploration tests (docs/EXPLORE.md), with exact expected outputs
# in tests/explore/*.out and *.schedule:
#   - the three examples found by --explore, shrunk, written and replayed;
#     each the same under both dispatch loops, -O0 and as bytecode;
#   - a seed gives the same trace every time, on every build;
#   - exhaustive search (sleep sets) finds the outcomes plain depth-first
#     search finds, bound by bound;
#   - --jobs changes nothing, and --shard 1/4 .. 4/4 add up to the whole;
#   - each kind of outcome; bad input and schedules that no longer match.
# Every run works in a scratch directory (schedule files are written to
# the current one). UPDATE=1 rewrites the expected files (then review them).
# usage: run_explore.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
simvm=$build/simvm
switch=$build/simvm-switch
simc=$build/simc
want=$root/tests/explore
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); }
fail() {
  echo "FAIL $1: $2"
  failed=$((failed + 1))
}

# run NAME STATUS COMMAND...: in $tmp, stdout in $tmp/out, stderr in $tmp/err
run() {
  local name=$1 status=$2
  shift 2
  (cd "$tmp" && timeout 120 "$@" >"$tmp/out" 2>"$tmp/err")
  local got=$?
  if [ "$got" != "$status" ]; then
    fail "$name" "exit status $got, expected $status"
    sed 's/^/    /' "$tmp/err" | head -5
    return 1
  fi
  return 0
}

# same NAME EXPECTED ACTUAL
same() {
  if cmp -s "$2" "$3"; then
    ok
  else
    fail "$1" "differs from $(basename "$2") (expected vs actual):"
    diff "$2" "$3" | head -12 | sed 's/^/    /'
  fi
}

# golden NAME FILE: the expected file; UPDATE=1 writes it from $tmp/out
golden() {
  if [ "${UPDATE:-}" = 1 ]; then cp "$tmp/out" "$want/$2"; fi
  same "$1" "$want/$2" "$tmp/out"
}

# bad NAME STATUS MESSAGE ARGS...: the first line of stderr
bad() {
  local name=$1 status=$2 message=$3
  shift 3
  run "$name" "$status" "$simvm" "$@" || return
  if [ "$(head -1 "$tmp/err")" = "$message" ]; then ok; else
    fail "$name" "stderr: $(head -1 "$tmp/err")"
    echo "     want: $message"
  fi
}
# no_stderr NAME
no_stderr() {
  if [ -s "$tmp/err" ]; then fail "$1" "unexpected stderr: $(head -1 "$tmp/err")"; else ok; fi
}

for f in overdraft lost_update dining; do cp "$root/examples/$f.sim" "$tmp/"; done
for f in "$want"/*.sim; do cp "$f" "$tmp/"; done

# ---- the examples: found, shrunk, written, replayed ----
for ex in overdraft lost_update dining; do
  status=1
  run "$ex: --explore 100" 1 "$simvm" --explore 100 "$ex.sim" || continue
  golden "$ex: --explore 100" "$ex.out"
  no_stderr "$ex: --explore 100"
  cp "$tmp/out" "$tmp/$ex.report"
  cp "$tmp/$ex.schedule" "$tmp/out"
  golden "$ex: the schedule file" "$ex.schedule"
  cp "$tmp/$ex.schedule" "$tmp/$ex.schedule.reference"
  # the same report and file from the other builds, -O0 and bytecode
  for variant in switch O0 bytecode; do
    rm -f "$tmp/$ex.schedule"
    case $variant in
      switch) run "$ex: --explore under $variant" 1 "$switch" --explore 100 "$ex.sim" || continue ;;
      O0) run "$ex: --explore under $variant" 1 "$simvm" -O0 --explore 100 "$ex.sim" || continue ;;
      bytecode)
        (cd "$tmp" && "$simc" -o "$ex.simc" "$ex.sim")
        run "$ex: --explore under $variant" 1 "$simvm" --explore 100 "$ex.simc" || continue
        sed -i "s/$ex\.simc/$ex.sim/g" "$tmp/out" "$tmp/$ex.schedule" ;;
    esac
    same "$ex: report under $variant" "$tmp/$ex.report" "$tmp/out"
    same "$ex: schedule under $variant" "$tmp/$ex.schedule.reference" "$tmp/$ex.schedule"
  done
  cp "$tmp/$ex.schedule.reference" "$tmp/$ex.schedule"
  # the replay gives the report's trace and messages, byte for byte
  replay_status=1
  [ "$ex" = dining ] && replay_status=4
  sed -n '/^the shrunk schedule.s trace/,$p' "$tmp/$ex.report" | tail -n +2 >"$tmp/$ex.trace"
  for bin in "$simvm" "$switch"; do
    for opt in -O1 -O0 --actions=reified --continuations=heap; do
      (cd "$tmp" && "$bin" $opt --replay "$ex.schedule" --trace "$ex.sim" >"$tmp/out" 2>&1)
      got=$?
      if [ "$got" != "$replay_status" ]; then fail "$ex: replay $(basename "$bin") $opt" "exit $got"; continue; fi
      same "$ex: replay $(basename "$bin") $opt" "$tmp/$ex.trace" "$tmp/out"
    done
  done
  # the first failing seed, alone: the same trace on every run and build
  seed=$(sed -n 's/^1\. .*; the first, seed \([0-9]*\),.*/\1/p' "$tmp/$ex.report")
  run "$ex: --seed $seed" "$replay_status" "$simvm" --seed "$seed" --trace "$ex.sim" && cp "$tmp/out" "$tmp/seed1"
  for cmd in "$simvm --seed $seed --trace" "$switch --seed $seed --trace" "$simvm -O0 --seed $seed --trace"; do
    # shellcheck disable=SC2086
    run "$ex: $cmd" "$replay_status" $cmd "$ex.sim" && same "$ex: $cmd" "$tmp/seed1" "$tmp/out"
  done
done

# ---- choices beyond the schedule ----
# the lease example's timing bug: no schedule fails with its delays as
# written, --jitter finds it; the report, the file and its replay, on
# every build
cp "$root/examples/lease.sim" "$tmp/"
run "lease: fixed delays" 0 "$simvm" --explore 300 -q lease.sim && grep -q '^every schedule passed$' "$tmp/out" && ok ||
  fail "lease: fixed delays" "a schedule failed without --jitter"
run "lease: --jitter 25%" 1 "$simvm" --explore 1000 --jitter 25% lease.sim && golden "lease: --jitter 25%" lease.out &&
  cp "$tmp/lease.schedule" "$tmp/out" && golden "lease: the schedule file" lease.schedule
sed -n '/^the shrunk schedule.s trace/,$p' "$tmp/lease.out" 2>/dev/null | tail -n +2 >"$tmp/lease.trace"
sed -n '/^the shrunk schedule.s trace/,$p' "$want/lease.out" | tail -n +2 >"$tmp/lease.trace"
for cmd in "$simvm" "$switch" "$simvm -O0"; do
  # shellcheck disable=SC2086
  (cd "$tmp" && $cmd --replay lease.schedule --trace lease.sim >"$tmp/out" 2>&1)
  got=$?
  [ "$got" = 1 ] && same "lease: replay $cmd" "$tmp/lease.trace" "$tmp/out" || fail "lease: replay $cmd" "exit $got"
done
# every kind of choice pinned by hand, each marked where it is made
(cd "$tmp" && "$simvm" --explore 1 --max-time 1ms --fail-on limit -q --schedule-out h.schedule choices.sim >/dev/null)
chash=$(sed -n 's/^program choices.sim //p' "$tmp/h.schedule")
pinned() { # FILE LINES...: a schedule for choices.sim with these lines
  local file=$1
  shift
  { printf 'simvm-schedule 2\nprogram choices.sim %s\nseed 0\noption --jitter 50%%\n' "$chash"; printf '%s\n' "$@"; } \
    >"$tmp/$file"
}
pinned pinned.schedule 'outcome pass' 'random main#1 = 0 of 6' 'random main#2 = 0.25 of float' \
  'random main#3 = 2ms of 1ms..5ms' 'fault main#1 "drop" fired' 'registerDelay main#1 = 4ms of 3ms' \
  'delay 1#1 = 1500us of 2ms' 'timeout main#2 = 1500us of 2ms' 'timers at 1500us fire main#2, 1#1'
golden_run() {
  local name=$1 status=$2 file=$3
  shift 3
  run "$name" "$status" "$@" && golden "$name" "$file" && no_stderr "$name"
}
golden_run "every kind of choice, replayed and marked" 0 choices.out "$simvm" --replay pinned.schedule --trace choices.sim
for cmd in "$switch" "$simvm -O0" "$simvm --actions=reified"; do
  # shellcheck disable=SC2086
  run "choices: replay $cmd" 0 $cmd --replay pinned.schedule --trace choices.sim && same "choices: replay $cmd" \
    "$want/choices.out" "$tmp/out"
done
# the timeline marks each of them, and orders every instant's events
run "choices: --timeline" 0 "$simvm" --replay pinned.schedule --timeline choices.json choices.sim &&
  { [ "$(grep -c '"name": "<- choice"' "$tmp/choices.json")" = 8 ] &&
    grep -q '"name": "<- choice", "args": {"seq": [0-9]*, "order": [0-9]*, "detail": "fault \\"drop\\" fired"}' "$tmp/choices.json" &&
    ok || fail "choices: --timeline" "$(grep -c '<- choice' "$tmp/choices.json") choice marks"; }
run "overdraft: replay --timeline" 1 "$simvm" --replay overdraft.schedule --timeline od.json overdraft.sim &&
  { grep -q '"name": "<- deviation", "args": {"seq": [0-9]*, "order": [0-9]*, "detail": "2 runs here instead of 1 (alice)"}' "$tmp/od.json" &&
    ok || fail "overdraft: replay --timeline" "no deviation mark"; }
# a choice the program never makes, or makes otherwise: the replay stops there
pinned never.schedule 'random 1#1 = 0 of 6'
bad "a choice never made" 3 "simvm: never.schedule no longer matches choices.sim: it stopped matching at 'random 1#1 = 0 of 6': the run ended without making that choice" \
  --replay never.schedule choices.sim
pinned other.schedule 'random main#1 = 0 of 4'
bad "a draw of another range" 3 "simvm: other.schedule no longer matches choices.sim: it stopped matching at 'random main#1 = 0 of 4': the run makes another choice there: random main#1 of another range" \
  --replay other.schedule choices.sim
pinned kind.schedule 'random main#2 = 3 of 6'
bad "a draw of another kind" 3 "simvm: kind.schedule no longer matches choices.sim: it stopped matching at 'random main#2 = 3 of 6': the run makes another choice there: random main#2 = 0.43152799704850997 of float" \
  --replay kind.schedule choices.sim
pinned outcome.schedule 'outcome deadlock at choices.sim:3'
bad "another outcome" 3 "simvm: choices.sim ended differently than outcome.schedule records: it records deadlock at choices.sim:3, but this run's outcome is pass (main returned ())" \
  --replay outcome.schedule choices.sim
# malformed choice lines
badline() { # NAME LINE MESSAGE
  pinned b.schedule "$2"
  bad "$1" 3 "simvm: b.schedule:5: $3: '$2'" --replay b.schedule choices.sim
}
badline "a draw out of its range" 'random main#1 = 6 of 6' "a random draw out of its range"
badline "a float out of its range" 'random main#2 = 1.5 of float' "a float draw out of its range [0, 1)"
badline "a duration draw out of its range" 'random main#3 = 9ms of 1ms..5ms' "a random draw out of its range"
badline "a backward range" 'random main#3 = 2ms of 5ms..1ms' "malformed randomDuration range (it should read LO..HI with LO <= HI)"
badline "a choice without a name" 'random main = 1 of 6' "malformed choice line (it should read 'random T#N = V of RANGE' or 'delay T#N = D of NOMINAL')"
badline "a fault not fired" 'fault main#1 "drop"' "malformed fault line (it should read 'fault T#N \"NAME\" fired')"
badline "one timer" 'timers at 1ms fire 1#1' "a timers line needs two timers or more"
badline "a timer twice" 'timers at 1ms fire 1#1, 1#1' "a timer is named twice in a timers line"
pinned dup.schedule 'random main#1 = 0 of 6' 'random main#1 = 1 of 6'
bad "a choice twice" 3 "simvm: dup.schedule:6: a choice is given twice" --replay dup.schedule choices.sim
pinned twice.schedule 'outcome pass' 'outcome pass'
bad "two outcomes" 3 "simvm: twice.schedule:6: a second outcome line: 'outcome pass'" --replay twice.schedule choices.sim
pinned bogus.schedule 'outcome bogus at x'
bad "an unknown outcome" 3 "simvm: bogus.schedule:5: malformed outcome line: 'outcome bogus at x' (it should read 'outcome KIND PLACE', KIND one of pass, assertion, error, uncaught, deadlock, limit, strict-shutdown)" \
  --replay bogus.schedule choices.sim
{ printf 'simvm-schedule 2\nprogram choices.sim %s\nseed 0\n' "$chash"; echo 'delay 1#1 = 1500us of 2ms'; } >"$tmp/nojitter.schedule"
bad "a duration without --jitter" 3 "simvm: nojitter.schedule:4: a timer line, but no --jitter option line to choose durations within" \
  --replay nojitter.schedule choices.sim
pinned far.schedule 'delay 1#1 = 900us of 2ms'
bad "a duration out of --jitter" 3 "simvm: far.schedule:5: a duration out of its --jitter range" --replay far.schedule choices.sim
pinned j.schedule
sed -i 's/--jitter 50%/--jitter 100%/' "$tmp/j.schedule"
bad "a file's jitter of 100%" 3 "simvm: j.schedule:4: a jitter above 0% and below 100%, not '100%'" --replay j.schedule choices.sim
for j in 0% 100% -5% 10 abc 12.34567%; do
  bad "--jitter $j" 2 "simvm: --jitter needs a percentage above 0% and below 100%, with at most four decimals (10%, 2.5%), not '$j'" \
    --explore 5 --jitter "$j" choices.sim
done
bad "--jitter alone" 2 "simvm: --jitter needs --explore, or --seed for one schedule (a replay takes its file's)" \
  --jitter 10% choices.sim

# ---- pruning: exhaustive finds what plain depth-first finds ----
outcome_set() { # the distinct (kind, description) of a --json run
  grep -v '^{"summary"' | sed 's/^{"[a-z]*": [0-9]*, //; s/, "steps".*//' | LC_ALL=C sort -u
}
for spec in "overdraft 2" "lost_update 2" "dining 2" "handoff 0" "handoff 1" "handoff 2" "kill_race 0" \
            "kill_race 1" "kill_race 2" "kill_race 3" "stm_wakeups 0" "stm_wakeups 1" "stm_wakeups 2" "timers 0" \
            "timers 2" "try_take 0" "try_take 1" "try_take 2" "try_take 3"; do
  read -r prog k <<<"$spec"
  (cd "$tmp" && "$simvm" --explore 10000000 --strategy exhaustive --preemptions "$k" --no-shrink \
     --schedule-out /dev/null --json "$prog.sim" >"$tmp/out" 2>"$tmp/err")
  grep -q '"exhausted": true' "$tmp/out" || { fail "$prog: exhaustive -K $k" "not exhausted"; continue; }
  outcome_set <"$tmp/out" >"$tmp/pruned"
  pruned=$(grep -c '"schedule":' "$tmp/out")
  (cd "$tmp" && "$simvm" --explore 10000000 --strategy dfs --preemptions "$k" --no-shrink --schedule-out /dev/null \
     --json "$prog.sim" >"$tmp/out" 2>"$tmp/err")
  outcome_set <"$tmp/out" >"$tmp/plain"
  plain=$(grep -c '"schedule":' "$tmp/out")
  same "$prog: the same outcomes pruned ($pruned schedules) and plain ($plain), bound $k" "$tmp/plain" "$tmp/pruned"
  if [ "$pruned" -le "$plain" ]; then ok; else fail "$prog bound $k" "pruning explored more: $pruned > $plain"; fi
done

# ---- inspectTVar and inspectMVar are no scheduling points: exhaustive
# search finds as many schedules with them as with `return`s in their
# place, and more with readTVarIO and tryReadMVar there ----
count_schedules() {
  (cd "$tmp" && "$simvm" --explore 100000 --strategy exhaustive --preemptions 3 --no-shrink --schedule-out /dev/null \
     --json "$1" | grep -c '"schedule":')
}
sed -e 's/inspectTVar(tv)/return 0/; s/inspectMVar(m)/return none/' "$tmp/inspect.sim" >"$tmp/inspect_none.sim"
sed -e '/^--/d; s/inspectTVar/readTVarIO/; s/inspectMVar/tryReadMVar/' "$tmp/inspect.sim" >"$tmp/inspect_io.sim"
counts="$(count_schedules inspect.sim) $(count_schedules inspect_none.sim) $(count_schedules inspect_io.sim)"
[ "$counts" = "15 15 42" ] && ok || fail "inspectTVar: no scheduling point" "schedules $counts, expected 15 15 42"

# ---- the net module's draws are choices: examples/election.sim, whose
# split brain needs a clock skew past the lease margin ----
cp "$root/examples/election.sim" "$tmp/"
run "election: skew 2ms passes" 0 "$simvm" --explore 300 --no-shrink --schedule-out /dev/null election.sim 2 &&
  { grep -q '^  300  pass  main returned ()$' "$tmp/out" && ok || fail "election 2ms" "$(sed -n 2,3p "$tmp/out")"; }
run "election: skew 5ms splits the brain" 1 "$simvm" --explore 300 --schedule-out split.schedule election.sim 5 &&
  { grep -q 'FAIL  election.sim:42: assertion failed: split brain: a leads while c still leads$' "$tmp/out" &&
      grep -q 'it fails with 1 chosen random draw' "$tmp/out" && ok || fail "election 5ms" "$(sed -n 2,8p "$tmp/out")"; }
run "election: the shrunk split replays" 1 "$simvm" --replay split.schedule election.sim 5

# ---- scale: --jobs and --shard ----
strip_wall() { sed 's/, "wall_seconds": [0-9.]*//' "$1"; }
run "--jobs 1" 1 "$simvm" --explore 2000 --json --schedule-out jobs.schedule lost_update.sim &&
  strip_wall "$tmp/out" >"$tmp/jobs1" && mv "$tmp/jobs.schedule" "$tmp/j1.schedule"
run "--jobs 3" 1 "$simvm" --explore 2000 --jobs 3 --json --schedule-out jobs.schedule lost_update.sim &&
  strip_wall "$tmp/out" >"$tmp/jobs3" && mv "$tmp/jobs.schedule" "$tmp/j3.schedule"
same "--jobs 3 gives what --jobs 1 gives" "$tmp/jobs1" "$tmp/jobs3"
same "--jobs 3 writes the same schedule" "$tmp/j1.schedule" "$tmp/j3.schedule"
: >"$tmp/shards"
for i in 1 2 3 4; do
  run "--shard $i/4" 1 "$simvm" --explore 2000 --shard "$i/4" --json --schedule-out /dev/null lost_update.sim &&
    cat "$tmp/out" >>"$tmp/shards"
done
grep -v '^{"summary"' "$tmp/shards" | LC_ALL=C sort >"$tmp/shard_runs"
grep -v '^{"summary"' "$tmp/jobs1" | LC_ALL=C sort >"$tmp/whole_runs"
same "--shard 1/4..4/4: the runs of the whole" "$tmp/whole_runs" "$tmp/shard_runs"
# tools/merge.jq (docs/EXPLORE.md) merges the shards into the unsharded
# summary's counts; shards of another program, or missing, are an error
jq -c -s -f "$root/tools/merge.jq" "$tmp/shards" |
  jq -c '.merged | {schedules, failures, outcomes, coverage}' >"$tmp/merged"
grep '^{"summary"' "$tmp/jobs1" | jq -c '.summary | {schedules, failures,
  outcomes: (.outcomes | map({outcome, kind, place, description, count, first})),
  coverage: (.coverage | {distinct_schedules, outcome_classes, steps, deviations, choices, faults})}' >"$tmp/unsharded"
same "--shard: tools/merge.jq gives the unsharded summary's counts" "$tmp/unsharded" "$tmp/merged"
(cd "$tmp" && "$simvm" --explore 200 --shard 2/4 --json --schedule-out /dev/null overdraft.sim >other.jsonl)
grep -v '"shard": 2,' "$tmp/shards" >"$tmp/three.jsonl"
(cd "$tmp" && jq -s -f "$root/tools/merge.jq" three.jsonl other.jsonl >"$tmp/out" 2>"$tmp/err")
[ $? = 5 ] && grep -q 'the shards differ in their program: lost_update.sim, overdraft.sim' "$tmp/err" && ok ||
  fail "merge: another program" "$(head -1 "$tmp/err")"
(cd "$tmp" && jq -s -f "$root/tools/merge.jq" three.jsonl >"$tmp/out" 2>"$tmp/err")
[ $? = 5 ] && grep -q 'shards missing or given twice: 1, 3, 4 of 1-4' "$tmp/err" && ok ||
  fail "merge: a shard missing" "$(head -1 "$tmp/err")"
run "--shard 2/4 report" 1 "$simvm" --explore 2000 --shard 2/4 -q --schedule-out shard.schedule lost_update.sim &&
  golden "--shard 2/4 report" shard.out

# exhaustive search split: --jobs gives what one process gives, stopped
# by --explore N or not, and the shards' schedules add up to the whole
for n in 300 100000; do
  run "exhaustive --jobs 1, $n" 1 "$simvm" --explore $n --strategy exhaustive --preemptions 2 --json \
    --schedule-out ex.schedule dining.sim && strip_wall "$tmp/out" >"$tmp/ex1" && mv "$tmp/ex.schedule" "$tmp/ex1.schedule"
  run "exhaustive --jobs 3, $n" 1 "$simvm" --explore $n --strategy exhaustive --preemptions 2 --jobs 3 --json \
    --schedule-out ex.schedule dining.sim && strip_wall "$tmp/out" >"$tmp/ex3" && mv "$tmp/ex.schedule" "$tmp/ex3.schedule"
  same "exhaustive --jobs 3 gives what --jobs 1 gives ($n)" "$tmp/ex1" "$tmp/ex3"
  same "exhaustive --jobs 3 writes the same schedule ($n)" "$tmp/ex1.schedule" "$tmp/ex3.schedule"
done
: >"$tmp/exshards"
for i in 1 2 3; do # a shard fails or not, as its slice has it
  (cd "$tmp" && "$simvm" --explore 100000 --strategy exhaustive --preemptions 2 --shard "$i/3" --json --no-shrink \
     --schedule-out /dev/null dining.sim >>"$tmp/exshards")
done
grep -v '^{"summary"' "$tmp/exshards" | sed 's/^{"schedule": [0-9]*, //' | LC_ALL=C sort >"$tmp/exshard_runs"
grep -v '^{"summary"' "$tmp/ex1" | sed 's/^{"schedule": [0-9]*, //' | LC_ALL=C sort >"$tmp/exwhole_runs"
same "exhaustive --shard 1/3..3/3: the runs of the whole" "$tmp/exwhole_runs" "$tmp/exshard_runs"
abandoned=$(grep '^{"summary"' "$tmp/exshards" | jq -s 'map(.summary.abandoned) | add')
[ "$abandoned" = "$(grep '^{"summary"' "$tmp/ex1" | jq '.summary.abandoned')" ] && ok ||
  fail "exhaustive --shard: abandoned runs" "$abandoned in all, not the whole's"

# ---- the progress line: on a terminal only ----
if command -v script >/dev/null 2>&1; then
  (cd "$tmp" && SHELL=/bin/sh script -qec "'$simvm' --explore 20000 -q --schedule-out p.schedule overdraft.sim" /dev/null >"$tmp/tty" 2>&1)
  tr '\r' '\n' <"$tmp/tty" | sed 's/\x1b\[K//' >"$tmp/tty_lines"
  # a line at least every 0.25 s (there may be none in a quick sweep), cleared at the end
  if grep -q $'\x1b\[K' "$tmp/tty" && ! grep -v '^$' "$tmp/tty_lines" | grep -v '^simvm --explore\|^  \|^[0-9]* of\|^coverage: \|^choices: \|^[0-9]*\. \|^   ' |
       grep -q .; then ok; else fail "progress line" "$(head -3 "$tmp/tty_lines")"; fi
  if grep '^  [0-9]* schedules, ' "$tmp/tty_lines" | grep -qv '^  [0-9]* schedules, [0-9]* per second, [0-9]* failing$'; then
    fail "progress line" "malformed: $(grep '^  [0-9]* schedules, ' "$tmp/tty_lines" | head -1)"; else ok; fi
  run "no progress line off a terminal" 1 "$simvm" --explore 20000 -q --schedule-out p.schedule overdraft.sim &&
    { grep -q $'\x1b' "$tmp/err" "$tmp/out" && fail "no progress line off a terminal" "escape codes" || ok; }
fi

# ---- the JSON summary ----
run "--json summary" 1 "$simvm" --explore 100 --json overdraft.sim && grep '^{"summary"' "$tmp/out" |
  sed 's/, "wall_seconds": [0-9.]*//' >"$tmp/summary" && cp "$tmp/summary" "$tmp/out" && golden "--json summary" json_summary.out
run "--json runs" 1 "$simvm" --explore 100 --json overdraft.sim && head -3 "$tmp/out" >"$tmp/runs" &&
  cp "$tmp/runs" "$tmp/out" && golden "--json run lines" json_runs.out

# ---- outcomes of every kind ----
golden_run "all pass" 0 counter.out "$simvm" --explore 50 counter.sim
golden_run "random numbers do not depend on the schedule" 0 random_streams.out "$simvm" --explore 500 \
  --strategy exhaustive random_streams.sim
golden_run "a step limit is not a failure" 0 spin.out "$simvm" --explore 100 --strategy exhaustive --preemptions 1 -q \
  spin.sim
golden_run "--fail-on limit" 1 spin_fail.out "$simvm" --explore 100 --strategy exhaustive --preemptions 1 -q \
  --fail-on limit --schedule-out spin.schedule spin.sim
golden_run "--fail-on uncaught" 1 uncaught.out "$simvm" --explore 50 --fail-on uncaught uncaught.sim
golden_run "--strict-shutdown" 1 strict.out "$simvm" --explore 50 --strict-shutdown -q strict.sim
golden_run "random strategy" 1 random.out "$simvm" --explore 200 --strategy random -q overdraft.sim
golden_run "--no-shrink" 1 no_shrink.out "$simvm" --explore 100 --no-shrink --schedule-out raw.schedule overdraft.sim
devs=$(sed -n 's/^1\. .*, has \([0-9]*\) deviation.*/\1/p' "$tmp/out")
[ "$(grep -c '^step ' "$tmp/raw.schedule")" = "$devs" ] && ok || fail "--schedule-out" "raw.schedule lacks its $devs deviations"
golden_run "--depth 2, --seed 50" 1 depth.out "$simvm" --explore 30 --depth 2 --seed 50 -q dining.sim
golden_run "exhaustive example" 1 exhaustive.out "$simvm" --explore 1000 --strategy exhaustive dining.sim
golden_run "delay bounding" 1 delay.out "$simvm" --explore 1000 --strategy delay -q dining.sim
golden_run "delay bounding, exhausted" 0 delay_all.out "$simvm" --explore 100000 --strategy delay --preemptions 2 counter.sim
# a seed that loops stops where --explore stopped it
run "--seed 6 stops at the exploration's step limit" 5 "$simvm" --seed 6 -q spin.sim &&
  { [ "$(cat "$tmp/err")" = "simvm: step limit reached: at least 1000000 instructions executed (--max-steps)" ] && ok ||
    fail "--seed 6 step limit" "stderr: $(head -1 "$tmp/err")"; }
# the schedule of a --fail-on uncaught failure carries the option
run "replay --fail-on uncaught" 1 "$simvm" --replay uncaught.schedule uncaught.sim &&
  grep -q '^option --fail-on uncaught$' "$tmp/uncaught.schedule" && ok

# ---- bad input ----
bad "unknown strategy" 2 "simvm: --strategy takes pct, random, exhaustive or delay (or dfs, unpruned), not 'fair'" \
  --explore 10 --strategy fair overdraft.sim
bad "--shard 5/4" 2 "simvm: --shard needs I/N with 1 <= I <= N (the I-th of N slices of the seeds), not '5/4'" \
  --explore 10 --shard 5/4 overdraft.sim
bad "--shard 0/4" 2 "simvm: --shard needs I/N with 1 <= I <= N (the I-th of N slices of the seeds), not '0/4'" \
  --explore 10 --shard 0/4 overdraft.sim
bad "seed not a number" 2 "simvm: --seed needs a whole number, not 'seven'" --seed seven overdraft.sim
bad "negative seed" 2 "simvm: --seed needs a whole number, not '-1'" --seed -1 overdraft.sim
bad "--explore 0" 2 "simvm: --explore needs a positive whole number of schedules, not '0'" --explore 0 overdraft.sim
bad "--json alone" 2 "simvm: --json needs --explore" --json overdraft.sim
bad "--jobs exhaustive, unbounded" 2 "simvm: --jobs and --shard split an exhaustive search bound by bound: give its last bound, --preemptions K" \
  --explore 10 --strategy exhaustive --jobs 2 overdraft.sim
bad "--shard delay" 2 "simvm: --jobs and --shard split seeds or the exhaustive search's tree; delay bounding runs in one process" \
  --explore 10 --strategy delay --shard 1/2 overdraft.sim
bad "--explore --replay" 2 "simvm: --replay runs one schedule: it cannot be combined with --explore" \
  --explore 10 --replay overdraft.schedule overdraft.sim
bad "--explore --profile" 2 "simvm: --explore reports on its own: --repeat, --profile..., --trace-json, --timeline, --stats-json and --result go with single runs (--seed, --replay)" \
  --explore 10 --profile overdraft.sim
bad "--strategy alone" 2 "simvm: --strategy needs --explore, or --seed for one schedule" --strategy random overdraft.sim
bad "--seed exhaustive" 2 "simvm: --seed runs one schedule of pct or random; exhaustive and delay search need --explore" \
  --seed 3 --strategy exhaustive overdraft.sim
bad "--replay --seed" 2 "simvm: --replay runs the schedule its file gives: no --seed or --strategy with it" \
  --replay overdraft.schedule --seed 2 overdraft.sim
bad "--preemptions x" 2 "simvm: --preemptions needs a whole number (0 or more), not 'x'" --explore 5 --preemptions x overdraft.sim
bad "--jobs 0" 2 "simvm: --jobs needs a number of processes from 1 to 1024, not '0'" --explore 5 --jobs 0 overdraft.sim
bad "--schedule-out alone" 2 "simvm: --schedule-out needs --explore" --schedule-out x.schedule overdraft.sim
bad "--schedule-out unwritable" 2 "simvm: cannot write 'nodir/x.schedule': No such file or directory" --explore 20 -q \
  --schedule-out nodir/x.schedule overdraft.sim && { grep -q 'written' "$tmp/out" && fail "--schedule-out unwritable" \
  "says it wrote the file" || ok; }
bad "--depth 0" 2 "simvm: --depth needs a whole number from 1 to 1000, not '0'" --explore 5 --depth 0 overdraft.sim
bad "missing schedule" 2 "simvm: cannot open 'nothing.schedule': No such file or directory" --replay nothing.schedule overdraft.sim
mkdir -p "$tmp/adir"
bad "a directory as schedule" 2 "simvm: cannot read 'adir': it is a directory" --replay adir overdraft.sim
bad "--schedule-out the script" 2 "simvm: --schedule-out 'overdraft.sim' is the script itself: an output must not overwrite an input" --explore 5 \
  --schedule-out overdraft.sim overdraft.sim
bad "--preemptions with pct" 2 "simvm: --preemptions bounds exhaustive, dfs and delay search, not pct or random" \
  --explore 5 --preemptions 2 overdraft.sim
head -c 3000 /dev/zero >"$tmp/zeros.schedule"
bad "NUL bytes" 3 "simvm: zeros.schedule:1: not a text file (a NUL byte)" --replay zeros.schedule overdraft.sim
# a stream that never ends in a newline: read a line at a time, bounded
# (getline grew its buffer for as long as /dev/zero gave bytes: a hang
# tests/fuzz/cli_fuzz.py found)
bad "--replay /dev/zero" 3 "simvm: /dev/zero:1: not a text file (a NUL byte)" --replay /dev/zero overdraft.sim
head -c 17000000 /dev/zero | tr '\0' x >"$tmp/longline.schedule"
bad "a line past 16 MB" 3 "simvm: longline.schedule:1: line too long" --replay longline.schedule overdraft.sim
bad "another program" 3 "simvm: overdraft.schedule is a schedule for overdraft.sim, not dining.sim" \
  --replay overdraft.schedule dining.sim
hash=$(sed -n 's/^program overdraft.sim //p' "$tmp/overdraft.schedule")
printf 'step 1 at 0ns runs 2\n' >"$tmp/noheader.schedule"
bad "no header" 3 "simvm: noheader.schedule:1: not a simvm schedule file (its first line must be 'simvm-schedule 2')" \
  --replay noheader.schedule overdraft.sim
: >"$tmp/empty.schedule"
bad "empty file" 3 "simvm: empty.schedule: not a simvm schedule file (it is empty)" --replay empty.schedule overdraft.sim
printf 'simvm-schedule 1\nseed 1\n' >"$tmp/noprogram.schedule"
bad "no program" 3 "simvm: noprogram.schedule: no 'program' line" --replay noprogram.schedule overdraft.sim
printf 'simvm-schedule 1\nprogram overdraft.sim %s\nstep two at 0ns runs 2\n' "$hash" >"$tmp/badstep.schedule"
bad "malformed step" 3 "simvm: badstep.schedule:3: malformed step line: 'step two at 0ns runs 2' (it should read 'step N at TIME runs THREAD')" \
  --replay badstep.schedule overdraft.sim
# a number too large for its field is out of range, not malformed
range_case() { # NAME LINE MESSAGE
  printf 'simvm-schedule 2\nprogram overdraft.sim %s\n%s\n' "$hash" "$2" >"$tmp/range.schedule"
  bad "$1" 3 "simvm: range.schedule:3: $3" --replay range.schedule overdraft.sim
}
range_case "step out of range" "step 99999999999 at 0ns runs 2" "a step number out of range (from 1 to 1000000000): 'step 99999999999 at 0ns runs 2'"
range_case "time out of range" "step 4 at 99999999999999999999ns runs 2" "a time out of range (at most 9223372036854775807ns): 'step 4 at 99999999999999999999ns runs 2'"
range_case "seed out of range" "seed 99999999999999999999" "a seed out of range (at most 18446744073709551615): 'seed 99999999999999999999'"
range_case "choice number out of range" "random main#99999999999 = 1 of 6" "a choice number out of range (T#N: N from 1 to 1000000000): 'random main#99999999999 = 1 of 6'"
range_case "random range out of range" "random main#1 = 1 of 99999999999999999999" "a random range n out of range (from 1 to 9223372036854775807): 'random main#1 = 1 of 99999999999999999999'"
range_case "duration out of range" "delay main#1 = 99999999999s of 5ms" "a duration out of range (at most 9223372036854775807ns): 'delay main#1 = 99999999999s of 5ms'"
# seeds do not wrap, and a shard with no seeds is refused
bad "--seed past the last" 2 "simvm: --seed 18446744073709551615 with --explore 5 is out of range: the seeds would pass 18446744073709551615" \
  --seed 18446744073709551615 --explore 5 overdraft.sim
bad "--shard with no seeds" 2 "simvm: --shard 1024/1024 gets none of --explore 10's seeds: slice I has seeds only when I <= the number of schedules" \
  --shard 1024/1024 --explore 10 overdraft.sim
run "--seed the last" 1 "$simvm" --seed 18446744073709551615 --explore 1 -q --schedule-out /dev/null overdraft.sim &&
  { grep -q ', seed 18446744073709551615$' "$tmp/out" && ok || fail "--seed the last" "$(head -1 "$tmp/out")"; }
printf 'simvm-schedule 1\nprogram overdraft.sim %s\nstep 4 at 0ns runs 2.x\n' "$hash" >"$tmp/badid.schedule"
bad "bad thread id" 3 "simvm: badid.schedule:3: malformed step line: 'step 4 at 0ns runs 2.x' (it should read 'step N at TIME runs THREAD')" \
  --replay badid.schedule overdraft.sim
printf 'simvm-schedule 1\nprogram overdraft.sim %s\nstep 4 at 0ns runs 2\nstep 3 at 0ns runs 1\n' "$hash" >"$tmp/order.schedule"
bad "steps out of order" 3 "simvm: order.schedule:4: steps must increase: 'step 3 at 0ns runs 1'" \
  --replay order.schedule overdraft.sim
printf 'simvm-schedule 1\nprogram overdraft.sim %s\nwobble\n' "$hash" >"$tmp/unknown.schedule"
bad "unknown line" 3 "simvm: unknown.schedule:3: unknown line: 'wobble'" --replay unknown.schedule overdraft.sim
printf 'simvm-schedule 1\nprogram overdraft.sim %s\noption --fast\n' "$hash" >"$tmp/option.schedule"
bad "unknown option" 3 "simvm: option.schedule:3: unknown option line: 'option --fast'" --replay option.schedule overdraft.sim
# a program that does not load fails as a plain run would
printf 'x = 1\n' >"$tmp/nomain.sim"
bad "--explore, no main" 3 "simvm: error: the program defines no 'main' (write \`main = { ... }\`)" --explore 5 nomain.sim
printf 'x = 1 / 0\nmain = say(x)\n' >"$tmp/toperr.sim"
bad "--explore, a top level fails" 1 "toperr.sim:1: runtime error: division by zero" --explore 5 toperr.sim
bad "--replay, a top level fails" 1 "toperr.sim:1: runtime error: division by zero" --replay overdraft.schedule toperr.sim
# schedules that no longer match: where they stop matching
mismatch() { # NAME STEP-LINE MESSAGE
  printf 'simvm-schedule 1\nprogram overdraft.sim %s\nseed 1\nstep 1 at 0ns runs 1\n%s\n' "$hash" "$2" >"$tmp/m.schedule"
  bad "$1" 3 "$3" --replay m.schedule overdraft.sim
}
mismatch "mismatch: time" "step 3 at 5us runs 2" \
  "simvm: m.schedule no longer matches overdraft.sim: it stopped matching at deviation 2: it is for step 3 at 5us, but step 3 is at 0ns"
mismatch "mismatch: not runnable" "step 3 at 0ns runs 7" \
  "simvm: m.schedule no longer matches overdraft.sim: it stopped matching at deviation 2: at step 3 (0ns) thread 7 is not among the runnable threads (1 (alice), main)"
mismatch "mismatch: the default" "step 3 at 0ns runs 1" \
  "simvm: m.schedule no longer matches overdraft.sim: it stopped matching at deviation 2: at step 3 (0ns) thread 1 would run anyway"
mismatch "mismatch: too late" "step 90 at 0ns runs 2" \
  "simvm: m.schedule no longer matches overdraft.sim: it stopped matching at deviation 2: the run ended after step 11, before step 90"
# a changed program replays with a note naming what changed (a constant
# counts), and one that no longer ends the same way is exit status 3
mkdir -p "$tmp/changed"
sed 's/"bob", 60/"bob", 65/' "$tmp/overdraft.sim" >"$tmp/changed/overdraft.sim"
cp "$tmp/overdraft.schedule" "$tmp/changed/"
run "changed program" 1 "$simvm" --replay changed/overdraft.schedule changed/overdraft.sim &&
  { [ "$(head -1 "$tmp/err")" = "simvm: note: overdraft.sim has changed since changed/overdraft.schedule was written (main changed); replaying it anyway" ] && ok ||
    fail "changed program" "stderr: $(head -1 "$tmp/err")"; }
sed 's/"bob", 60/"bob", 160/' "$tmp/overdraft.sim" >"$tmp/changed/overdraft.sim"
run "changed outcome" 3 "$simvm" --replay changed/overdraft.schedule changed/overdraft.sim &&
  { [ "$(tail -1 "$tmp/err")" = "simvm: overdraft.sim ended differently than changed/overdraft.schedule records: it records assertion at overdraft.sim:34, but this run's outcome is pass (main returned ())" ] && ok ||
    fail "changed outcome" "stderr: $(tail -1 "$tmp/err")"; }

# a signal stops a sweep at the next schedule: the report of the schedules
# run so far, marked, and exit 128 + the signal; with --jobs the processes
# are stopped too (the script's copy has a name no other process has)
# interrupted NAME SIGNAL STATUS ARGS...: sent after a second
interrupted() {
  local name=$1 sig=$2 status=$3
  shift 3
  (cd "$tmp" && timeout --preserve-status -s "$sig" 1 "$simvm" --explore 1000000000 "$@" >"$tmp/out" 2>"$tmp/err")
  local got=$?
  if [ "$got" != "$status" ]; then fail "$name" "exit status $got, expected $status"; return; fi
  if grep -qE "^interrupted by SIG$sig after [0-9]+ schedules of --explore 1000000000\$" "$tmp/out" ||
     grep -qE "\"interrupted\": \"SIG$sig\", \"schedules\": [0-9]+," "$tmp/out"; then ok; else
    fail "$name" "no report line: $(head -3 "$tmp/out" | tr '\n' '|')"
  fi
  if pgrep -f sigjobs.sim >/dev/null; then fail "$name" "a --jobs process is still running"; fi
}
cp "$tmp/overdraft.sim" "$tmp/sigjobs.sim"
interrupted "SIGINT --explore" INT 130 -q --schedule-out sig.schedule sigjobs.sim
interrupted "SIGTERM --explore" TERM 143 -q --schedule-out sig.schedule sigjobs.sim
interrupted "SIGINT --jobs" INT 130 -q --jobs 2 --schedule-out sig.schedule sigjobs.sim
interrupted "SIGTERM --jobs --json" TERM 143 --json --jobs 2 --schedule-out sig.schedule sigjobs.sim
interrupted "SIGINT exhaustive --jobs" INT 130 -q --strategy exhaustive --preemptions 30 --jobs 2 --schedule-out sig.schedule dining.sim
interrupted "SIGINT delay" INT 130 -q --strategy delay --schedule-out sig.schedule dining.sim
# the failing class found before the signal is written, as found
grep -q '^simvm-schedule 2$' "$tmp/sig.schedule" && ok || fail "interrupted schedule" "no schedule written"

# a schedule written to a device is written in place, not renamed over it
# (the runs above wrote to /dev/null)
[ -c /dev/null ] && ok || fail "--schedule-out /dev/null" "/dev/null is no longer a device"

echo "explore: $passed passed, $failed failed"
[ "$failed" = 0 ]
