-- The Lua side of make bench: lua5.4 twin.lua TWIN.lua RUNS
-- A twin file returns a function that does one run's work and returns the
-- answer. Prints the answer (checked against the .sim program's), then on
-- stderr the median CPU time per run in microseconds, each run timed alone
-- with os.clock() after one warm-up run: in-process and by CPU time, as
-- simvm --repeat's "cpu median" is.
local run = dofile(arg[1])
local runs = tonumber(arg[2]) or 10
print(run())
local times = {}
for i = 1, runs do
  local started = os.clock()
  run()
  times[i] = os.clock() - started
end
table.sort(times)
io.stderr:write(string.format("%.3f\n", times[(runs + 1) // 2] * 1e6))
