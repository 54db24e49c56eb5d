//! Operating system and platform: host name, kernel release, distribution, DMI product
//! strings, virtualization and the clocksource.
//!
//! DMI is kept only as `sys_vendor` and `product_name`: the serial numbers and UUIDs
//! beside them identify a machine rather than describe it, and have no place in results
//! that get shared. The cloud provider is told from those two, `bios_version`, and the
//! chassis asset tag and hypervisor UUID compared against providers' fixed values (never
//! stored).

use hostbench_core::host::{ClocksourceInfo, CloudInfo, DmiInfo, OsInfo};

use crate::fs::Fs;

/// Host name from /proc, or `None` when it cannot be read.
pub(crate) fn hostname(fs: &Fs) -> Option<String> {
    fs.read_trimmed("/proc/sys/kernel/hostname")
}

/// Removes os-release quoting: double quotes with backslash escapes, or single quotes.
fn unquote(v: &str) -> String {
    let v = v.trim();
    if v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'') {
        return v[1..v.len() - 1].to_string();
    }
    let inner = if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        &v[1..v.len() - 1]
    } else {
        v
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `PRETTY_NAME` from os-release text, falling back to `NAME` (plus `VERSION`) for the rare
/// file without it.
pub(crate) fn parse_os_release(s: &str) -> Option<String> {
    let get = |key: &str| {
        s.lines()
            .filter_map(|l| l.trim().split_once('='))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| unquote(v))
            .filter(|v| !v.is_empty())
    };
    get("PRETTY_NAME").or_else(|| {
        let name = get("NAME")?;
        Some(match get("VERSION") {
            Some(version) => format!("{name} {version}"),
            None => name,
        })
    })
}

/// Kernel release and distribution. The kernel release comes from /proc here; `collect()`
/// falls back to `uname` when /proc is not mounted.
pub(crate) fn os_info(fs: &Fs) -> OsInfo {
    OsInfo {
        kernel: fs
            .read_trimmed("/proc/sys/kernel/osrelease")
            .unwrap_or_default(),
        // os-release(5): /usr/lib/os-release is the fallback when /etc has none.
        distribution: fs
            .read("/etc/os-release")
            .or_else(|| fs.read("/usr/lib/os-release"))
            .and_then(|s| parse_os_release(&s))
            .unwrap_or_default(),
    }
}

/// Firmware fills unset DMI fields with placeholders that describe nothing.
fn dmi_value(v: Option<String>) -> Option<String> {
    const PLACEHOLDERS: &[&str] = &[
        "to be filled by o.e.m.",
        "default string",
        "not specified",
        "none",
    ];
    v.filter(|s| !PLACEHOLDERS.contains(&s.to_ascii_lowercase().as_str()))
}

/// DMI vendor and product, or `None` when the platform has no DMI tables (many Arm boards,
/// Firecracker and other minimal VMMs).
pub(crate) fn dmi(fs: &Fs) -> Option<DmiInfo> {
    let vendor = dmi_value(fs.read_trimmed("/sys/class/dmi/id/sys_vendor"));
    let product = dmi_value(fs.read_trimmed("/sys/class/dmi/id/product_name"));
    (vendor.is_some() || product.is_some()).then_some(DmiInfo { vendor, product })
}

/// DMI and hypervisor strings that tell a cloud; gathered first so the decision is
/// testable. `chassis_asset_tag` and `/sys/hypervisor/uuid` are only matched against
/// providers' constants, never stored: they can identify a machine.
#[derive(Debug, Default, Clone)]
pub(crate) struct CloudEvidence {
    pub(crate) vendor: Option<String>,
    pub(crate) product: Option<String>,
    pub(crate) bios_version: Option<String>,
    pub(crate) chassis_asset_tag: Option<String>,
    pub(crate) hypervisor_uuid: Option<String>,
}

impl CloudEvidence {
    /// From the DMI files in /sys/class/dmi/id and /sys/hypervisor/uuid.
    pub(crate) fn read(fs: &Fs) -> CloudEvidence {
        let id = |f: &str| dmi_value(fs.read_trimmed(&format!("/sys/class/dmi/id/{f}")));
        CloudEvidence {
            vendor: id("sys_vendor"),
            product: id("product_name"),
            bios_version: id("bios_version"),
            chassis_asset_tag: id("chassis_asset_tag"),
            hypervisor_uuid: fs.read_trimmed("/sys/hypervisor/uuid"),
        }
    }
}

