-- hostbench's sysbench 1.0.20 API, the Lua half. Runs in every state before the script's
-- body (see lua/state.rs, which prepares the table `__hostbench` this file consumes and
-- then removes). Written for hostbench from the behaviour described in the reference
-- notes; the Rust half provides the generators and counters as C functions.

local hb = __hostbench
__hostbench = nil

local ffi = require("ffi")
_G.ffi = ffi

-- The declarations sysbench 1.0.20 makes in every state. Enum constants may be declared
-- once only (LuaJIT raises "attempt to redefine" otherwise), so this is exactly sysbench's
-- set: a script that declares SB_CNT_READ itself fails here as it fails there.
ffi.cdef [[
void sb_event_start(int thread_id);
void sb_event_stop(int thread_id);
bool sb_more_events(int thread_id);

typedef enum
{
  SB_ARG_TYPE_NULL,
  SB_ARG_TYPE_BOOL,
  SB_ARG_TYPE_INT,
  SB_ARG_TYPE_SIZE,
  SB_ARG_TYPE_DOUBLE,
  SB_ARG_TYPE_STRING,
  SB_ARG_TYPE_LIST,
  SB_ARG_TYPE_FILE,
  SB_ARG_TYPE_MAX
} sb_arg_type_t;

typedef bool sb_opt_validate_t(const char *, const char *);

typedef struct
{
  const char *name;
  const char *desc;
  const char *value;
  sb_arg_type_t type;
  sb_opt_validate_t *validate;
} sb_arg_t;

int sb_lua_set_test_args(sb_arg_t *args, size_t len);
void sb_print_test_options(void);

uint64_t sb_rand_uniform_uint64(void);
uint32_t sb_rand_default(uint32_t, uint32_t);
uint32_t sb_rand_uniform(uint32_t, uint32_t);
uint32_t sb_rand_gaussian(uint32_t, uint32_t);
uint32_t sb_rand_special(uint32_t, uint32_t);
uint32_t sb_rand_pareto(uint32_t, uint32_t);
uint32_t sb_rand_unique(void);
void sb_rand_str(const char *, char *);
double sb_rand_uniform_double(void);

typedef enum
{
  DB_ERROR_NONE,
  DB_ERROR_IGNORABLE,
  DB_ERROR_FATAL
} sql_error_t;

typedef enum
{
  SB_CNT_OTHER,
  SB_CNT_READ,
  SB_CNT_WRITE,
  SB_CNT_TRX,
  SB_CNT_ERROR,
  SB_CNT_RECONNECT,
  SB_CNT_MAX
} sb_counter_type;

typedef enum
{
  SQL_TYPE_NONE,
  SQL_TYPE_TINYINT,
  SQL_TYPE_SMALLINT,
  SQL_TYPE_INT,
  SQL_TYPE_BIGINT,
  SQL_TYPE_FLOAT,
  SQL_TYPE_DOUBLE,
  SQL_TYPE_TIME,
  SQL_TYPE_DATE,
  SQL_TYPE_DATETIME,
  SQL_TYPE_TIMESTAMP,
  SQL_TYPE_CHAR,
  SQL_TYPE_VARCHAR
} sql_bind_type_t;

typedef struct sql_driver sql_driver;
typedef struct sql_connection sql_connection;
typedef struct sql_statement sql_statement;
typedef struct sql_result sql_result;

typedef struct histogram sb_histogram_t;
]]

