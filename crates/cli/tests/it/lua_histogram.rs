//! `sysbench.histogram` in Lua scripts (the reference's T27): the same buckets, bars and
//! counts as sysbench 1.0.20 prints, compared with Debian's sysbench when it is installed
//! (CI installs it), else with the lines sysbench printed for this script.

use crate::common::run_in;

const SCRIPT: &str = r#"
sysbench.cmdline.commands = { hist = { function()
  local h = sysbench.histogram.new(10, 1, 100)
  for i = 1, 50 do h:update(i * 2 - 0.5) end
  h:update(0.5); h:update(1000)
  h:print()
  local e = sysbench.histogram.new(5, 1, 10)
  e:print()
  print("end " .. tostring(h))
end } }
"#;

/// What sysbench 1.0.20 printed for SCRIPT's first histogram (Debian 12, 2026-11-26).
const SYSBENCH: &str = "       value  ------------- distribution ------------- count
       1.000 |***                                      1
       1.668 |***                                      1
       2.783 |***                                      1
       4.642 |***                                      1
       7.743 |*****                                    2
      12.915 |********                                 3
      21.544 |****************                         6
      35.938 |************************                 9
      59.948 |**************************************** 15
     100.000 |***********************************      13
";

#[test]
fn histogram_prints_as_sysbench() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("h.lua"), SCRIPT).unwrap();
    let (code, out, err) = run_in(d.path(), &["h.lua", "hist"]);
    assert_eq!(code, 0, "{err}");
    let body: String = out.lines().skip(2).map(|l| format!("{l}\n")).collect();
    let (hist, end) = body.split_at(body.find("end ").expect("the script ends"));
    assert_eq!(hist, SYSBENCH);
    // An empty histogram prints nothing; tostring works (sysbench 1.0.20 raises there).
    assert_eq!(end, "end sysbench.histogram(10 buckets)\n");
    if let Ok(o) = std::process::Command::new("sysbench")
        .args(["h.lua", "hist"])
        .current_dir(d.path())
        .output()
    {
        let theirs = String::from_utf8_lossy(&o.stdout);
        let theirs: String = theirs.lines().skip(2).map(|l| format!("{l}\n")).collect();
        assert!(theirs.starts_with(SYSBENCH), "sysbench printed:\n{theirs}");
    }
    // Bad arguments are errors that say what to give.
    std::fs::write(
        d.path().join("bad.lua"),
        "sysbench.cmdline.commands = { b = { function() sysbench.histogram.new(10, 0, 100) end } }\n",
    )
    .unwrap();
    let (code, _, err) = run_in(d.path(), &["bad.lua", "b"]);
    assert_ne!(code, 0);
    assert!(err.contains("need 0 < min < max"), "{err}");
}
