# Merge the --json outputs of a sharded sweep (simvm --explore N --shard
# I/K --json, for I = 1 .. K) into one summary with the counts a single
# process would report (for an exhaustive search, when each shard
# exhausted its slice; its runs are numbered by each shard, so an
# outcome's `first` is null):
#
#   jq -s -f tools/merge.jq shard*.jsonl
#
# The shards must be of the same program (name and hash), strategy, depth,
# jitter and seeds, and each of 1 .. K must be there once: otherwise jq
# stops with an error that names the difference (exit status 5).
# Outcomes are grouped as simvm groups them, a failure by its kind and
# place and a pass by its description, each with its lowest seed and that
# run's description. Distinct schedules are counted over the runs' hashes,
# so they are the whole sweep's, not a sum of the shards'.
def summaries: map(select(has("summary")) | .summary);
def runs: map(select(has("seed") or has("schedule")));
def total(f): map(f) | add // 0;
def same(f; what):
  if (map(f) | unique | length) > 1
  then error("the shards differ in their " + what + ": " + (map(f | tostring) | unique | join(", ")))
  else . end;

. as $all
| ($all | summaries) as $s
| if ($s | length) == 0 then error("no summary line: give each shard's whole --json output") else . end
| ($s | same(.program; "program") | same(.program_hash; "program hash (the program changed between shards)")
      | same(.strategy; "strategy") | same(.depth; "depth") | same(.jitter_ppm; "jitter")
      | same(.first_seed; "first seed") | same(.last_seed; "last seed") | same(.preemptions; "bound")
      | same(.shards; "shard count")) as $checked
| if ($s | map(.shard) | sort) != [range(1; $s[0].shards + 1)]
  then error("shards missing or given twice: " + ($s | map(.shard) | sort | map(tostring) | join(", "))
             + " of 1-" + ($s[0].shards | tostring))
  else . end
| ($all | runs) as $r
| ($r | group_by([.kind, (if .outcome == "fail" then .place else .description end)])
      | map(sort_by(.seed) | {outcome: .[0].outcome, kind: .[0].kind, place: .[0].place,
                              description: .[0].description, count: length, first: .[0].seed})
      | sort_by(.first)) as $outcomes
| {merged: {
    program: $s[0].program, program_hash: $s[0].program_hash, strategy: $s[0].strategy,
    first_seed: $s[0].first_seed, last_seed: $s[0].last_seed, shards: $s[0].shards,
    schedules: ($s | total(.schedules)), failures: ($s | total(.failures)),
    exhausted: (if $s[0] | has("exhausted") then ($s | all(.exhausted)) else null end),
    abandoned: (if $s[0] | has("abandoned") then ($s | total(.abandoned)) else null end),
    outcomes: $outcomes,
    coverage: {
      distinct_schedules: ($r | map(.hash) | unique | length),
      outcome_classes: ($outcomes | length),
      steps: ($r | total(.steps)), deviations: ($r | total(.deviations)),
      choices: ($s | map(.coverage.choices)
                   | reduce .[] as $c ({}; reduce ($c | keys_unsorted[]) as $k (.;
                       .[$k].made += $c[$k].made | .[$k].changed += $c[$k].changed))),
      faults: ($s | map(.coverage.faults[]) | group_by(.name)
                  | map({name: .[0].name, reached: total(.reached), fired: total(.fired)}))}}}
