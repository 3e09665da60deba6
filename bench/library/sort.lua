-- twin of sort.sim: table.sort of the same 100,000 ints (the array built
-- in the run, as sort.sim builds its list).
return function()
  local xs = {}
  for i = 0, 99999 do xs[i + 1] = (i * 7919) % 100003 end
  table.sort(xs)
  return string.format("[%d, %d, %d]", xs[1], xs[50001], xs[100000])
end
