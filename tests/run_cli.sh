#!/bin/bash
# Command-line tests for simvm and simc: usage errors, help, version, exit
# statuses and the exact first line of each message.
# usage: run_cli.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

# expect NAME STATUS FIRST-LINE-OF-OUTPUT COMMAND...   (stdout and stderr together)
expect() {
  local name=$1 status=$2 first=$3
  shift 3
  (cd "$tmp" && timeout -k 5 10 "$@") >"$tmp/out" 2>&1
  local got=$?
  local line
  line=$(head -n 1 "$tmp/out")
  if [ "$got" = "$status" ] && [ "$line" = "$first" ]; then
    passed=$((passed + 1))
  else
    echo "FAIL $name: exit $got (want $status), first line: $line"
    echo "     want: $first"
    failed=$((failed + 1))
  fi
}

simvm=$build/simvm
simc=$build/simc
printf 'main = say("hi")\n' >"$tmp/hi.sim"
printf 'fn f(x) = x\nmain = {\n  delay(1us)\n  say(f(1))\n}\n' >"$tmp/prog.sim"
printf 'main = {\n' >"$tmp/broken.sim"
printf 'main = return 41 + 1\n' >"$tmp/answer.sim"
mkdir "$tmp/dir.sim"
printf 'fn f(n) = fork(f(n + 1)) >> delay(1s)\nmain = f(0)\n' >"$tmp/bomb.sim"
printf 'fn g(xs) = g(cons(1, xs))\nmain = say(g([]))\n' >"$tmp/grow.sim"
printf 'main = {\n  fork(delay(1s))\n  return 7\n}\n' >"$tmp/leave.sim"
printf 'main = {\n  fork(delay(1s))\n  delay(2s)\n}\n' >"$tmp/wait.sim"

# the collector runs at every allocation while the profiler, the timeline
# and both traces record a program that forks, labels and drops garbage
# (under make asan this catches any object they keep without a root)
cat >"$tmp/gc.sim" <<'EOF'
fn loop(i, xs) = if i == 0 then length(xs) else loop(i - 1, if i % 10 == 0 then [i] else cons(i, xs))
fn worker(n) {
  me <- myThreadId()
  labelThread(me, "w" ++ show(n))
  delay(1us)
  say(show(loop(60, [])))
}
main = {
  forM_(range(0, 3), fn(i) => fork(worker(i)))
  let n = loop(100, [])
  delay(2us)
  say(n)
}
EOF

cat >"$tmp/stats.sim" <<'EOF'
import "stats"
main = {
  st <- newStats()
  busy <- gauge(st, "busy")
  w <- samples(st, "wait")
  d <- counter(st, "done")
  i <- samples(st, "idle")
  setGauge(busy, 1)
  delay(2ms)
  setGauge(busy, 0)
  observe(w, 1ms)
  observe(w, 2ms)
  incr(d, 1)
  delay(1ms)
  statsReport(st)
}
EOF
cat >"$tmp/tick.sim" <<'EOF'
fn tick(n) {
  delay(1ms)
  say("tick " ++ show(n))
  tick(n + 1)
}
fn idle() { delay(1s); idle() }
main = {
  t <- fork(tick(0))
  labelThread(t, "ticker")
  idle()
}
EOF
printf 'fn grow(s, n) = if n == 0 then s else grow(s ++ s, n - 1)\nmain = say(length(grow("ab", 20)))\n' >"$tmp/double.sim"

