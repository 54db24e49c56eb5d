//! fio 3.33's `nbd` engine (`engines/nbd.c`) against qemu-nbd serving a raw image in a
//! tempdir, over a unix socket and over TCP on the loopback: fio's `examples/nbd.fio`
//! adapted in size and paths, the export's size as the file's, writes landing in the image
//! and read back through NBD by a verify phase, fsync as NBD flushes, trims, a read-only
//! export, and what is refused. Compared with the installed fio (its nbd engine) on what
//! does not depend on speed: exit status, each job's bytes and I/Os, the JSON key sets.
//!
//! Without qemu-nbd each test prints a skip line; without fio the comparisons are skipped
//! (`HOSTBENCH_TEST_FIO` set: fail).

use super::fio::{s, tmp};
use super::fio_files::{Ran, doc, fio, hb};
use super::fio_net::{jobs, key_set};
use super::fio_seq::need_fio;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const QEMU_NBD: &str = "/usr/bin/qemu-nbd";

/// A qemu-nbd serving `img` (raw), ended when dropped.
struct Server {
    child: Child,
    uri: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn have_qemu_nbd(test: &str) -> bool {
    if Path::new(QEMU_NBD).exists() {
        return true;
    }
    eprintln!("skip: {QEMU_NBD} is not installed (package qemu-utils); {test} not run");
    false
}

/// A raw image of `mib` MiB of zeros in `d`.
fn image(d: &Path, mib: u64) -> PathBuf {
    let p = d.join("disk.img");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(mib << 20).unwrap();
    p
}

/// qemu-nbd on a unix socket in `d` (up to 8 clients at once; `extra` arguments first).
fn serve_unix(d: &Path, img: &Path, extra: &[&str]) -> Server {
    let sock = d.join("nbd.sock");
    let child = Command::new(QEMU_NBD)
        .args(extra)
        .args(["-t", "-e", "8", "-f", "raw", "-k"])
        .arg(&sock)
        .arg(img)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !sock.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "qemu-nbd did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Server {
        child,
        uri: format!("nbd+unix:///?socket={}", s(&sock)),
    }
}

/// A TCP port free on the loopback now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// qemu-nbd on 127.0.0.1 at a free port.
fn serve_tcp(img: &Path) -> Server {
    let port = free_port();
    let child = Command::new(QEMU_NBD)
        .args(["-t", "-e", "8", "-f", "raw", "-b", "127.0.0.1", "-p"])
        .arg(port.to_string())
        .arg(img)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "qemu-nbd did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Server {
        child,
        uri: format!("nbd://127.0.0.1:{port}"),
    }
}

/// hostbench and (when installed) fio on job file `name` with `text`, JSON output.
fn both(d: &Path, name: &str, text: &str) -> (Ran, Option<Ran>) {
    std::fs::write(d.join(name), text).unwrap();
    let a = [name, "--output-format=json"];
    let h = hb(d, &a);
    let f = need_fio("fio_nbd").then(|| fio(d, &a));
    (h, f)
}

#[test]
fn nbd_example_over_a_unix_socket_as_in_fio() {
    if !have_qemu_nbd("nbd_example_over_a_unix_socket_as_in_fio") {
        return;
    }
    let d = tmp("nbd-example");
    let img = image(&d, 32);
    let srv = serve_unix(&d, &img, &[]);
    // fio's examples/nbd.fio: 4 jobs a quarter of the export apart, randrw at iodepth 64;
    // 2 MiB each instead of 60 s (counts that do not depend on speed).
    let job = format!(
        "[global]\nioengine=nbd\nuri={}\nrw=randrw\nsize=2m\ngroup_reporting\niodepth=64\n\n\
         [job0]\noffset=0\n\n[job1]\noffset=8m\n\n[job2]\noffset=16m\n\n[job3]\noffset=24m\n",
        srv.uri
    );
    let (h, f) = both(&d, "nbd.fio", &job);
    assert_eq!(h.code, 0, "{}\n{}", h.out, h.err);
    assert_eq!(
        h.err.matches("fio: connected to NBD server").count(),
        4,
        "{}",
        h.err
    );
    let hv = doc(&h.out);
    let hj = jobs(&hv);
    assert_eq!(hj.len(), 1, "group_reporting: one entry");
    // 4 jobs × 2 MiB of 4 KiB blocks, reads and writes drawn.
    assert_eq!(hj[0].3 + hj[0].5, 4 * 512, "{hj:?}");
    assert_eq!(hj[0].2 + hj[0].4, 4 * (2 << 20));
    let depth = hv["jobs"][0]["iodepth_level"][">=64"].as_f64().unwrap();
    assert!(depth > 50.0, "requests are in flight at once: {depth}");
    if let Some(f) = f {
        assert_eq!(f.code, 0, "{}", f.err);
        assert_eq!(f.out.matches("fio: connected to NBD server").count(), 4);
        let fv = doc(&f.out);
        let fj = jobs(&fv);
        assert_eq!(fj[0].3 + fj[0].5, hj[0].3 + hj[0].5);
        assert_eq!(fj[0].2 + fj[0].4, hj[0].2 + hj[0].4);
        assert_eq!(key_set(&hv), key_set(&fv));
    }
    // The image took the writes, inside the 4 regions only.
    let data = std::fs::read(&img).unwrap();
    for r in 0..4usize {
        let at = r * (8 << 20);
        assert!(
            data[at..at + (2 << 20)].iter().any(|&b| b != 0),
            "region {r}"
        );
        assert!(
            data[at + (2 << 20)..at + (8 << 20)].iter().all(|&b| b == 0),
            "past region {r}"
        );
    }
}