-- ffi.C, with the sysbench functions hostbench implements resolved to its own code: a
-- static binary has no dynamic symbol table for dlsym, and even a dynamic one would not
-- export Rust functions by these names. Everything else (usleep, gettimeofday, a
-- script's own declarations) goes to the real namespace; libc functions the real one
-- cannot find (a static build) fall back to hostbench's copies.
local realC = ffi.C
local own = {}
for name, sig in pairs(hb.signatures) do
  own[name] = ffi.cast(sig, hb.pointers[name])
end
local libc = {}
for name, sig in pairs(hb.libc_signatures) do
  libc[name] = { sig = sig, ptr = hb.pointers[name] }
end
local function lookup(k)
  return realC[k]
end
ffi.C = setmetatable({}, {
  __index = function(_, k)
    local f = own[k]
    if f ~= nil then return f end
    local ok, v = pcall(lookup, k)
    if ok then return v end
    local l = libc[k]
    -- Undeclared stays an error, as in sysbench; only a declared libc function that
    -- cannot be found (a static build) falls back to hostbench's.
    if l ~= nil and not tostring(v):find("missing declaration", 1, true) then
      local cok, c = pcall(ffi.cast, l.sig, l.ptr)
      if cok then own[k] = c; return c end
    end
    -- The error as the script's own lookup raises it: at the script's line.
    error((tostring(v):gsub("^hostbench:%d+: ", "")), 2)
  end,
  __newindex = function(_, k, v) realC[k] = v end,
})
local C = ffi.C

sysbench = {
  tid = hb.tid,
  version = "1.0.20",
  version_string = "sysbench 1.0.20",
  error = { NONE = 0, RESTART_EVENT = 1 },
  cmdline = {
    argv = hb.argv,
    command = hb.command,
    script_path = hb.script_path,
  },
  hooks = {},
  rand = {},
  sql = {},
  histogram = {},
}

-- sysbench.histogram: sysbench's logarithmic histogram (`size` buckets from `min` to `max`,
-- bucket i holding the values nearest exp(i / mult + log(min))), as a Lua object of this
-- state. print() writes sysbench's layout; an empty histogram prints nothing (as sysbench).
-- Differences, on purpose: bad arguments are an error naming them (sysbench computes with
-- log(0) or a zero range), and tostring(h) works (1.0.20 raises an error there).
local hist_mt = {}
hist_mt.__index = hist_mt
function sysbench.histogram.new(size, min, max)
  size, min, max = tonumber(size), tonumber(min), tonumber(max)
  if size == nil or size < 1 or size ~= math.floor(size) then
    error("sysbench.histogram.new(size, min, max): size must be a whole number >= 1", 2)
  end
  if min == nil or max == nil or min <= 0 or max <= min then
    error("sysbench.histogram.new(size, min, max): need 0 < min < max", 2)
  end
  local deduct = math.log(min)
  local mult = size > 1 and (size - 1) / (math.log(max) - deduct) or 0
  local counts = {}
  for i = 0, size - 1 do counts[i] = 0 end
  return setmetatable({ _size = size, _deduct = deduct, _mult = mult, _counts = counts },
    hist_mt)
end
function hist_mt:update(v)
  v = tonumber(v)
  if v == nil then error("histogram:update(value): value must be a number", 2) end
  local i = 0
  if v > 0 then
    i = math.floor((math.log(v) - self._deduct) * self._mult + 0.5)
    if i < 0 then i = 0 elseif i >= self._size then i = self._size - 1 end
  end
  self._counts[i] = self._counts[i] + 1
end
function hist_mt:print()
  local max = 0
  for i = 0, self._size - 1 do
    if self._counts[i] > max then max = self._counts[i] end
  end
  if max == 0 then return end
  local lines = { "       value  ------------- distribution ------------- count" }
  for i = 0, self._size - 1 do
    local c = self._counts[i]
    if c > 0 then
      local value = self._mult > 0 and math.exp(i / self._mult + self._deduct)
        or math.exp(self._deduct)
      local stars = math.floor(c * 40 / max + 0.5)
      lines[#lines + 1] = string.format("%12.3f |%-40s %d", value, string.rep("*", stars), c)
    end
  end
  print(table.concat(lines, "\n"))
end
function hist_mt:__tostring()
  return "sysbench.histogram(" .. self._size .. " buckets)"
end

-- The event loop sysbench runs in each worker. hostbench's runner calls event() itself
-- (see lua/worker.rs), so this exists for scripts that call or wrap it.
function thread_run(thread_id)
  while C.sb_more_events(thread_id) do
    C.sb_event_start(thread_id)
    local ok, ret
    repeat
      ok, ret = pcall(event, thread_id)
      if not ok then
        if type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
          if sysbench.hooks.before_restart_event then
            sysbench.hooks.before_restart_event(ret)
          end
        else
          error(ret, 0)
        end
      end
    until ok
    if ret then break end
    C.sb_event_stop(thread_id)
  end
end

-- One event as hostbench's runner calls it: sysbench's retry of a restarted event (an
-- ignorable error), which also ends when the run is over, instead of retrying forever.
local stopping = hb.stopping
function __hostbench_event(thread_id)
  while true do
    local ok, ret = pcall(event, thread_id)
    if ok then return ret end
    if type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
      if sysbench.hooks.before_restart_event then
        sysbench.hooks.before_restart_event(ret)
      end
      if stopping() then return true end
    elseif type(ret) == "string" then
      error(ret, 0)
    else
      error("(not a string)", 0)
    end
  end
end

-------------------------------------------------------------------------------
-- sysbench.rand: arguments go through the C types, as sysbench's do (truncated, negative
-- values wrap, strings are refused by the FFI conversion).
-------------------------------------------------------------------------------
-- The function pointers are upvalues: going through ffi.C's __index on every call costs
-- a Lua call and a table lookup per number drawn.
local r = sysbench.rand
local rand_u64, rand_uniform = own.sb_rand_uniform_uint64, own.sb_rand_uniform
local rand_gaussian, rand_special = own.sb_rand_gaussian, own.sb_rand_special
local rand_pareto, rand_default = own.sb_rand_pareto, own.sb_rand_default
local rand_unique, rand_double = own.sb_rand_unique, own.sb_rand_uniform_double
local rand_str = own.sb_rand_str
function r.uniform_uint64() return rand_u64() end
function r.uniform(a, b) return rand_uniform(a, b) end
function r.gaussian(a, b) return rand_gaussian(a, b) end
function r.special(a, b) return rand_special(a, b) end
function r.pareto(a, b) return rand_pareto(a, b) end
function r.default(a, b) return rand_default(a, b) end
function r.unique() return rand_unique() end
function r.uniform_double() return rand_double() end
-- sysbench master's additions.
local zipf = own.sb_rand_zipfian
function r.zipfian(a, b) return zipf(a, b) end
function r.string(fmt)
  local n = #fmt
  local buf = ffi.new("char[?]", n + 1)
  rand_str(fmt, buf)
  return ffi.string(buf, n)
