-- twin of closures.sim
local function adder(k) return function(x) return x + k end end
local function go(i, n, acc) if i == n then return acc else return go(i + 1, n, acc + adder(i)(i)) end end
print(go(0, 100000, 0))