#[test]
fn the_export_size_is_the_file_size_as_in_fio() {
    if !have_qemu_nbd("the_export_size_is_the_file_size_as_in_fio") {
        return;
    }
    let d = tmp("nbd-size");
    let img = image(&d, 8);
    let srv = serve_tcp(&img);
    // No size: the whole export; a size past its end stops there; an offset leaves the
    // rest of it.
    let job = format!(
        "[global]\nioengine=nbd\nuri={}\nrw=read\nbs=1m\n\n[whole]\n\n\
         [larger]\nsize=64m\n\n[rest]\noffset=6m\nsize=4m\n\n\
         [clones]\nnumjobs=2\noffset_increment=6m\n",
        srv.uri
    );
    let (h, f) = both(&d, "size.fio", &job);
    assert_eq!(h.code, 0, "{}\n{}", h.out, h.err);
    let hj = jobs(&doc(&h.out));
    let m = 1u64 << 20;
    assert_eq!(hj[0], ("whole".into(), 0, 8 * m, 8, 0, 0, 0));
    assert_eq!(hj[1], ("larger".into(), 0, 8 * m, 8, 0, 0, 0));
    assert_eq!(hj[2], ("rest".into(), 0, 2 * m, 2, 0, 0, 0));
    // Each clone's region stops at the export's end: the second, 6 MiB in, reads 2 MiB.
    assert_eq!(hj[3], ("clones".into(), 0, 8 * m, 8, 0, 0, 0));
    assert_eq!(hj[4], ("clones".into(), 0, 2 * m, 2, 0, 0, 0));
    if let Some(f) = f {
        assert_eq!(f.code, 0, "{}", f.err);
        assert_eq!(jobs(&doc(&f.out)), hj);
    }
}

#[test]
fn writes_flushes_and_a_verify_phase_go_through_nbd_as_in_fio() {
    if !have_qemu_nbd("writes_flushes_and_a_verify_phase_go_through_nbd_as_in_fio") {
        return;
    }
    let d = tmp("nbd-verify");
    let img = image(&d, 8);
    let srv = serve_tcp(&img);
    let job = format!(
        "[w]\nioengine=nbd\nuri={}\nrw=write\nbs=64k\noffset=1m\nsize=4m\niodepth=16\n\
         fsync=8\nend_fsync=1\nverify=crc32c\n",
        srv.uri
    );
    let (h, f) = both(&d, "verify.fio", &job);
    assert_eq!(h.code, 0, "{}\n{}", h.out, h.err);
    let hv = doc(&h.out);
    let hj = jobs(&hv);
    // 64 writes, then the verify phase reads the 64 back through the connection.
    assert_eq!(hj[0], ("w".into(), 0, 4 << 20, 64, 4 << 20, 64, 0));
    let syncs = hv["jobs"][0]["sync"]["total_ios"].as_u64().unwrap();
    // fsync=8: a flush before the I/O after every 8th write, none after the last (fio
    // 3.33 counts 7 on a file with libaio too; the verify reads that follow are not the
    // job's I/O). fio's own nbd engine queues more: it asks again whether a sync is due
    // before the one in flight has completed, so its count varies from run to run (a fio
    // slip hostbench does not copy, docs/fio.md): never fewer.
    assert_eq!(syncs, 7, "fsync=8: a flush every 8 writes");
    if let Some(f) = &f {
        let n = doc(&f.out)["jobs"][0]["sync"]["total_ios"]
            .as_u64()
            .unwrap();
        assert!(n >= 7, "fio's flushes: {n}");
    }
    // Each block carries fio's verify header (magic 0xacca, little-endian) in the image.
    let data = std::fs::read(&img).unwrap();
    for b in 0..64usize {
        let at = (1 << 20) + b * 65536;
        assert_eq!(&data[at..at + 2], &[0xca, 0xac], "block {b}");
    }
    assert!(data[..1 << 20].iter().all(|&b| b == 0));
    assert!(data[5 << 20..].iter().all(|&b| b == 0));
    // The image changed behind the job's back: the verify reads see it.
    let mut bad = data.clone();
    bad[(1 << 20) + 100] ^= 0xff;
    std::fs::write(&img, &bad).unwrap();
    let ro = format!(
        "[r]\nioengine=nbd\nuri={}\nrw=read\nbs=64k\noffset=1m\nsize=4m\nverify=crc32c\n",
        srv.uri
    );
    std::fs::write(d.join("check.fio"), &ro).unwrap();
    let c = hb(&d, &["check.fio"]);
    assert_ne!(c.code, 0, "a corrupt block is found:\n{}\n{}", c.out, c.err);
    assert!(
        c.err.contains("verify") || c.out.contains("verify"),
        "{}",
        c.err
    );
    if let Some(f) = f {
        assert_eq!(f.code, 0, "{}", f.err);
        let fv = doc(&f.out);
        assert_eq!(jobs(&fv), hj);
        // fio's own count of flushes is not one per 8 writes: its nbd flushes are queued
        // with the writes, and fio issues another while one is in flight (39 to 64 of them
        // here, run to run); hostbench flushes once per 8 writes (docs/fio.md).
        assert!(fv["jobs"][0]["sync"]["total_ios"].as_u64().unwrap() >= syncs);
        assert_eq!(key_set(&hv), key_set(&fv));
    }
}

