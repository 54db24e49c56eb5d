-- sysbench's SQL API checks (after tests/include/api_sql_common.sh's description): the
-- constants, a bad driver name, a bulk insert, a closed connection, an unsupported type.
local sql = sysbench.sql
function event()
  local names = {}
  for k in pairs(sql.type) do names[#names + 1] = k end
  table.sort(names, function(a, b) return sql.type[a] < sql.type[b] end)
  for _, k in ipairs(names) do print("type " .. k .. " = " .. sql.type[k]) end
  print("error NONE = " .. sql.error.NONE)
  print("error IGNORABLE = " .. sql.error.IGNORABLE)
  print("error FATAL = " .. sql.error.FATAL)
  local ok, e = pcall(sql.driver, "nosuchdriver")
  print("bad driver: " .. tostring(ok) .. " " .. tostring(e))
  local drv = sql.driver()
  print("driver name: " .. drv:name())
  local con = drv:connect()
  print("tostring: " .. tostring(drv) .. " " .. tostring(con))
  con:query("DROP TABLE IF EXISTS hb_t12")
  con:query("CREATE TABLE hb_t12 (a INTEGER)")
  con:bulk_insert_init("INSERT INTO hb_t12 VALUES")
  for i = 1, 100 do con:bulk_insert_next("(" .. i .. ")") end
  con:bulk_insert_done()
  print("rows: " .. con:query_row("SELECT COUNT(*) FROM hb_t12"))
  local rs = con:query("SELECT MIN(a), MAX(a) FROM hb_t12")
  print("min max: " .. table.concat(rs:fetch_row(), " "))
  local stmt = con:prepare("SELECT a FROM hb_t12 WHERE a = ?")
  print("stmt: " .. tostring(stmt))
  ok, e = pcall(stmt.bind_create, stmt, sql.type.DATE)
  print("date: " .. tostring(ok) .. " " .. tostring(e))
  local p = stmt:bind_create(sql.type.INT)
  print("param: " .. tostring(p))
  stmt:bind_param(p)
  p:set(42)
  stmt:execute()
  stmt:close()
  con:query("DROP TABLE hb_t12")
  con:disconnect()
  ok, e = pcall(con.query, con, "SELECT 1")
  print("closed: " .. tostring(ok) .. " " .. tostring(e))
  return true
end
