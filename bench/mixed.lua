-- wrk script: a mixed, fault-free load of the API (bench/mixed.sh).
-- Of every hundred new requests: 40 redeem (half the hot code, half one
-- of the other codes), 20 create a hold (answered: confirmed two times in
-- three, released else), 15 claim from the pool, 25 acquire a permit on
-- one of the semaphores (answered: a heartbeat, then a release). Each
-- follow-up is sent only after the answer it follows, on the same wrk
-- thread. Every request has a fresh account and a client_ip of its own,
-- as an integrator forwarding its users' addresses would send.
-- Environment: BENCH_KEY (scope redeem), BENCH_CODES (codes, comma
-- separated, the hot one first), BENCH_HOLD_CODE, BENCH_POOL (a pool
-- campaign), BENCH_SEMS (semaphore names, comma separated), BENCH_RUN.
-- done() prints one line: "mixed:" and counts by status class and kind.
local threads = {}
local statuses = {"s2xx", "s409", "s429", "s4xx", "s5xx"}
-- counters: k_<kind> (globals of each thread, read by done())
local kinds = {"redeem", "hold", "confirm", "release", "pool", "acquire",
	"heartbeat", "drop"}

function setup(thread)
	table.insert(threads, thread)
	thread:set("tid", #threads)
end

local function split(s)
	local t = {}
	for w in string.gmatch(s or "", "[^,]+") do
		table.insert(t, w)
	end
	return t
end

function init(args)
	n = 0
	run = (os.getenv("BENCH_RUN") or "r") .. "-" .. os.time()
	math.randomseed(os.time() * 1000 + tid)
	codes = split(os.getenv("BENCH_CODES"))
	hold_code = os.getenv("BENCH_HOLD_CODE")
	pool = os.getenv("BENCH_POOL")
	sems = split(os.getenv("BENCH_SEMS"))
	headers = {
		["Authorization"] = "Bearer " .. os.getenv("BENCH_KEY"),
		["Content-Type"] = "application/json",
	}
	queue = {} -- follow-ups, oldest first
	for _, k in ipairs(statuses) do _G[k] = 0 end
	for _, k in ipairs(kinds) do _G["k_" .. k] = 0 end
end

local function post(kind, path, body)
	_G["k_" .. kind] = _G["k_" .. kind] + 1
	return wrk.format("POST", path, headers, body)
end

function request()
	local q = table.remove(queue, 1)
	if q ~= nil then
		return post(q[1], q[2], q[3])
	end
	n = n + 1
	local id = string.format("%s-t%d-%d", run, tid, n)
	local ip = string.format("10.%d.%d.%d", tid % 250,
		math.floor(n / 250) % 250, n % 250)
	local r = math.random(100)
	if r <= 40 then
		local code = codes[1]
		if math.random(2) == 2 and #codes > 1 then
			code = codes[math.random(2, #codes)]
		end
		return post("redeem", "/api/v1/redeem", string.format(
			'{"code":"%s","account":"%s@bench.example","client_ip":"%s"}',
			code, id, ip))
	elseif r <= 60 then
		return post("hold", "/api/v1/holds", string.format(
			'{"code":"%s","account":"h%s@bench.example",' ..
			'"external_id":"h%s","ttl_seconds":300,"client_ip":"%s"}',
			hold_code, id, id, ip))
	elseif r <= 75 then
		return post("pool", "/api/v1/pools/" .. pool .. "/claim",
			string.format(
			'{"account":"p%s@bench.example","client_ip":"%s"}', id, ip))
	end
	return post("acquire", "/api/v1/permits", string.format(
		'{"external_id":"m%s","owner":"bench-t%d","ttl_seconds":300,' ..
		'"semaphores":[{"name":"%s","count":1}]}',
		id, tid, sems[math.random(#sems)]))
end

function response(status, headers, body)
	if status >= 500 then
		s5xx = s5xx + 1
	elseif status == 409 then
		s409 = s409 + 1
	elseif status == 429 then
		s429 = s429 + 1
	elseif status >= 400 then
		s4xx = s4xx + 1
	else
		s2xx = s2xx + 1
	end
	-- The answers a follow-up comes after: a hold or a permit created
	-- (201), a permit's heartbeat (200, still acquired).
	if status ~= 201 and status ~= 200 then
		return
	end
	local xid = string.match(body, '"external_id"%s*:%s*"([^"]+)"')
	if xid == nil then
		return
	end
	local first = string.sub(xid, 1, 1)
	if first == "h" and status == 201 then
		if math.random(3) == 3 then
			table.insert(queue, {"release",
				"/api/v1/holds/" .. xid .. "/release", "{}"})
		else
			table.insert(queue, {"confirm",
				"/api/v1/holds/" .. xid .. "/confirm", "{}"})
		end
	elseif first == "m" and status == 201 then
		table.insert(queue, {"heartbeat",
			"/api/v1/permits/" .. xid .. "/heartbeat",
			'{"ttl_seconds":300}'})
	elseif first == "m" and string.find(body, '"acquired"', 1, true) then
		table.insert(queue, {"drop",
			"/api/v1/permits/" .. xid .. "/release", "{}"})
	end
end

function done(summary, latency, requests)
	local line = "mixed:"
	for _, k in ipairs(statuses) do
		local v = 0
		for _, t in ipairs(threads) do v = v + t:get(k) end
		line = line .. " " .. k .. "=" .. v
	end
	for _, k in ipairs(kinds) do
		local v = 0
		for _, t in ipairs(threads) do v = v + t:get("k_" .. k) end
		line = line .. " " .. k .. "=" .. v
	end
	io.write(line .. "\n")
end