/// Azure's fixed chassis asset tag (cloud-init's ds-identify looks for the same).
const AZURE_ASSET_TAG: &str = "7783-7084-3265-9085-8269-3286-77";

/// The cloud the DMI tables name. Only AWS Nitro puts the instance type there
/// (product_name); elsewhere the type needs the metadata service, which hostbench never
/// asks: `--label` says it instead.
pub(crate) fn cloud(e: &CloudEvidence) -> Option<CloudInfo> {
    let vendor = e.vendor.as_deref().unwrap_or("");
    let product = e.product.as_deref().unwrap_or("");
    let tag = e.chassis_asset_tag.as_deref().unwrap_or("");
    let provider = if vendor == "Amazon EC2" {
        return Some(CloudInfo {
            provider: "aws".into(),
            instance_type: e.product.clone(),
        });
    } else if e
        .bios_version
        .as_deref()
        .is_some_and(|b| b.to_ascii_lowercase().contains("amazon"))
        || e.hypervisor_uuid
            .as_deref()
            .is_some_and(|u| u.to_ascii_lowercase().starts_with("ec2"))
    {
        // Xen-based EC2: the type is not in DMI.
        "aws"
    } else if vendor == "Google" || product == "Google Compute Engine" {
        "gcp"
    } else if tag == AZURE_ASSET_TAG {
        "azure"
    } else if tag == "OracleCloud.com" {
        "oracle"
    } else if product.starts_with("OpenStack") {
        "openstack"
    } else if vendor == "DigitalOcean" {
        "digitalocean"
    } else if product == "Alibaba Cloud ECS" {
        "alibaba"
    } else if vendor == "Hetzner" {
        "hetzner"
    } else {
        return None;
    };
    Some(CloudInfo {
        provider: provider.into(),
        instance_type: None,
    })
}

/// The hypervisor named by DMI strings, if they name one.
fn hypervisor_from_dmi(dmi: &DmiInfo) -> Option<&'static str> {
    let vendor = dmi.vendor.as_deref().unwrap_or("");
    let product = dmi.product.as_deref().unwrap_or("");
    Some(match vendor {
        // Bare-metal EC2 instances (`c6g.metal`) carry the same vendor string; on Arm there
        // is no `hypervisor` flag to tell them apart, so the product name has to.
        "Amazon EC2" if product.ends_with("metal") => return None,
        "Amazon EC2" => "kvm (aws nitro)",
        "Google" => "kvm (gce)",
        "QEMU" | "Red Hat" | "OpenStack Foundation" | "DigitalOcean" | "Hetzner" => "kvm",
        "Microsoft Corporation" => "microsoft",
        "VMware, Inc." => "vmware",
        "Xen" => "xen",
        "innotek GmbH" | "Oracle Corporation" if product == "VirtualBox" => "oracle",
        "Parallels Software International Inc." | "Parallels International GmbH." => "parallels",
        _ if product.starts_with("KVM") || product.starts_with("OpenStack") => "kvm",
        _ if product.starts_with("VMware") => "vmware",
        _ => return None,
    })
}

/// The hypervisor named by its CPUID signature (leaf 0x4000_0000).
fn hypervisor_from_cpuid(signature: &str) -> Option<&'static str> {
    Some(match signature.trim_end_matches('\0') {
        "KVMKVMKVM" | "Linux KVM Hv" => "kvm",
        "Microsoft Hv" => "microsoft",
        "VMwareVMware" => "vmware",
        "XenVMMXenVMM" => "xen",
        "TCGTCGTCGTCG" => "qemu",
        "VBoxVBoxVBox" => "oracle",
        "bhyve bhyve " => "bhyve",
        "ACRNACRNACRN" => "acrn",
        _ => return None,
    })
}