expect "no arguments"        2 "simvm: no script given" "$simvm"
expect "unknown option"      2 "simvm: unknown option '--frobnicate'" "$simvm" --frobnicate hi.sim
expect "max-steps value"     2 "simvm: --max-steps needs a positive whole number, not 'ten'" "$simvm" --max-steps ten hi.sim
expect "max-steps missing"   2 "simvm: --max-steps needs a number" "$simvm" --max-steps
expect "max-time value"      2 "simvm: --max-time needs a duration such as 10s, 500ms or 2us, not '10'" "$simvm" --max-time 10 hi.sim
expect "missing file"        2 "simvm: cannot open 'nope.sim': No such file or directory" "$simvm" nope.sim
expect "directory"           2 "simvm: cannot read 'dir.sim': Is a directory" "$simvm" dir.sim
expect "help"                0 "usage: simvm [options] file.sim [args...]" "$simvm" --help
expect "version"             0 "simvm 0.1.0" "$simvm" --version
expect "run"                 0 "hi" "$simvm" hi.sim
expect "result"              0 "42" "$simvm" -q --result answer.sim
expect "compile error"       3 "broken.sim:2:1: error: syntax error, unexpected end of file (the '{' at line 1, column 8 is not closed)" "$simvm" broken.sim
expect "options after --"    0 "hi" "$simvm" -- hi.sim
expect "max-threads"         5 "simvm: thread limit reached: 100 threads alive (--max-threads)" "$simvm" --max-threads 100 bomb.sim
expect "max-heap"            0 "simvm: heap limit reached: N bytes in use (--max-heap) 5" \
  sh -c "'$simvm' --max-heap 10MB grow.sim 2>&1 | sed 's/[0-9]* bytes/N bytes/' | tr '\\n' ' '; '$simvm' --max-heap 10MB grow.sim 2>/dev/null; echo \$?"
expect "max-heap value"      2 "simvm: --max-heap needs a size such as 512MB, 2GB or 100000KB, not '10'" "$simvm" --max-heap 10 grow.sim
expect "profile files"       0 "ok" sh -c "'$simvm' -q --profile-json p.json --profile-folded p.folded --trace-json t.jsonl --timeline t.json prog.sim && grep -q '\"instructions\": ' p.json && grep -q '^main;<thread>' p.folded && grep -q '\"event\": \"delay\"' t.jsonl && grep -q traceEvents t.json && echo ok"
expect "timeline tracks"     0 "51" sh -c "'$simvm' -q --timeline tl.json '$root/bench/seed/async.sim' 50 && grep -c '\"name\": \"thread_name\"' tl.json"
expect "profile text"        0 "simvm profile (every count is deterministic; only wall and GC times vary)" sh -c "'$simvm' -q --profile prog.sim 2>&1"
expect "repeat"              0 "run 1: 11 instructions, 4 events (with the load)" sh -c "'$simvm' -q --repeat 3 prog.sim 2>&1 | head -1 | sed 's/[0-9.]* us, //'"
expect "repeat lines"        0 "run 2: 11 instructions, 4 events|run 3: 11 instructions, 4 events|runs: 3, median per run; 11 instructions and 4 events per run" sh -c "'$simvm' -q --repeat 3 prog.sim 2>&1 | tail -n +2 | sed 's/[0-9.]* us[ a-z]*, //; s/ median.* per run (runs 2-3), cpu median [0-9.]* us;/ median per run;/' | tr '\\n' '|' | sed 's/|\$//'"
expect "repeat batches"      0 "runs: 200, batched, 11 instructions and 4 events per run" sh -c "'$simvm' -q --repeat 200 prog.sim 2>&1 | tail -1 | sed -n 's/^runs: 200, median .* per run (runs 2-200 in batches of up to [0-9]*), cpu median [0-9.]* us; \\(.*\\)/runs: 200, batched, \\1/p'"
expect "trace=bogus"         2 "simvm: --trace= takes user or all, not 'bogus'" "$simvm" --trace=bogus hi.sim
expect "trace=all"           0 "       0ns  main         mask MaskedInterruptible" sh -c "printf 'main = mask_(return ())\\n' >m.sim && '$simvm' --trace=all m.sim"
expect "trace=user"          0 "       0ns  main         exit" sh -c "printf 'main = mask_(return ())\\n' >m.sim && '$simvm' --trace=user m.sim"
expect "fail-on value"       2 "simvm: --fail-on takes uncaught, limit or both (uncaught,limit), not 'deaths'" "$simvm" --fail-on deaths hi.sim
expect "fail-on missing"     2 "simvm: --fail-on needs a list of failures (uncaught, limit)" "$simvm" --fail-on
expect "strict shutdown"     1 "simvm: strict shutdown: main finished at 0ns with 1 thread still alive (--strict-shutdown)" "$simvm" --strict-shutdown leave.sim
expect "strict -q --result"  1 "simvm: strict shutdown: main finished at 0ns with 1 thread still alive (--strict-shutdown)" "$simvm" -q --result --strict-shutdown leave.sim
expect "strict, no threads"  0 "42" "$simvm" --strict-shutdown -q --result answer.sim
# runs reuse the heap's blocks and the VM's arrays: a program that fills
# many blocks, with strings, TVars and a collection, says the same each run
cat >"$tmp/churn.sim" <<'EOF'
fn build(n, acc) = if n == 0 then acc else build(n - 1, cons(show(n) ++ "!", acc))
main = {
  v <- newTVar(0)
  atomically(writeTVar(v, length(build(30000, []))))
  n <- readTVarIO(v)
  say(n)
}
EOF
expect "repeat reuses memory" 0 "4 30000" sh -c "'$simvm' --repeat 4 churn.sim 2>/dev/null | uniq -c | sed 's/^ *//'"
expect "strict --repeat"     0 "exit 1 after 1 run" sh -c "out=\$('$simvm' --repeat 3 --strict-shutdown leave.sim 2>&1); echo \"exit \$? after \$(echo \"\$out\" | grep -c '^run ') run\""
expect "strict --profile"    0 "exit 1, report and profile" sh -c "out=\$('$simvm' -q --strict-shutdown --profile leave.sim 2>&1); echo \"exit \$?, \$(echo \"\$out\" | grep -c '^simvm: strict shutdown\|^simvm profile' | sed 's/^2\$/report and profile/')\""
expect "strict --max-time"   5 "simvm: time limit reached: the next event is after 1us (--max-time)" "$simvm" --strict-shutdown --max-time 1us wait.sim
expect "gc-stressed writers"  0 "ok" sh -c "SIMVM_GC_STRESS=1 '$simvm' --trace --profile --profile-json g.json --profile-folded g.folded --timeline g.tl --trace-json g.jsonl gc.sim >g.out && SIMVM_GC_STRESS=1 '$simvm' -q --profile gc.sim 2>g.err && grep -q '^main;<thread>;main ' g.folded && grep -q '\"name\": \"loop\"' g.json && grep -q '\"2 (w1)\"' g.tl && [ \$(grep -c '\"event\": \"say\"' g.jsonl) = 4 ] && grep -q '^       2us  main         say \"10\"' g.out && grep -q '^  3 (w2) ' g.err && echo ok"
expect "output error"        2 "simvm: cannot write output: No space left on device" sh -c "'$simvm' hi.sim >/dev/full"
expect "trace-json error"    2 "simvm: cannot write '/dev/full': No space left on device" "$simvm" -q --trace-json /dev/full tick.sim
# --stats-json: the statistics statsReport last handed over, as one line of JSON
# (durations in nanoseconds); null when none was; never over an input
expect "stats-json"          0 '{"time": 3000000, "statistics": [{"name": "busy", "kind": "gauge", "count": 2, "value": 0, "mean": 0.6666666666666666, "stddev": 0.4714045207910317, "min": 0, "max": 1, "observed": 3000000}, {"name": "done", "kind": "counter", "count": 1}, {"name": "idle", "kind": "samples", "count": 0}, {"name": "wait", "kind": "samples", "count": 2, "unit": "duration", "mean": 1500000, "stddev": 500000, "min": 1000000, "p50": 1000000, "p90": 2000000, "p99": 2000000, "max": 2000000}]}' \
  sh -c "'$simvm' -q --stats-json s.json stats.sim && cat s.json"
