-- The reference notes' T11 probe: every kind of statement once or twice, with the
-- counter each one lands in; the output and the counters are sysbench 1.0.20's (checked
-- against MariaDB and PostgreSQL with both).
local T = sysbench.sql.type
local function show(tag, ...)
  local n = select("#", ...)
  local t = {}
  for i = 1, n do t[i] = tostring((select(i, ...))) end
  print(tag .. ": " .. table.concat(t, " ") .. " (" .. n .. ")")
end
function event()
  local con = sysbench.sql.driver():connect()
  con:query("DROP TABLE IF EXISTS hb_t11")                                   -- other
  con:query("CREATE TABLE hb_t11 (id INTEGER, c VARCHAR(5), n INTEGER)")     -- other
  con:query("INSERT INTO hb_t11 VALUES (1, 'x', NULL), (2, 'yy', 5)")        -- write
  con:query("UPDATE hb_t11 SET n = 7 WHERE id = 99")                         -- other (0 rows)
  local rs = con:query("SELECT id, c, n FROM hb_t11 ORDER BY id")            -- read
  show("rs", rs.nrows, rs.nfields)
  local row = rs:fetch_row()
  show("row1", row[1], row[2], row[3], #row)
  row = rs:fetch_row()
  show("row2", unpack(row, 1, rs.nfields))
  show("end", rs:fetch_row())
  local e = con:query("SELECT id FROM hb_t11 WHERE id < 0")                  -- read
  show("empty", e.nrows, e.nfields)
  show("empty_row", con:query_row("SELECT id FROM hb_t11 WHERE id < 0"))     -- read
  show("query_row", con:query_row("SELECT id, c FROM hb_t11 WHERE id = 1"))  -- read
  show("noresult", con:query("UPDATE hb_t11 SET n = n WHERE id = 99") == nil) -- other
  con:query("BEGIN")                                                         -- other
  local sel = con:prepare("SELECT c FROM hb_t11 WHERE id = ?")
  local p = sel:bind_create(T.INT)
  sel:bind_param(p)
  p:set(1); sel:execute()                                                    -- read
  p:set(2); sel:execute()                                                    -- read
  local upd = con:prepare("UPDATE hb_t11 SET c = ? WHERE id = ?")
  local s, i = upd:bind_create(T.VARCHAR, 5), upd:bind_create(T.INT)
  upd:bind_param(s, i)
  s:set("abcdefgh"); i:set(2); upd:execute()                                 -- write
  s:set_rand_str("##@@"); i:set(1); upd:execute()                            -- write
  con:query("COMMIT")                                                        -- other
  show("varchar5", con:query_row("SELECT c FROM hb_t11 WHERE id = 2"))       -- read
  local r = con:query_row("SELECT c FROM hb_t11 WHERE id = 1")               -- read
  show("rand_str", #r, r:match("^%d%d%l%l$") ~= nil)
  show("count", con:query_row("SELECT COUNT(*) FROM hb_t11"))                -- read
  local ok, err = pcall(con.query, con, "SELECT * FROM hb_t11_missing")      -- error
  show("bad", ok, err)
  con:query("DROP TABLE hb_t11")                                             -- other
  con:disconnect()
end
sysbench.hooks.report_cumulative = function(st)
  print(string.format("reads=%d writes=%d other=%d errors=%d", st.reads, st.writes, st.other, st.errors))
end
