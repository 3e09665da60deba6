-- twin of match.sim: the same messages, each dispatched by an if-chain on
-- its kind, the fields read as the arms read them.
local messages = {
  {kind = "vote", term = 3, from = 1},
  {kind = "grant", term = 3, from = 2},
  {kind = "append", term = 3, entries = {7, 8}},
  {kind = "ack", term = 3, index = 5},
  {kind = "heartbeat", term = 3},
  {kind = "ack", term = 3, index = 0},
  {kind = "unknown"},
  {kind = "append", term = 3, entries = {}},
}

local function handle(m, acc)
  if m.kind == "vote" and m.term ~= nil then return acc + m.term
  elseif m.kind == "grant" and m.from ~= nil then return acc + m.from
  elseif m.kind == "append" and m.entries ~= nil and m.entries[1] ~= nil then return acc + m.entries[1]
  elseif m.kind == "ack" and m.index ~= nil and m.index > 0 then return acc + m.index
  elseif m.kind == "heartbeat" then return acc + 1
  else return acc end
end

return function()
  local acc, count = 0, #messages
  for i = 0, 999999 do acc = handle(messages[i % count + 1], acc) end
  return acc
end
