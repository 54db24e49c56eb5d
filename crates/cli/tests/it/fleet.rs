//! `hostbench fleet`: the same command on several hosts over OpenSSH. The hosts are network
//! namespaces on this machine, each with its own sshd ([`netns`]); where namespaces cannot
//! be made (not root, no iproute2 or openssh-server), each test prints that it was skipped
//! and why.

#[path = "fleet/netns.rs"]
mod netns;

use netns::Hosts;

#[test]
fn harness_hosts_answer_over_ssh_and_leave_nothing_behind() {
    if netns::skip("harness_hosts_answer_over_ssh_and_leave_nothing_behind") {
        return;
    }
    let names: Vec<String>;
    {
        let hosts = Hosts::start(2);
        names = hosts.hosts.iter().map(|h| h.ns.clone()).collect();
        for (i, h) in hosts.hosts.iter().enumerate() {
            // Each host is its own network: its address is the one it sees on its interface.
            let o = hosts
                .ssh()
                .args([
                    h.addr.as_str(),
                    "ip",
                    "-4",
                    "-o",
                    "addr",
                    "show",
                    "scope",
                    "global",
                ])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let addrs = String::from_utf8_lossy(&o.stdout).into_owned();
            assert!(addrs.contains(&format!("{}/24", h.addr)), "{addrs}");
            assert_eq!(addrs.lines().count(), 1, "{addrs}");
            assert!(!hosts.pids(i).is_empty());
        }
    }
    let list = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    for n in &names {
        assert!(!list.contains(n.as_str()), "{n} left behind: {list}");
    }
}