#[test]
fn trims_and_a_read_only_export_as_in_fio() {
    if !have_qemu_nbd("trims_and_a_read_only_export_as_in_fio") {
        return;
    }
    let d = tmp("nbd-trim");
    let img = image(&d, 4);
    {
        let srv = serve_unix(&d, &img, &[]);
        let job = format!(
            "[t]\nioengine=nbd\nuri={}\nrw=trim\nbs=1m\niodepth=4\n",
            srv.uri
        );
        let (h, f) = both(&d, "trim.fio", &job);
        assert_eq!(h.code, 0, "{}\n{}", h.out, h.err);
        let hj = jobs(&doc(&h.out));
        assert_eq!(hj[0].6, 4, "{hj:?}");
        if let Some(f) = f {
            assert_eq!(f.code, 0, "{}", f.err);
            assert_eq!(jobs(&doc(&f.out)), hj);
        }
    }
    // A read-only export: a write fails with EPERM before it is sent (libnbd's check).
    let srv = serve_unix(&d, &img, &["-r"]);
    let job = format!(
        "[ro]\nioengine=nbd\nuri={}\nrw=write\nbs=4k\nsize=64k\n",
        srv.uri
    );
    let (h, f) = both(&d, "ro.fio", &job);
    assert_eq!(h.code, 1, "{}\n{}", h.out, h.err);
    let hv = doc(&h.out);
    assert_eq!(hv["jobs"][0]["error"], 1, "EPERM");
    if let Some(f) = f {
        assert_eq!(f.code, 1, "{}", f.err);
        assert_eq!(doc(&f.out)["jobs"][0]["error"], 1);
    }
}

#[test]
fn bad_uris_and_unreachable_servers_are_clear_errors() {
    let d = tmp("nbd-errors");
    let port = free_port();
    let cases: [(&str, &str); 4] = [
        ("", "needs uri="),
        ("uri=http://x/", "unknown NBD URI scheme: http"),
        ("uri=nbd+unix:///", "needs ?socket=PATH"),
        (&format!("uri=nbd://127.0.0.1:{port}"), "Connection refused"),
    ]
    .map(|(a, b)| (Box::leak(a.to_string().into_boxed_str()) as &str, b));
    for (opt, want) in cases {
        let job = format!("[e]\nioengine=nbd\n{opt}\nrw=read\nbs=4k\n");
        std::fs::write(d.join("e.fio"), &job).unwrap();
        let t = Instant::now();
        let h = hb(&d, &["e.fio"]);
        assert_eq!(h.code, 2, "{opt}: {}\n{}", h.out, h.err);
        assert!(h.err.contains(want), "{opt}: {}", h.err);
        assert!(t.elapsed() < Duration::from_secs(10));
    }
    let sock = d.join("none.sock");
    let job = format!(
        "[e]\nioengine=nbd\nuri=nbd+unix:///?socket={}\nrw=read\nbs=4k\n",
        s(&sock)
    );
    std::fs::write(d.join("e.fio"), &job).unwrap();
    let h = hb(&d, &["e.fio"]);
    assert_eq!(h.code, 2, "{}", h.err);
    assert!(h.err.contains("nbd_connect_uri: connect"), "{}", h.err);
    if !have_qemu_nbd("bad_uris_and_unreachable_servers_are_clear_errors") {
        return;
    }
    let img = image(&d, 4);
    let srv = serve_unix(&d, &img, &["-x", "disk"]);
    let job = format!(
        "[e]\nioengine=nbd\nuri={}\nrw=read\nbs=4k\n",
        srv.uri.replace(":///", ":///nosuch")
    );
    std::fs::write(d.join("e.fio"), &job).unwrap();
    let h = hb(&d, &["e.fio"]);
    assert_eq!(h.code, 2, "{}", h.err);
    assert!(h.err.contains("no export named 'nosuch'"), "{}", h.err);
    // The export by its name works.
    let job = format!(
        "[e]\nioengine=nbd\nuri={}\nrw=read\nbs=1m\n",
        srv.uri.replace(":///", ":///disk")
    );
    std::fs::write(d.join("e.fio"), &job).unwrap();
    let h = hb(&d, &["e.fio", "--output-format=json"]);
    assert_eq!(h.code, 0, "{}", h.err);
    assert_eq!(jobs(&doc(&h.out))[0].3, 4);
}
