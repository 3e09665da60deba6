-- twin of closures.sim: a closure made and called once per step
local function adder(k) return function(x) return x + k end end
local function go(i, n, acc) if i == n then return acc else return go(i + 1, n, acc + adder(i)(i)) end end
return function() return go(0, 100000, 0) end
