//! Local processes behind a TCP port: the server a load test talks to over loopback, found by
//! its listening socket (`/proc/net/tcp{,6}` gives the socket's inode, `/proc/PID/fd` the
//! processes holding it), and their CPU time (`/proc/PID/stat`).
//!
//! Invariants: never fails and never blocks; what cannot be read (another user's processes
//! without privileges, a process that exited) is left out.

use crate::fs::Fs;

/// Processes holding a socket that listens on TCP `port` (any local address), ascending.
pub fn tcp_listeners(port: u16) -> Vec<u32> {
    tcp_listeners_at(&Fs::system(), port)
}

pub(crate) fn tcp_listeners_at(fs: &Fs, port: u16) -> Vec<u32> {
    let mut inodes: Vec<u64> = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Some(text) = fs.read(table) else { continue };
        inodes.extend(
            text.lines()
                .skip(1)
                .filter_map(|l| listening_inode(l, port)),
        );
    }
    if inodes.is_empty() {
        return Vec::new();
    }
    let mut pids = Vec::new();
    for name in fs.list_dir("/proc") {
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        let fds = fs.list_dir(&format!("/proc/{pid}/fd"));
        let holds = fds.iter().any(|fd| {
            fs.read_link(&format!("/proc/{pid}/fd/{fd}"))
                .and_then(|t| socket_inode(&t))
                .is_some_and(|i| inodes.contains(&i))
        });
        if holds {
            pids.push(pid);
        }
    }
    pids.sort_unstable();
    pids
}

/// The inode of a `/proc/net/tcp` line's socket when it listens on `port`.
fn listening_inode(line: &str, port: u16) -> Option<u64> {
    let f: Vec<&str> = line.split_whitespace().collect();
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    let local = f.get(1)?;
    let (_, p) = local.rsplit_once(':')?;
    let listening = *f.get(3)? == "0A";
    (listening && u16::from_str_radix(p, 16).ok()? == port).then(|| f.get(9)?.parse().ok())?
}

/// `socket:[12345]` → 12345.
fn socket_inode(target: &str) -> Option<u64> {
    target
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// CPU time (user + system, ticks) of the processes in `pids` that can still be read, with
/// the names of those processes.
pub fn cpu_ticks(pids: &[u32]) -> (u64, Vec<String>) {
    cpu_ticks_at(&Fs::system(), pids)
}

pub(crate) fn cpu_ticks_at(fs: &Fs, pids: &[u32]) -> (u64, Vec<String>) {
    let mut ticks = 0;
    let mut names = Vec::new();
    for pid in pids {
        let Some(stat) = fs.read(&format!("/proc/{pid}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let (Some(u), Some(s)) = (f.get(11), f.get(12)) else {
            continue;
        };
        ticks += u.parse::<u64>().unwrap_or(0) + s.parse::<u64>().unwrap_or(0);
        let name = stat[open + 1..close].to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    (ticks, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_links() {
        let l = "   1: 0100007F:1F99 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0";
        assert_eq!(listening_inode(l, 8089), Some(4242));
        assert_eq!(listening_inode(l, 8090), None);
        // Established, not listening.
        let e = l.replace(" 0A ", " 01 ");
        assert_eq!(listening_inode(&e, 8089), None);
        // IPv6 address form.
        let v6 = "   0: 00000000000000000000000000000000:1F99 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77 1 0 100 0 0 10 0";
        assert_eq!(listening_inode(v6, 8089), Some(77));
        assert_eq!(socket_inode("socket:[4242]"), Some(4242));
        assert_eq!(socket_inode("pipe:[4242]"), None);
        assert_eq!(socket_inode("/dev/null"), None);
    }

    #[test]
    fn finds_this_process_listening() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let pids = tcp_listeners(port);
        assert_eq!(pids, vec![std::process::id()], "port {port}");
        let (ticks, names) = cpu_ticks(&pids);
        let _ = ticks;
        assert_eq!(names.len(), 1, "{names:?}");
        drop(l);
        assert!(tcp_listeners(port).is_empty());
    }
}