end
local varstr = own.sb_rand_varstr
function r.varstring(min, max)
  assert(min <= max)
  assert(max > 0)
  local buf = ffi.new("char[?]", max)
  local n = varstr(buf, min, max)
  return ffi.string(buf, n)
end

-------------------------------------------------------------------------------
-- sysbench.cmdline
-------------------------------------------------------------------------------
local cl = sysbench.cmdline
cl.ARG_NULL, cl.ARG_BOOL, cl.ARG_INT, cl.ARG_SIZE = 0, 1, 2, 3
cl.ARG_DOUBLE, cl.ARG_STRING, cl.ARG_LIST, cl.ARG_FILE, cl.ARG_MAX = 4, 5, 6, 7, 8
cl.PARALLEL_COMMAND = true

function cl.command_defined(name)
  return type(cl.commands) == "table" and type(cl.commands[name]) == "table"
    and cl.commands[name][1] ~= nil
end

function cl.command_parallel(name)
  return cl.command_defined(name) and cl.commands[name][2] == cl.PARALLEL_COMMAND
end

function cl.call_command(name)
  local ret = cl.commands[name][1]()
  if ret == nil then return true end
  return ret and true or false
end

local print_options = hb.print_options
function cl.print_test_options()
  io.write(print_options())
end

-------------------------------------------------------------------------------
-- Report formatters: hooks may be set to these (sysbench.hooks.report_intermediate =
-- sysbench.report_csv). They print to stdout whatever the verbosity, as sysbench's do.
-------------------------------------------------------------------------------
function sysbench.report_default(stat)
  local seconds = stat.time_interval
  print(string.format("[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f " ..
                        "(r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%u%%): %4.2f " ..
                        "err/s %4.2f reconn/s: %4.2f",
                      stat.time_total, stat.threads_running,
                      stat.events / seconds,
                      (stat.reads + stat.writes + stat.other) / seconds,
                      stat.reads / seconds, stat.writes / seconds,
                      stat.other / seconds,
                      sysbench.opt.percentile, stat.latency_pct * 1000,
                      stat.errors / seconds, stat.reconnects / seconds))
end

function sysbench.report_csv(stat)
  local seconds = stat.time_interval
  print(string.format("%.0f,%u,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f",
                      stat.time_total, stat.threads_running,
                      stat.events / seconds,
                      (stat.reads + stat.writes + stat.other) / seconds,
                      stat.reads / seconds, stat.writes / seconds,
                      stat.other / seconds, stat.latency_pct * 1000,
                      stat.errors / seconds, stat.reconnects / seconds))
end

-- One JSON array per state: "[" before the first object, "," between objects, and "]"
-- when the state closes (a finaliser on a proxy, as in sysbench).
local json_open = false
local json_guard
function sysbench.report_json(stat)
  if not json_open then
    print("[")
    json_open = true
    json_guard = newproxy(true)
    getmetatable(json_guard).__gc = function() print("]") end
  else
    print(",")
  end
  local seconds = stat.time_interval
  print(string.format([[
  {
    "time": %4.0f,
    "threads": %u,
    "tps": %4.2f,
    "qps": {
      "total": %4.2f,
      "reads": %4.2f,
      "writes": %4.2f,
      "other": %4.2f
    },
    "latency": %4.2f,
    "errors": %4.2f,
    "reconnects": %4.2f
  }]],
                      stat.time_total, stat.threads_running,
                      stat.events / seconds,
                      (stat.reads + stat.writes + stat.other) / seconds,
                      stat.reads / seconds, stat.writes / seconds,
                      stat.other / seconds, stat.latency_pct * 1000,
                      stat.errors / seconds, stat.reconnects / seconds))
