-- twin of loop.sim: the same tail-recursive loop
local function loop(i, n, acc) if i > n then return acc else return loop(i + 1, n, acc + i) end end
return function() return loop(1, 1000000, 0) end