expect "stats-json none"     0 "null" sh -c "'$simvm' --stats-json n.json hi.sim >/dev/null && cat n.json"
expect "stats-json input"    2 "simvm: --stats-json 'stats.sim' is the script itself: an output must not overwrite an input" "$simvm" --stats-json stats.sim stats.sim
expect "stats-json error"    2 "simvm: cannot write '/dev/full': No space left on device" "$simvm" -q --stats-json /dev/full stats.sim
# an output that is an input is refused before anything is written, the
# input left whole (by device and inode: another name is caught too)
for opt in --trace-json --timeline --profile-json --profile-folded; do
  expect "$opt over the script" 2 "simvm: $opt 'prog.sim' is the script itself: an output must not overwrite an input same" \
    sh -c "cp prog.sim keep.sim; '$simvm' $opt prog.sim prog.sim 2>o.err; s=\$?; echo \$(head -n 1 o.err) \$(cmp -s prog.sim keep.sim && echo same); exit \$s"
done
expect "output by another name" 2 "simvm: --timeline './hi.sim' is the script itself: an output must not overwrite an input" "$simvm" --timeline ./hi.sim hi.sim
expect "output over a link"  2 "simvm: --trace-json 'link.sim' is the script itself: an output must not overwrite an input" sh -c "ln -sf hi.sim link.sim && '$simvm' --trace-json link.sim hi.sim"
expect "output over --replay" 2 "simvm: --profile-json 'r.schedule' is the --replay file: an output must not overwrite an input kept" \
  sh -c "echo keep >r.schedule; '$simvm' --replay r.schedule --profile-json r.schedule hi.sim 2>o.err; s=\$?; echo \$(head -n 1 o.err) \$(grep -qx keep r.schedule && echo kept); exit \$s"
