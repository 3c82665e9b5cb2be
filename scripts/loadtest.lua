-- wrk script for scripts/loadtest.sh: POSTs one verification request
-- (BODY, default testdata/invoice-pass.json) and prints the latency
-- percentiles and the request counts in a form the shell script reads.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = assert(io.open(os.getenv("BODY") or "testdata/invoice-pass.json", "rb"))
wrk.body = f:read("*a")
f:close()

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("LOADTEST requests=%d duration_us=%d non2xx=%d socket_errors=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d\n",
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