end

-------------------------------------------------------------------------------
-- sysbench.sql: drivers, connections, text queries, result sets, prepared statements
-- with binds, bulk inserts, reconnects, and their errors (the Rust half is lua/sql.rs).
-------------------------------------------------------------------------------
local sql = sysbench.sql
local hsql = hb.sql
sql.error = { NONE = 0, IGNORABLE = 1, FATAL = 2 }
sql.type = {
  NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5, DOUBLE = 6,
  TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11, VARCHAR = 12,
}
local T = sql.type

local function api_error(lvl)
  error("SQL API error", lvl + 1)
end

local function closed(lvl)
  io.stderr:write("ALERT: attempt to use an already closed connection\n")
  api_error(lvl + 1)
end

-- A failed query: an ignorable error (or one the sql_error_ignorable hook forgives)
-- restarts the event with an error table; any other is sysbench's message, raised at
-- level lvl (the script's call).
local function raise(con, query, class, code, msg, lvl, mystate)
  local errno, state = 0, ""
  if con._driver == "pgsql" then
    state = code
  else
    errno = tonumber(code) or 0
    state = mystate or ""
  end
  local errdesc = { connection = con, query = query, sql_errno = errno,
                    sql_state = state, sql_errmsg = msg }
  if class ~= "ignorable" then
    if con._driver == "mysql" then
      io.stderr:write(string.format(
        "FATAL: mysql_drv_query() returned error %d (%s) for query '%s'\n", errno, msg, query))
    elseif con._driver == "pgsql" then
      io.stderr:write(string.format("FATAL: PQexec() failed: 7 %s\nFATAL: failed query was: %s\n",
                                    msg, query))
    end
  end
  if class == "ignorable" or (sysbench.hooks.sql_error_ignorable ~= nil
                              and sysbench.hooks.sql_error_ignorable(errdesc)) then
    errdesc.errcode = sysbench.error.RESTART_EVENT
    error(errdesc)
  end
  error(string.format("SQL error, errno = %d, state = '%s': %s", errno, state, msg), lvl + 1)
end

local rs_mt = {}
rs_mt.__index = rs_mt
rs_mt.__tostring = function() return "<sql_result>" end
-- As in sysbench, a connection has one result object, which every statement with a
-- result set refills (an older `rs` then reads the newer result, as sysbench's does) and
-- a statement without one invalidates; so running a statement allocates nothing.
local function fetch(rs, lvl)
  local row = hsql.fetch(rs._c, rs._gen, rs._next)
  if row == "replaced" then
    -- A failed statement came after it (sysbench's result is gone too).
    io.stderr:write("ALERT: attempt to fetch row from an invalid result set\n")
    return nil
  end
  if row ~= nil then rs._next = rs._next + 1 end
  return row
end
function rs_mt:fetch_row()
  if self._invalid then
    io.stderr:write("ALERT: attempt to fetch row from an invalid result set\n")
    return nil
  end
  if self._freed or self.nfields == 0 then
    io.stderr:write("ALERT: attempt to fetch row from an empty result set\n")
    return nil
  end
  return (fetch(self, 2))
end
function rs_mt:free()
  if self._freed then
    io.stderr:write("ALERT: attempt to free an invalid result set\n")
    error("db_free_results() failed", 2)
  end
  self._freed = true
end

-- The outcome of a query or execute (see lua/sql.rs: kind 0 rows, 1 none, 2 closed,
-- 3 failed) as sysbench returns it: the connection's result object for a result set, nil
-- without one, or an error.
local function result(con, q, lvl, kind, a, b, g)
  local rs = con._rs
  if kind == 0 then
    if rs == nil then
      rs = setmetatable({ _c = con._c }, rs_mt)
      con._rs = rs
    end
    rs.nrows, rs.nfields, rs._gen, rs._next = a, b, g, 0
    rs._freed, rs._invalid = nil, nil
    return rs
  end
  if rs ~= nil then
    rs.nrows, rs.nfields, rs._invalid = 0, 0, true
  end
  if kind == 1 then return nil end
  if kind == 2 then closed(lvl + 1) end
  local class, code, msg, mystate = hsql.err(con._c)
  raise(con, q, class, code, msg, lvl + 1, mystate)
end

local con_mt = {}
con_mt.__index = con_mt
con_mt.__tostring = function() return "<sql_connection>" end
function con_mt:query(q)
  local kind, a, b, g = hsql.query(self._c, q)
  -- sysbench raises a closed connection's error one level further out than its SQL
  -- errors (pcall(con.query, con, q) names the line that called pcall).
  if kind == 2 then closed(3) end
  local rs = result(self, q, 2, kind, a, b, g)
  return rs -- not a tail call: error levels count this frame
end
function con_mt:query_row(q)
  local rs = result(self, q, 2, hsql.query(self._c, q))
  -- One nil without a row or a result set, as sysbench's (select("#", ...) is 1).
  if rs == nil or rs.nrows == 0 or rs.nfields == 0 then return nil end
  return unpack(fetch(rs, 2), 1, rs.nfields)
end
function con_mt:disconnect() hsql.disconnect(self._c) end
function con_mt:reconnect()
  local ok, msg = hsql.reconnect(self._c)
  if ok == "closed" then closed(2) end
  if not ok then
    io.stderr:write("FATAL: " .. tostring(msg) .. "\n")
    api_error(2)
  end
  return true
end

-- Bulk inserts: rows gathered after the prefix and sent as one INSERT when the next row
-- would take the statement past sysbench's 512 KiB buffer, and at bulk_insert_done().
local BULK_MAX = 512 * 1024
function con_mt:bulk_insert_init(prefix)
  self._bulk = { prefix = prefix, rows = {}, len = #prefix + 1 }
  return true
end
local function bulk_flush(con, lvl)
  local b = con._bulk
  if #b.rows == 0 then return end
  local q = b.prefix .. table.concat(b.rows, ",")
  b.rows = {}
  b.len = #b.prefix + 1
  result(con, q, lvl + 1, hsql.query(con._c, q))
end
function con_mt:bulk_insert_next(v)
  local b = self._bulk
  if b == nil then
    io.stderr:write("ALERT: attempt to call bulk_insert_next() before bulk_insert_init()\n")
    error("db_bulk_insert_next() failed", 2)
  end
  local add = #v + (#b.rows > 0 and 1 or 0)
  if b.len + add > BULK_MAX then
    if #b.rows == 0 then
      io.stderr:write("ALERT: Query length exceeds the maximum value. Aborting.\n")
      error("db_bulk_insert_next() failed", 2)
    end
    bulk_flush(self, 2)
    add = #v
    if b.len + add > BULK_MAX then
      io.stderr:write("ALERT: Query length exceeds the maximum value. Aborting.\n")
      error("db_bulk_insert_next() failed", 2)
    end
  end
  b.rows[#b.rows + 1] = v
  b.len = b.len + add
  return true
end
function con_mt:bulk_insert_done()
  if self._bulk ~= nil then
    bulk_flush(self, 2)
    self._bulk = nil
  end
  return true
end

-- Parameters: `_k` is how the value goes to the server (1 integer, 2 double, 3 text),
-- `_v` the value (nil = NULL).
local param_mt = {}
param_mt.__index = param_mt
param_mt.__tostring = function() return "<sql_param>" end
function param_mt:set(v)
  if v == nil then
    self._v = nil
    self.is_null = true
    return
  end
  self.is_null = false
  if self._k == 1 then
    if type(v) ~= "number" then
      error("cannot convert '" .. type(v) .. "' to 'int64_t'", 2)
    end
    self._v = v >= 0 and math.floor(v) or math.ceil(v)
  elseif self._k == 2 then
    if type(v) ~= "number" then
      error("cannot convert '" .. type(v) .. "' to 'double'", 2)
    end
    self._v = v
  else
    v = tostring(v)
    if #v > self.max_len then v = v:sub(1, self.max_len) end
    self._v = v
  end
end
function param_mt:set_rand_str(fmt)
  local v = sysbench.rand.string(fmt)
  if #v > self.max_len then v = v:sub(1, self.max_len) end
  self.is_null = false
  self._v = v
end

local stmt_mt = {}
stmt_mt.__index = stmt_mt
stmt_mt.__tostring = function() return "<sql_statement>" end
function stmt_mt:bind_create(t, max_len)
  local k
  if t == T.TINYINT or t == T.SMALLINT or t == T.INT or t == T.BIGINT then
    k = 1
  elseif t == T.FLOAT or t == T.DOUBLE then
    k = 2
  elseif t == T.CHAR or t == T.VARCHAR then
    k = 3
    if max_len == nil then error("max_len is required for CHAR/VARCHAR parameters", 2) end
  else
    error("Unsupported argument type: " .. tostring(t), 2)
  end
  return setmetatable({ type = t, max_len = max_len or 8, is_null = true, _k = k }, param_mt)
end
-- Up to four parameters travel to lua/sql.rs as their values, their kinds packed two
-- bits each in `_kinds`: no table to read per execute. `_num`: all of them are integer or
-- double parameters, which execute can send through the FFI (below).
function stmt_mt:bind_param(...)
  local n = select("#", ...)
  if n == 0 then return nil end
  local ps = { ... }
  local kinds, num = 0, n <= 4
  for i = n, 1, -1 do
    local p = ps[i]
    if type(p) ~= "table" or p._k == nil then
      error("bad argument #" .. i .. " to 'bind_param' (<sql_param> expected)", 2)
    end
    if n <= 4 then kinds = kinds * 4 + p._k end
    if p._k == 3 then num = false end
  end
  self._params, self._n, self._kinds, self._num = ps, n, kinds, num
  return 0
end
local hexec = hsql.execute
-- The FFI path (lua/sql.rs, hb_sql_execute): a statement without parameters or whose
-- parameters all hold numbers or NULL (up to four) is executed by a direct call, which a
-- compiled trace makes without leaving it; its three numbers come back in `xout`.
local hexec_ffi = ffi.cast("int (*)(uint32_t, double, uint32_t, uint32_t, uint32_t, uint32_t, "
  .. "double, double, double, double, double *)", hsql.execute_ptr)
hsql.execute_ptr = nil
local xout = ffi.new("double[3]")
-- A parameter's value for the FFI path: (value, 0), (0, bit) for NULL, nil for anything
-- but a number (a string set by set_rand_str on a numeric parameter takes the other path).
local function num(v, bit)
  if v == nil then return 0, bit end
  if type(v) == "number" then return v, 0 end
  return nil
end
local function execute_ffi(self, con, id, n, ps)
  local v1, v2, v3, v4, m1, m2, m3, m4 = 0, 0, 0, 0, 0, 0, 0, 0
  if n >= 1 then
    v1, m1 = num(ps[1]._v, 1)
    if v1 == nil then return nil end
    if n >= 2 then
      v2, m2 = num(ps[2]._v, 2)
      if v2 == nil then return nil end
      if n >= 3 then
        v3, m3 = num(ps[3]._v, 4)
        if v3 == nil then return nil end
        if n == 4 then
          v4, m4 = num(ps[4]._v, 8)
          if v4 == nil then return nil end
        end
      end
    end
  end
  local kind = hexec_ffi(con._slot, con._key, id, self._kinds or 0, n, m1 + m2 + m3 + m4,
                         v1, v2, v3, v4, xout)
  -- 4: the slot names no connection of this thread (the state moved): the other path.
  if kind == 4 then return nil end
  return kind, xout[0], xout[1], xout[2]
end
function stmt_mt:execute()
  if self._closed then api_error(2) end
  local con, id, n, ps = self._con, self._id, self._n, self._params
  local kind, a, b, g
  if n == nil or self._num then
    kind, a, b, g = execute_ffi(self, con, id, n or 0, ps)
    if kind ~= nil then
      local rs = result(con, "<prepared statement>", 2, kind, a, b, g)
      return rs -- not a tail call: error levels count this frame
    end
  end
  local c = con._c
  if n == nil then
    kind, a, b, g = hexec(c, id, 0, 0)
  elseif n == 1 then
    kind, a, b, g = hexec(c, id, self._kinds, 1, ps[1]._v)
  elseif n == 2 then
    kind, a, b, g = hexec(c, id, self._kinds, 2, ps[1]._v, ps[2]._v)
  elseif n == 3 then
    kind, a, b, g = hexec(c, id, self._kinds, 3, ps[1]._v, ps[2]._v, ps[3]._v)
  elseif n == 4 then
    kind, a, b, g = hexec(c, id, self._kinds, 4, ps[1]._v, ps[2]._v, ps[3]._v, ps[4]._v)
  else
    kind, a, b, g = hexec(c, id, 0, n, nil, nil, nil, nil, ps)
  end
  local rs = result(self._con, "<prepared statement>", 2, kind, a, b, g)
  return rs -- not a tail call: error levels count this frame
end
function stmt_mt:close()
  self._closed = true
  return 0
end

function con_mt:prepare(q)
  local id, a, b = hsql.prepare(self._c, q)
  if type(id) == "number" then
    return setmetatable({ _con = self, _id = id }, stmt_mt)
  end
  if id == "closed" then closed(2) end
  if id == "api" then
    io.stderr:write("FATAL: mysql_stmt_prepare() failed\n")
    io.stderr:write(string.format("FATAL: MySQL error: %s \"%s\"\n", a, b))
    api_error(2)
  end
  local class, code, msg, mystate = hsql.err(self._c)
  raise(self, q, class, code, msg, 2, mystate)
end

local drv_mt = {}
drv_mt.__index = drv_mt
drv_mt.__tostring = function() return "<sql_driver>" end
function drv_mt:name() return self._name end
function drv_mt:connect()
  local c, slot, key = hsql.connect(self._name, sysbench.opt)
  if c == nil then
    io.stderr:write("FATAL: " .. slot .. "\n")
    error("connection creation failed", 2)
  end
  -- `_slot`, `_key`: the connection's name for the FFI path of execute.
  return setmetatable({ _c = c, _slot = slot, _key = key, _driver = self._name }, con_mt)
end

function sql.driver(name)
  name = name or sysbench.opt.db_driver
  local msg = hsql.check(name, sysbench.opt)
  if msg ~= nil then
    io.stderr:write("FATAL: " .. msg .. "\n")
    error("failed to initialize the DB driver", 2)
  end
  return setmetatable({ _name = name }, drv_mt)
end

-------------------------------------------------------------------------------
-- The 0.4/0.5-style globals sysbench 1.0.20 keeps for old scripts.
-------------------------------------------------------------------------------
thread_id = sysbench.tid
test = sysbench.cmdline.script_path
function sb_rnd() return tonumber(C.sb_rand_uniform_uint64() % 4294967296ULL) end
sb_rand = r.default
sb_rand_str = r.string
sb_rand_uniform = r.uniform
sb_rand_gaussian = r.gaussian
sb_rand_special = r.special
function sb_rand_uniq(a, b)
  a = a or 0
  b = b or 4294967295
  local v
  repeat v = r.unique() until v >= a and v <= b
  return v
end
DB_ERROR_NONE = 0
DB_ERROR_RESTART_TRANSACTION = 1
DB_ERROR_FAILED = 2
mysql_table_engine = "innodb"
myisam_max_rows = 1000000

-------------------------------------------------------------------------------
-- The legacy C API of sysbench 1.0.20 (`sysbench.db.*` and the `db_*` globals that
-- tests/include/oltp_legacy uses), on top of sysbench.sql: one implicit connection per
-- thread, queries that return nothing, prepared statements bound to a Lua table that is
-- re-read at every execute. Differences, on purpose: a failed execute or bulk-insert
-- flush raises an error (sysbench 1.0.20 logs it and goes on as if it had worked); numbers
-- bind as 64-bit integers (sysbench: a C int, whose overflow is undefined).
-------------------------------------------------------------------------------
local ldb = {}
sysbench.db = ldb
local lcon, ldrv
local RESTART = sysbench.error.RESTART_EVENT

local function restart_or(msg, e, lvl)
  if type(e) == "table" and e.errcode == RESTART then
    error({ errcode = RESTART }, 0)
  end
  error(msg, lvl + 1)
end

local function need_con(lvl)
  if lcon == nil then error("Uninitialized database connection", lvl + 1) end
end

function ldb.connect()
  if ldrv == nil then
    local ok, d = pcall(sql.driver)
    if not ok then error("DB initialization failed", 2) end
    ldrv = d
  end
  db_driver = ldrv:name()
  if lcon ~= nil then return end
  local ok, c = pcall(ldrv.connect, ldrv)
  if not ok then error("Failed to connect to the database", 2) end
  lcon = c
end

function ldb.disconnect()
  if lcon ~= nil then
    lcon:disconnect()
    lcon = nil
  end
end

function ldb.query(q)
  if lcon == nil then ldb.connect() end
  if type(q) ~= "string" and type(q) ~= "number" then
    error("bad argument #1 to 'db_query' (string expected, got " .. type(q) .. ")", 2)
  end
  local ok, e = pcall(lcon.query, lcon, q)
  if not ok then restart_or("db_query() failed", e, 2) end
end

function ldb.bulk_insert_init(q)
  if lcon == nil then ldb.connect() end
  local ok = pcall(lcon.bulk_insert_init, lcon, q)
  if not ok then error("db_bulk_insert_init() failed", 2) end
end

function ldb.bulk_insert_next(v)
  need_con(2)
  local ok, e = pcall(lcon.bulk_insert_next, lcon, v)
  if not ok then restart_or("db_bulk_insert_next() failed", e, 2) end
end

function ldb.bulk_insert_done()
  need_con(2)
  local ok, e = pcall(lcon.bulk_insert_done, lcon)
  if not ok then restart_or("db_bulk_insert_done() failed", e, 2) end
end

local lstmt_mt = { __tostring = function() return "<sysbench.stmt>" end }
lstmt_mt.__index = lstmt_mt
local lrs_mt = { __tostring = function() return "<sysbench.rs>" end }
lrs_mt.__index = lrs_mt

local function check_stmt(s, fname)
  if getmetatable(s) ~= lstmt_mt then
    error("bad argument #1 to '" .. fname .. "' (prepared statement expected)", 3)
  end
end

function ldb.prepare(q)
  if lcon == nil then ldb.connect() end
  local ok, s = pcall(lcon.prepare, lcon, q)
  if not ok then error("db_prepare() failed", 2) end
  return setmetatable({ _s = s, _ids = {}, _params = nil }, lstmt_mt)
end

-- A number binds as an integer, a string as text; the table stays the statement's, and
-- every execute reads the values it holds then (nil is NULL).
function ldb.bind_param(stmt, params)
  need_con(2)
  check_stmt(stmt, "db_bind_param")
  if type(params) ~= "table" then error("table was expected", 2) end
  local ids, binds = {}, {}
  for k, v in pairs(params) do
    if type(k) ~= "number" then
      error("bad argument to 'db_bind_param' (number expected as the key, got " .. type(k) .. ")", 2)
    end
    local t = type(v)
    local b
    if t == "number" then
      b = stmt._s:bind_create(T.BIGINT)
    elseif t == "string" then
      b = stmt._s:bind_create(T.VARCHAR, math.huge)
    else
      error("Unsupported variable type: " .. t, 2)
    end
    ids[#ids + 1] = k
    binds[#binds + 1] = b
  end
  if #ids == 0 then error("table is empty", 2) end
  stmt._ids, stmt._binds, stmt._params = ids, binds, params
  stmt._s:bind_param(unpack(binds))
end

function ldb.bind_result(stmt, results)
  need_con(2)
  check_stmt(stmt, "db_bind_result")
  if type(results) ~= "table" then error("table was expected", 2) end
  if next(results) == nil then error("table is empty", 2) end
  -- sysbench 1.0.20 binds the buffers but never fills the table: nothing to do.
  stmt._results = results
end

function ldb.execute(stmt)
  need_con(2)
  check_stmt(stmt, "db_execute")
  local p = stmt._params
  for i, id in ipairs(stmt._ids) do
    local v = p[id]
    local b = stmt._binds[i]
    if v == nil then
      b:set(nil)
    elseif b._k == 1 then
      local n = tonumber(v)
      if n == nil then
        error("bad argument to 'db_execute' (number expected, got " .. type(v) .. ")", 2)
      end
      b:set(n)
    else
      if type(v) ~= "string" and type(v) ~= "number" then
        error("bad argument to 'db_execute' (string expected, got " .. type(v) .. ")", 2)
      end
      b:set(tostring(v))
    end
  end
  local ok, rs = pcall(stmt._s.execute, stmt._s)
  if not ok then restart_or("db_execute() failed", rs, 2) end
  return setmetatable({ _rs = rs }, lrs_mt)
end

function ldb.store_results(rs)
  need_con(2)
  if getmetatable(rs) ~= lrs_mt then
    error("bad argument #1 to 'db_store_results' (result set expected)", 2)
  end
end

function ldb.free_results(rs)
  need_con(2)
  if getmetatable(rs) ~= lrs_mt then
    error("bad argument #1 to 'db_free_results' (result set expected)", 2)
  end
  if rs._rs ~= nil and not rs._rs._freed then rs._rs:free() end
  rs._rs = nil
end

function ldb.close(stmt)
  need_con(2)
  check_stmt(stmt, "db_close")
  stmt._s:close()
  stmt._params = nil
end

db_connect = ldb.connect
db_disconnect = ldb.disconnect
db_query = ldb.query
db_bulk_insert_init = ldb.bulk_insert_init
db_bulk_insert_next = ldb.bulk_insert_next
db_bulk_insert_done = ldb.bulk_insert_done
db_prepare = ldb.prepare
db_bind_param = ldb.bind_param
db_bind_result = ldb.bind_result
db_execute = ldb.execute
db_store_results = ldb.store_results
db_free_results = ldb.free_results
db_close = ldb.close