expect "simc -o the script"  2 "simc: -o 'prog.sim' is the script itself: an output must not overwrite an input same" \
  sh -c "cp prog.sim keep.sim; '$simc' -o prog.sim prog.sim 2>o.err; s=\$?; echo \$(head -n 1 o.err) \$(cmp -s prog.sim keep.sim && echo same); exit \$s"
# every output file is written beside its path and renamed over it: a
# hard link to the old file keeps the old contents, and no temporary
# file is left; a device is written in place
expect "outputs renamed into place" 0 "old old old old old 0 ok" sh -c "for f in a.jsonl a.tl a.json a.folded a.simc; do echo old >\$f; ln -f \$f \$f.link; done; '$simvm' -q --trace-json a.jsonl --timeline a.tl --profile-json a.json --profile-folded a.folded prog.sim && '$simc' -o a.simc prog.sim && echo \$(cat a.jsonl.link a.tl.link a.json.link a.folded.link a.simc.link) \$(ls | grep -cE '\\.(jsonl|tl|json|folded|simc)\\.[A-Za-z0-9]{6}\$') \$(grep -q traceEvents a.tl && '$simvm' a.simc >/dev/null && echo ok)"
expect "outputs to a device" 0 "ok" sh -c "'$simvm' -q --trace-json /dev/null --timeline /dev/null --profile-json /dev/null prog.sim && '$simc' -o /dev/null prog.sim && [ -c /dev/null ] && echo ok"
expect "profile output error" 2 "" sh -c "'$simvm' -q --profile prog.sim 2>/dev/full"
expect "help output error"   2 "simvm: cannot write output: No space left on device" sh -c "'$simvm' --help >/dev/full"
printf 'main = { x <- random(1000000); y <- random(1000000); say([x, y]) }\n' >"$tmp/draws.sim"
expect "--data-seed: the numbers change" 0 "different" \
  sh -c "a=\$('$simvm' --data-seed 1 draws.sim); b=\$('$simvm' --data-seed 2 draws.sim); c=\$('$simvm' draws.sim); d=\$('$simvm' --data-seed 0 draws.sim); [ \"\$a\" != \"\$b\" ] && [ \"\$c\" = \"\$d\" ] && echo different"
expect "--data-seed with --seed" 2 "simvm: --data-seed seeds the random numbers of a plain run, on io-sim's schedule; --seed, --explore and --replay choose the numbers with the schedule" \
  "$simvm" --data-seed 1 --seed 1 draws.sim
expect "--data-seed value"   2 "simvm: --data-seed needs a whole number, not 'x'" "$simvm" --data-seed x draws.sim
expect "max-work value"      2 "simvm: --max-work needs a positive whole number, not '0'" "$simvm" --max-work 0 hi.sim
expect "max-work"            5 "simvm: work limit reached: at least 1000000 units of work done (--max-work)" "$simvm" --max-work 1000000 double.sim
expect "max-trace-size value" 2 "simvm: --max-trace-size needs a size such as 100MB or 2GB, not '10'" "$simvm" --max-trace-size 10 hi.sim
expect "max-trace-size"      0 "simvm: trace size limit reached: the --trace output would pass 1024 bytes (--max-trace-size) 5 ok" \
  sh -c "'$simvm' --trace --max-trace-size 1KB tick.sim >ticks 2>ticks.err; s=\$?; tr '\\n' ' ' <ticks.err; echo \$s \$([ \$(wc -c <ticks) -le 1024 ] && [ \"\$(tail -c 1 ticks | od -An -c | tr -d ' ')\" = '\\n' ] && echo ok)"
