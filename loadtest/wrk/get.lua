-- wrk script: GET one object again and again and print the percentiles the same way as the
-- create scripts (wrk --latency prints them too). The path is the URL's.
--
--   wrk -t2 -c32 -d10s --latency -s loadtest/wrk/get.lua \
--     http://127.0.0.1:PORT/api/v1/namespaces/load/pods/wrk-1-1

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  failures = 0
end

function response(status, headers, body)
  if status ~= 200 then
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
  io.write(string.format("requests: %d, not 200: %d\n", summary.requests, failed))
  io.write(string.format("latency p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
                         latency:percentile(50) / 1000, latency:percentile(90) / 1000,
                         latency:percentile(99) / 1000, latency.max / 1000))
end
