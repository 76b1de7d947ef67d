-- wrk script: POST /api/v1/redeem with a fresh account per request.
-- BENCH_KEY (a redeem-scope API key) and BENCH_CODE come from the
-- environment; each wrk thread numbers its own accounts.
local threads = 0

function setup(thread)
	threads = threads + 1
	thread:set("tid", threads)
end

function init(args)
	n = 0
	-- Distinct per run, so that no request replays an earlier one.
	run = (os.getenv("BENCH_RUN") or "r") .. "-" .. os.time()
	key = os.getenv("BENCH_KEY")
	code = os.getenv("BENCH_CODE")
	headers = {
		["Authorization"] = "Bearer " .. key,
		["Content-Type"] = "application/json",
	}
end

function request()
	n = n + 1
	local body = string.format(
		'{"code":"%s","account":"%s-t%d-%d@bench.example"}',
		code, run, tid, n)
	return wrk.format("POST", "/api/v1/redeem", headers, body)
end
