-- common/relay/lua/queue_jobs.lua - chat_outbox: jobs waiting or running in queues, the count a change
-- of the partition layout waits on (common/relay/partition_layout.cpp); KEYS = wait, paused, active, prioritized, delayed per queue
local n = 0
for i = 1, #KEYS, 5 do
  n = n + redis.call('LLEN', KEYS[i]) + redis.call('LLEN', KEYS[i + 1]) + redis.call('LLEN', KEYS[i + 2])
    + redis.call('ZCARD', KEYS[i + 3]) + redis.call('ZCARD', KEYS[i + 4])
end
return n
