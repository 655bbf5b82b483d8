-- wrk script: POST a new pod with a unique name on every request, to measure creates/s through
-- phalanxd's API (each create is durable before its 201, and the pod joins the scheduler).
--
--   wrk -t2 -c32 -d10s --latency -s loadtest/wrk/create_pods.lua http://127.0.0.1:PORT -- RUN NS
--
-- RUN (default "wrk") prefixes the names so that several runs against one daemon do not
-- collide; NS (default "load") is the namespace. Each pod asks for 10m of CPU and 16Mi, so a
-- big simulated cluster binds them all. The script counts answers other than 201 and prints them.

local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  run = args[1] or "wrk"
  ns = args[2] or "load"
  counter = 0
  failures = 0
  path = "/api/v1/namespaces/" .. ns .. "/pods"
  headers = { ["Content-Type"] = "application/json" }
end

function request()
  counter = counter + 1
  local body = string.format(
    '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s-%d-%d"},' ..
    '"spec":{"containers":[{"name":"c","image":"x",' ..
    '"resources":{"requests":{"cpu":"10m","memory":"16Mi"}}}]}}', run, id, counter)
  return wrk.format("POST", path, headers, body)
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
  io.write(string.format("requests: %d, not 201: %d, non-2xx per wrk: %d\n",
                         summary.requests, failed, summary.errors.status))
  io.write(string.format("latency p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
                         latency:percentile(50) / 1000, latency:percentile(90) / 1000,
                         latency:percentile(99) / 1000, latency.max / 1000))
end
