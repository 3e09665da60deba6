-- twin of loop.sim
local function loop(i, n, acc) if i > n then return acc else return loop(i + 1, n, acc + i) end end
print(loop(1, 1000000, 0))
