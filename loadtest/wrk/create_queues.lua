-- wrk script: POST a new queue with a unique name on every request: creates/s of the API and
-- the durable store alone (a queue has no pods to schedule).
--
--   wrk -t2 -c32 -d10s --latency -s loadtest/wrk/create_queues.lua http://127.0.0.1:PORT -- RUN

local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  run = args[1] or "wrk"
  counter = 0
  failures = 0
  headers = { ["Content-Type"] = "application/json" }
end

function request()
  counter = counter + 1
  local body = string.format(
    '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",' ..
    '"metadata":{"name":"%s-%d-%d"},"spec":{"weight":1}}', run, id, counter)
  return wrk.format("POST", "/apis/scheduling.volcano.sh/v1beta1/queues", headers, body)
end

function response(status, headers, body)
  if status ~= 201 then
    failures = failures + 1
    if failures <= 3 then
      io.stderr:write("unexpected " .. status .. ": " .. body .. "\n")
    end
  end
end

function done(summary, latency, requests)
  local failed = 0
  for _, t in ipairs(threads) do
    failed = failed + t:get("failures")
  end
  io.write(string.format("requests: %d, not 201: %d\n", summary.requests, failed))
  io.write(string.format("latency p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
                         latency:percentile(50) / 1000, latency:percentile(90) / 1000,
                         latency:percentile(99) / 1000, latency.max / 1000))
end