# a signal stops the run at an instruction: every output is complete, and
# where each thread is goes to stderr
expect "SIGINT"              0 "130 simvm: interrupted at T after N instructions|  thread main is X|  thread 1 (ticker) is X| ok" \
  sh -c "timeout --preserve-status -s INT 1 '$simvm' -q --trace-json i.jsonl --timeline i.tl --profile-json i.json tick.sim 2>i.err; echo \$? \"\$(sed -e 's/at [0-9]*[mun]*s after [0-9]* /at T after N /' -e 's/ is .* at tick.sim:[0-9]*\$/ is X/' i.err | tr '\\n' '|')\" \$(tail -n 1 i.tl | grep -q '^]}\$' && tail -n 1 i.json | grep -q '^}\$' && tail -n 1 i.jsonl | grep -q '}\$' && echo ok)"
expect "SIGTERM"             0 "143 simvm: terminated" \
  sh -c "timeout --preserve-status -s TERM 1 '$simvm' -q tick.sim 2>t.err; echo \$? \$(head -n 1 t.err | cut -c1-17)"
# == and show of a value sharing its parts (a tree of 2^40 leaves in 40
# cells) stop inside the one instruction: at --max-work, --max-heap for
# show's text, or a signal (issue 25, item 4)
printf 'fn build(n, x) = if n == 0 then x else build(n - 1, [x, x])\nmain = {\n  let a = build(40, 1)\n  let b = build(40, 1)\n  say(show(a == b))\n}\n' >"$tmp/shared-eq.sim"
printf 'fn build(n, x) = if n == 0 then x else build(n - 1, [x, x])\nmain = {\n  let a = build(40, 1)\n  say(length(show(a)))\n}\n' >"$tmp/shared-show.sim"
printf 'fn build(n, x) = if n == 0 then x else build(n - 1, [x, x])\nmain = error(build(40, 1))\n' >"$tmp/shared-error.sim"
printf 'fn build(n, x) = if n == 0 then x else build(n - 1, [x, x])\nmain = say(build(40, 1))\n' >"$tmp/shared-say.sim"
printf 'fn build(n, x) = if n == 0 then x else build(n - 1, [x, x])\nmain = assert(false, build(40, 1))\n' >"$tmp/shared-assert.sim"
expect "max-work: say of shared" 5 "simvm: work limit reached: at least 1000000 units of work done (--max-work)" "$simvm" --max-work 1000000 shared-say.sim
expect "max-work: assert of shared" 5 "simvm: work limit reached: at least 1000000 units of work done (--max-work)" "$simvm" --max-work 1000000 shared-assert.sim
expect "max-heap: say of shared" 0 "5 simvm: heap limit reached: N bytes in use (--max-heap)" \
  sh -c "'$simvm' --max-heap 20MB shared-say.sim 2>h.err; echo \$? \$(sed 's/: [0-9]* bytes/: N bytes/' h.err)"
expect "max-work: == of shared" 5 "simvm: work limit reached: at least 1000000 units of work done (--max-work)" "$simvm" --max-work 1000000 shared-eq.sim
expect "max-work: show of shared" 5 "simvm: work limit reached: at least 1000000 units of work done (--max-work)" "$simvm" --max-work 1000000 shared-show.sim
expect "max-work: error of shared" 5 "simvm: work limit reached: at least 1000000 units of work done (--max-work)" "$simvm" --max-work 1000000 shared-error.sim
# a sort of 300,000 ints stops inside its merges at --max-work (its
# comparisons charged in batches)
printf 'main = {\n  let xs = range(0, 300000)\n  say(length(sort(xs)))\n}\n' >"$tmp/sort-work.sim"
expect "max-work: sort"      5 "simvm: work limit reached: at least 1000000 units of work done (--max-work)" "$simvm" --max-work 1000000 sort-work.sim
# so does import "map"'s set of 300,000 keys made in C from a list (the
# list costs 3.3 million instructions, the set some 5 million units of work)
printf 'import "map"\nmain = {\n  let xs = range(0, 300000)\n  say(setSize(setFromList(xs)))\n}\n' >"$tmp/map-work.sim"
expect "max-work: setFromList" 5 "simvm: work limit reached: at least 4000000 units of work done (--max-work)" "$simvm" --max-work 4000000 map-work.sim
expect "max-heap: show of shared" 0 "5 simvm: heap limit reached: N bytes in use (--max-heap)" \
  sh -c "'$simvm' --max-heap 20MB shared-show.sim 2>h.err; echo \$? \$(sed 's/: [0-9]* bytes/: N bytes/' h.err)"