/// What virtualization detection looks at; gathered first so the decision is testable.
#[derive(Debug, Default, Clone)]
pub(crate) struct VirtEvidence {
    /// Contents of /sys/hypervisor/type (Xen guests and dom0).
    pub(crate) sys_hypervisor_type: Option<String>,
    /// Whether /proc/cpuinfo shows the x86 `hypervisor` flag.
    pub(crate) hypervisor_flag: bool,
    /// Whether the architecture has such a flag at all; where it does not (Arm), DMI is
    /// consulted on its own.
    pub(crate) arch_has_hypervisor_flag: bool,
    /// DMI strings.
    pub(crate) dmi: Option<DmiInfo>,
    /// CPUID hypervisor signature, x86 only.
    pub(crate) cpuid_signature: Option<String>,
    /// Whether a container marker file exists.
    pub(crate) container: bool,
}

/// Names the virtualization, most specific source first: Xen's own sysfs node, then DMI
/// (which tells the cloud), then the CPUID signature (which names the hypervisor when the VMM
/// exposes no DMI, as Firecracker does). A guest that none of them names is `unknown`.
pub(crate) fn classify_virtualization(e: &VirtEvidence) -> Option<String> {
    let vm: Option<String> = if let Some(t) = &e.sys_hypervisor_type {
        Some(t.trim().to_ascii_lowercase())
    } else {
        let may_be_guest = e.hypervisor_flag || !e.arch_has_hypervisor_flag;
        let from_dmi = e
            .dmi
            .as_ref()
            .filter(|_| may_be_guest)
            .and_then(hypervisor_from_dmi);
        let from_cpuid = e
            .cpuid_signature
            .as_deref()
            .filter(|_| e.hypervisor_flag)
            .and_then(hypervisor_from_cpuid);
        from_dmi
            .or(from_cpuid)
            .map(str::to_string)
            .or_else(|| e.hypervisor_flag.then(|| "unknown".to_string()))
    };
    match (vm, e.container) {
        (Some(vm), true) => Some(format!("{vm}, container")),
        (None, true) => Some("container".to_string()),
        (vm, false) => vm,
    }
}

