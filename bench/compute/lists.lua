-- twin of lists.sim: the same algorithm on the same data structure. A list
-- is nil or a cons cell {head, tail}, and range, map, filter, sum, foldl and
-- reverse are those of stdlib/prelude.sim, tail calls and all.
local function rangeOnto(a, i, acc) if i < a then return acc else return rangeOnto(a, i - 1, {i, acc}) end end
local function range(a, b) return rangeOnto(a, b - 1, nil) end
local function foldl(f, acc, xs) if xs == nil then return acc else return foldl(f, f(acc, xs[1]), xs[2]) end end
local function reverseOnto(xs, acc) if xs == nil then return acc else return reverseOnto(xs[2], {xs[1], acc}) end end
local function reverse(xs) return reverseOnto(xs, nil) end
local function map(f, xs) return reverse(foldl(function(acc, x) return {f(x), acc} end, nil, xs)) end
local function filter(p, xs)
  return reverse(foldl(function(acc, x) if p(x) then return {x, acc} else return acc end end, nil, xs))
end
local function sum(xs) return foldl(function(a, x) return a + x end, 0, xs) end
return function()
  return sum(filter(function(x) return x % 3 == 0 end, map(function(x) return x * 2 end, range(0, 100000))))
end