expect "SIGTERM: == of shared" 0 "143 simvm: terminated" \
  sh -c "timeout --preserve-status -s TERM 1 '$simvm' -q shared-eq.sim 2>t.err; echo \$? \$(head -n 1 t.err | cut -c1-17)"
expect "SIGTERM: show of shared" 0 "143 simvm: terminated" \
  sh -c "timeout --preserve-status -s TERM 1 '$simvm' -q shared-show.sim 2>t.err; echo \$? \$(head -n 1 t.err | cut -c1-17)"
# ordering (compare, sort, a map's keys) of a structure that shares its
# parts: charged as it goes and stopped by the limits and signals (it ran
# for ever, ignoring SIGTERM); -k: a regression fails, it does not hang
printf 'import "map"\nfn build(n, x) = if n == 0 then x else build(n - 1, [x, x])\nmain = say(compare(build(40, 1), build(40, 1)))\n' >"$tmp/shared-compare.sim"
printf 'import "map"\nfn build(n, x) = if n == 0 then x else build(n - 1, [x, x])\nmain = say(sort([build(40, 1), build(40, 1)]))\n' >"$tmp/shared-sort.sim"
printf 'import "map"\nfn build(n, x) = if n == 0 then x else build(n - 1, [x, x])\nmain = say(mapSize(mapFromList([[build(40, 1), 1], [build(40, 1), 2]])))\n' >"$tmp/shared-map.sim"
for what in compare sort map; do
  expect "max-work: $what of shared" 0 "5 simvm: work limit reached: at least 1000000 units of work done (--max-work)" \
    sh -c "timeout -k 5 -s TERM 60 '$simvm' --max-work 1000000 shared-$what.sim 2>w.err; echo \$? \$(cat w.err)"
done
expect "SIGTERM: sort of shared" 0 "143 simvm: terminated" \
  sh -c "timeout -k 5 --preserve-status -s TERM 1 '$simvm' -q shared-sort.sim 2>t.err; echo \$? \$(head -n 1 t.err | cut -c1-17)"
# with no limits given, the heap and the threads still have defaults
expect "default limits in --help" 0 "2" sh -c "'$simvm' --help | grep -c -e 'default 8GB' -e 'default 4000000'"
printf 'SIMVMBC' >"$tmp/short.simc"
expect "short bytecode"      3 "short.simc: bad bytecode: the file is truncated" "$simvm" short.simc
printf 'SIM' >"$tmp/shorter.simc"
expect "shorter bytecode"    3 "shorter.simc: bad bytecode: the file is truncated" "$simvm" shorter.simc
# the bytecode findings, made from their sources in today's format, must
# reach the rule they were found by
sh "$root/tests/fuzz/make_findings.sh" "$simc" "$tmp/findings"
findings=$tmp/findings
expect "finding: capture above the stack" 3 \
  "$findings/capture-above-stack.simc: bad bytecode: f (capture-above-stack.sim:6): CLOSURE of '<lambda>': capture 0 copies slot 2 of a stack 2 deep at offset 0" \
  "$simvm" "$findings/capture-above-stack.simc"
expect "finding: masking state out of range" 1 \
  'simvm: runtime error: withMaskingState needs "Unmasked", "MaskedInterruptible" or "MaskedUninterruptible"' \
  "$simvm" "$findings/mask-state-out-of-range.simc"
# a name read from a damaged file is shown with its control bytes as '?',
# as a compile error shows a source line: an ESC never reaches the terminal
expect "bytecode error escapes" 3 "esc.simc: bad bytecode: builtin 0 is '?elay', this simvm's is 'delay' (recompile it)" \
  sh -c "'$simc' -o esc.simc prog.sim && printf '\\033' | dd of=esc.simc bs=1 seek=\$(grep -obUa delay esc.simc | head -n 1 | cut -d: -f1) conv=notrunc 2>/dev/null && '$simvm' esc.simc"