/// The hypervisor's CPUID vendor signature, when the CPU says a hypervisor is present.
#[cfg(target_arch = "x86_64")]
pub(crate) fn cpuid_hypervisor_signature() -> Option<String> {
    use core::arch::x86_64::__cpuid;
    // Leaf 0x4000_0000 is only defined when leaf 1 sets the hypervisor-present bit.
    if __cpuid(1).ecx & (1 << 31) == 0 {
        return None;
    }
    let r = __cpuid(0x4000_0000);
    let mut bytes = Vec::with_capacity(12);
    for reg in [r.ebx, r.ecx, r.edx] {
        bytes.extend_from_slice(&reg.to_le_bytes());
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// No CPUID outside x86.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn cpuid_hypervisor_signature() -> Option<String> {
    None
}

/// Current and available clocksources.
pub(crate) fn clocksource(fs: &Fs) -> ClocksourceInfo {
    let dir = "/sys/devices/system/clocksource/clocksource0";
    ClocksourceInfo {
        current: fs
            .read_trimmed(&format!("{dir}/current_clocksource"))
            .unwrap_or_default(),
        available: fs
            .read(&format!("{dir}/available_clocksource"))
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
    }
}

/// `uname(2)` fields (release, nodename), for when /proc is not mounted.
pub(crate) fn uname() -> Option<(String, String)> {
    // SAFETY: utsname is plain old data; all-zero is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname writes into the struct we pass and nothing else.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some((field(&u.release), field(&u.nodename)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::fixture::put;

    const OS_RELEASE: &str = r#"PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
ID=debian
HOME_URL="https://www.debian.org/"
"#;

    #[test]
    fn os_release_pretty_name() {
        assert_eq!(
            parse_os_release(OS_RELEASE).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            parse_os_release("NAME=Fedora\nPRETTY_NAME='Fedora Linux 40'\n").as_deref(),
            Some("Fedora Linux 40")
        );
        assert_eq!(
            parse_os_release("PRETTY_NAME=\"Say \\\"hi\\\"\"\n").as_deref(),
            Some("Say \"hi\"")
        );
        assert_eq!(
            parse_os_release("PRETTY_NAME=Alpine\n").as_deref(),
            Some("Alpine")
        );
        assert_eq!(
            parse_os_release("NAME=\"Amazon Linux\"\nVERSION=\"2023\"\n").as_deref(),
            Some("Amazon Linux 2023")
        );
        assert_eq!(parse_os_release("# nothing\n"), None);
    }

    fn dmi_of(vendor: &str, product: &str) -> Option<DmiInfo> {
        Some(DmiInfo {
            vendor: Some(vendor.into()),
            product: Some(product.into()),
        })
    }

    #[test]
    fn virtualization_sources_in_order() {
        let x86_guest = VirtEvidence {
            hypervisor_flag: true,
            arch_has_hypervisor_flag: true,
            ..Default::default()
        };
        let c = |e: VirtEvidence| classify_virtualization(&e);

        let xen = VirtEvidence {
            sys_hypervisor_type: Some("xen\n".into()),
            dmi: dmi_of("Amazon EC2", "m5.large"),
            ..x86_guest.clone()
        };
        assert_eq!(c(xen).as_deref(), Some("xen"));
        for (vendor, product, want) in [
            ("QEMU", "Standard PC (Q35 + ICH9, 2009)", "kvm"),
            ("Amazon EC2", "c7i.large", "kvm (aws nitro)"),
            ("Google", "Google Compute Engine", "kvm (gce)"),
            ("Microsoft Corporation", "Virtual Machine", "microsoft"),
            ("VMware, Inc.", "VMware Virtual Platform", "vmware"),
            ("Xen", "HVM domU", "xen"),
        ] {
            let e = VirtEvidence {
                dmi: dmi_of(vendor, product),
                ..x86_guest.clone()
            };
            assert_eq!(c(e).as_deref(), Some(want), "{vendor}");
        }
        // Firecracker: no DMI, KVM signature.
        let fc = VirtEvidence {
            cpuid_signature: Some("KVMKVMKVM\0\0\0".into()),
            ..x86_guest.clone()
        };
        assert_eq!(c(fc).as_deref(), Some("kvm"));
        assert_eq!(c(x86_guest.clone()).as_deref(), Some("unknown"));
        let in_docker = VirtEvidence {
            cpuid_signature: Some("KVMKVMKVM\0\0\0".into()),
            container: true,
            ..x86_guest.clone()
        };
        assert_eq!(c(in_docker).as_deref(), Some("kvm, container"));
    }

    #[test]
    fn bare_metal_is_none() {
        let c = |e: VirtEvidence| classify_virtualization(&e);
        // An EC2 metal instance on x86: DMI says Amazon, but no hypervisor flag.
        let metal = VirtEvidence {
            arch_has_hypervisor_flag: true,
            dmi: dmi_of("Amazon EC2", "m7i.metal-24xl"),
            ..Default::default()
        };
        assert_eq!(c(metal), None);
        // Graviton: no flag exists, so DMI decides, and `.metal` means bare metal.
        let graviton_vm = VirtEvidence {
            dmi: dmi_of("Amazon EC2", "c7g.large"),
            ..Default::default()
        };
        assert_eq!(c(graviton_vm).as_deref(), Some("kvm (aws nitro)"));
        let graviton_metal = VirtEvidence {
            dmi: dmi_of("Amazon EC2", "c7g.metal"),
            ..Default::default()
        };
        assert_eq!(c(graviton_metal), None);
        let desktop = VirtEvidence {
            arch_has_hypervisor_flag: true,
            dmi: dmi_of("Dell Inc.", "Precision 5570"),
            ..Default::default()
        };
        assert_eq!(c(desktop), None);
        let container = VirtEvidence {
            container: true,
            ..Default::default()
        };
        assert_eq!(c(container).as_deref(), Some("container"));
    }

    #[test]
    fn clouds_from_dmi() {
        let c = |vendor: &str, product: &str, tag: &str| {
            cloud(&CloudEvidence {
                vendor: Some(vendor.into()),
                product: Some(product.into()),
                chassis_asset_tag: Some(tag.into()).filter(|t: &String| !t.is_empty()),
                ..Default::default()
            })
        };
        let aws = c("Amazon EC2", "c7g.large", "").unwrap();
        assert_eq!(aws.provider, "aws");
        assert_eq!(aws.instance_type.as_deref(), Some("c7g.large"));
        let gce = c("Google", "Google Compute Engine", "").unwrap();
        assert_eq!((gce.provider.as_str(), gce.instance_type), ("gcp", None));
        assert_eq!(
            c("Microsoft Corporation", "Virtual Machine", AZURE_ASSET_TAG)
                .unwrap()
                .provider,
            "azure"
        );
        // Hyper-V on a desktop is not Azure.
        assert_eq!(c("Microsoft Corporation", "Virtual Machine", ""), None);
        assert_eq!(
            c("QEMU", "Standard PC", "OracleCloud.com")
                .unwrap()
                .provider,
            "oracle"
        );
        assert_eq!(
            c("OpenStack Foundation", "OpenStack Nova", "")
                .unwrap()
                .provider,
            "openstack"
        );
        assert_eq!(
            c("DigitalOcean", "Droplet", "").unwrap().provider,
            "digitalocean"
        );
        assert_eq!(
            c("Alibaba Cloud", "Alibaba Cloud ECS", "")
                .unwrap()
                .provider,
            "alibaba"
        );
        assert_eq!(c("Hetzner", "vServer", "").unwrap().provider, "hetzner");
        assert_eq!(c("Dell Inc.", "Precision 5570", ""), None);
        let xen_ec2 = CloudEvidence {
            vendor: Some("Xen".into()),
            product: Some("HVM domU".into()),
            bios_version: Some("4.11.amazon".into()),
            ..Default::default()
        };
        assert_eq!(cloud(&xen_ec2).unwrap().provider, "aws");
        assert_eq!(cloud(&CloudEvidence::default()), None);
    }

    #[test]
    fn cloud_evidence_from_a_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        put(root, "/sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
        put(root, "/sys/class/dmi/id/product_name", "m7i.large\n");
        put(root, "/sys/class/dmi/id/chassis_asset_tag", "Amazon EC2\n");
        let e = CloudEvidence::read(&Fs::at(root));
        assert_eq!(e.product.as_deref(), Some("m7i.large"));
        assert_eq!(
            cloud(&e).and_then(|c| c.instance_type).as_deref(),
            Some("m7i.large")
        );
    }

    #[test]
    fn tree_readers() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        put(root, "/proc/sys/kernel/hostname", "bench-1\n");
        put(root, "/proc/sys/kernel/osrelease", "6.8.0-1015-aws\n");
        put(
            root,
            "/usr/lib/os-release",
            "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n",
        );
        put(root, "/sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
        put(
            root,
            "/sys/class/dmi/id/product_name",
            "To Be Filled By O.E.M.\n",
        );
        let cs = "/sys/devices/system/clocksource/clocksource0";
        put(root, &format!("{cs}/current_clocksource"), "kvm-clock\n");
        put(
            root,
            &format!("{cs}/available_clocksource"),
            "kvm-clock tsc acpi_pm \n",
        );
        let fs = Fs::at(root);
        assert_eq!(hostname(&fs).as_deref(), Some("bench-1"));
        assert_eq!(
            os_info(&fs),
            OsInfo {
                kernel: "6.8.0-1015-aws".into(),
                distribution: "Ubuntu 24.04.1 LTS".into()
            }
        );
        assert_eq!(
            dmi(&fs),
            Some(DmiInfo {
                vendor: Some("Amazon EC2".into()),
                product: None
            })
        );
        assert_eq!(
            clocksource(&fs),
            ClocksourceInfo {
                current: "kvm-clock".into(),
                available: vec!["kvm-clock".into(), "tsc".into(), "acpi_pm".into()]
            }
        );

        let empty = tempfile::tempdir().unwrap();
        let fs = Fs::at(empty.path());
        assert_eq!(hostname(&fs), None);
        assert_eq!(os_info(&fs), OsInfo::default());
        assert_eq!(dmi(&fs), None);
        assert_eq!(clocksource(&fs), ClocksourceInfo::default());
    }

    #[test]
    fn uname_works_here() {
        let (release, _) = uname().unwrap();
        assert!(!release.is_empty());
    }
}
