-- twin of map.sim: 100,000 keys into a table, then each looked up.
local function key(i) return (i * 7919) % 100003 end
return function()
  local m = {}
  for i = 0, 99999 do m[key(i)] = i end
  local sum = 0
  for i = 0, 99999 do sum = sum + m[key(i)] end
  return sum
end