printf 'main = say(1)\n' >"$tmp/script.simc"
expect "script named .simc"  3 "script.simc: bad bytecode: it does not start with the simvm bytecode signature" "$simvm" script.simc
mkdir -p "$tmp/box/lib" && printf 'import "lib/in.sim"\nimport "../shared.sim"\nmain = say(x + y)\n' >"$tmp/box/main.sim"
printf 'x = 7\n' >"$tmp/box/lib/in.sim" && printf 'y = 1\n' >"$tmp/shared.sim"
expect "import outside"      0 "8" "$simvm" box/main.sim
printf 'import "map"\nmain = say(mapToList(mapInsert(mapEmpty, 1, 2)))\n' >"$tmp/box/stdmod.sim"
expect "sandbox: the standard library" 0 "[[1, 2]]" "$simvm" --sandbox box/stdmod.sim
expect "simc -l: a module"   0 "function mapInsert (stdlib/map.sim:22): 3 params" \
  sh -c "'$simc' -l box/stdmod.sim | grep '^function mapInsert' | cut -d, -f1"
expect "sandbox"             3 "box/main.sim:2:1: error: cannot import '../shared.sim': --sandbox allows only files under the script's directory" "$simvm" --sandbox box/main.sim
expect "output over an import" 2 "simvm: --trace-json 'box/lib/in.sim' is a file the script imports: an output must not overwrite an input x = 7" \
  sh -c "'$simvm' --trace-json box/lib/in.sim box/main.sim 2>o.err; s=\$?; echo \$(head -n 1 o.err) \$(cat box/lib/in.sim); exit \$s"
expect "simc -o an import"   2 "simc: -o 'box/lib/in.sim' is a file the script imports: an output must not overwrite an input" "$simc" -o box/lib/in.sim box/main.sim
printf 'main = say(length([1, 2]))\n' >"$tmp/bare.sim"
expect "simc --no-prelude"   0 "2 small" sh -c "'$simc' --no-prelude -o bare.simc bare.sim && out=\$('$simvm' bare.simc) && [ \$(wc -c <bare.simc) -lt 2000 ] && echo \"\$out small\""
expect "simc help"           0 "usage: simc [options] file.sim" "$simc" --help
expect "simc no file"        2 "simc: no script given" "$simc"
expect "simc two files"      2 "simc: give one script, not 'hi.sim' and 'prog.sim'" "$simc" hi.sim prog.sim
expect "simc check"          0 "" "$simc" prog.sim
expect "simc error"          3 "broken.sim:2:1: error: syntax error, unexpected end of file (the '{' at line 1, column 8 is not closed)" "$simc" broken.sim
expect "simc list"           0 "function f (prog.sim:1): 1 param, 3 slots, 0 upvalues, 0 constants, 3 bytes" \
  sh -c "'$simc' -l prog.sim | grep '^function f'"
expect "simc list opcodes"   0 "  0000    3  DELAY_K             0    ; 1us" \
  sh -c "'$simc' -l prog.sim | grep -A1 '^block main' | tail -n 1"
expect "simc direct delay"   0 "  0003    |  POP            " \
  sh -c "'$simc' -l prog.sim | grep -A1 'DELAY_K' | tail -n 1"

# the A/B axes (docs/PROFILE.md): --actions is compiled in, and recorded in
# the bytecode file's byte 12; --continuations is the run's, with either code
expect "help: actions"       0 "  --actions=reified  compile every action as a value that a bind then runs" \
  sh -c "'$simvm' --help | grep '^  --actions=reified'"
expect "help: continuations" 0 "  --continuations=heap   every bind copies the rest of its block to a heap" \
  sh -c "'$simvm' --help | grep '^  --continuations=heap'"
