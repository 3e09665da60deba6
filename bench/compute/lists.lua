-- twin of lists.sim (Lua tables instead of cons lists)
local xs = {}
for i = 0, 99999 do xs[#xs + 1] = i end
local doubled = {}
for _, x in ipairs(xs) do doubled[#doubled + 1] = x * 2 end
local kept = {}
for _, x in ipairs(doubled) do if x % 3 == 0 then kept[#kept + 1] = x end end
local sum = 0
for _, x in ipairs(kept) do sum = sum + x end
print(sum)