expect "actions value"       2 "simvm: --actions takes =reified or =direct (--actions=reified), not '--actions=fast'" "$simvm" --actions=fast hi.sim
expect "actions bare"        2 "simvm: --actions takes =reified or =direct (--actions=reified), not '--actions'" "$simvm" --actions hi.sim
expect "continuations value" 2 "simvm: --continuations takes =heap or =stack (--continuations=heap), not '--continuations=disk'" "$simvm" --continuations=disk hi.sim
expect "continuations bare"  2 "simvm: --continuations takes =heap or =stack (--continuations=heap), not '--continuations'" "$simvm" --continuations hi.sim
expect "simc actions value"  2 "simc: --actions takes =reified or =direct (--actions=reified), not '--actions=io'" "$simc" --actions=io prog.sim
expect "simc continuations"  2 "simc: --continuations=heap chooses how a program runs, not how it is compiled: give it to simvm" "$simc" --continuations=heap prog.sim
expect "simc actions byte"   0 "1 0 0 same" sh -c "'$simc' -o d.simc prog.sim && '$simc' --actions=reified -o r.simc prog.sim && '$simc' -O0 -o o.simc prog.sim && echo \$(od -An -tu1 -j12 -N1 d.simc) \$(od -An -tu1 -j12 -N1 r.simc) \$(od -An -tu1 -j12 -N1 o.simc) \$(cmp -s r.simc o.simc && echo same)"
expect "simc reified list"   0 "0 DELAY_K, ACTIONs" sh -c "'$simc' --actions=reified -l prog.sim | grep -v '^function f' >r.list; echo \$(grep -c DELAY_K r.list) DELAY_K, \$(grep -q ' ACTION ' r.list && echo ACTIONs)"
expect "actions of a .simc"  2 "simvm: --actions chooses how a script is compiled: 'd.simc' is compiled already (simc --actions=...)" "$simvm" --actions=direct d.simc
# a reified file runs with either continuations: 3 binds, the one a heap
# continuation can take (delay's) on the heap or on the stack
expect "reified .simc, heap" 0 "1 binds 3 continuations 2 (on the thread's stack 1, on the heap 1)" \
  sh -c "out=\$('$simvm' --continuations=heap --profile r.simc 2>r.err); echo \$out \$(grep -E '^  (binds|continuations)  ' r.err)"
expect "reified .simc, stack" 0 "1 binds 3 continuations 2 (on the thread's stack 2, on the heap 0)" \
  sh -c "out=\$('$simvm' --continuations=stack --profile r.simc 2>r.err); echo \$out \$(grep -E '^  (binds|continuations)  ' r.err)"
# under direct actions a call's bind (g() as a statement) takes a heap
# continuation too; each axis is set by the option last given for it
printf 'fn g() {\n  delay(1us)\n  say("g")\n}\nmain = {\n  g()\n  say("x")\n}\n' >"$tmp/callbind.sim"
expect "direct, heap"        0 "g x binds 2 continuations 2 (on the thread's stack 1, on the heap 1)" \
  sh -c "out=\$('$simvm' --actions=direct --continuations=heap --profile callbind.sim 2>c.err); echo \$out \$(grep -E '^  (binds|continuations)  ' c.err)"
expect "last option wins"    0 "same" sh -c "'$simvm' -O0 --actions=direct --profile-json a.json callbind.sim >/dev/null && '$simvm' --continuations=heap --profile-json b.json callbind.sim >/dev/null && '$simvm' --actions=reified --continuations=heap -O1 --profile-json c.json callbind.sim >/dev/null && grep '\"binds\"' a.json >a.b && grep '\"binds\"' b.json >b.b && grep '\"binds\"' c.json >c.b && cmp -s a.b b.b && ! cmp -s a.b c.b && echo same"

# simvm's options after the script go to the script, with a warning on
# stderr; a "--" before the script, or before those words, says they are
# the script's, and silences it
expect "option after the script" 0 "simvm: warning: '--trace' after the script is passed to the script; put simvm's options before the script" \
  "$simvm" hi.sim --trace
expect "options after the script" 0 "2 hi" sh -c "'$simvm' hi.sim --max-steps 5 -q 2>w.err >w.out; echo \$(grep -c \"^simvm: warning: '\\(--max-steps\\|-q\\)' after the script\" w.err) \$(cat w.out)"
expect "no warning for a script's word" 0 "hi" "$simvm" hi.sim --verbose 5
expect "no warning after -- before the script" 0 "hi" "$simvm" -- hi.sim --trace
expect "no warning after -- in the arguments" 0 "hi" "$simvm" hi.sim -- --trace
# every option --help lists is one the warning knows
for opt in $(sh "$root/tools/help_options.sh" "$simvm") --trace=user; do
  expect "warning knows $opt" 0 "simvm: warning: '$opt' after the script is passed to the script; put simvm's options before the script" \
    "$simvm" hi.sim "$opt"
done

echo "cli: $passed passed, $failed failed"
[ "$failed" = 0 ]
