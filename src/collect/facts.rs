//! Reads the kernel facts that are not per-CPU counters: the boot command
//! line, kernel release, host name, ASLR, SMT control, NMI watchdog,
//! `perf_event_paranoid`, and whether the machine is a virtual machine (from
//! `sys/hypervisor/type` or the DMI vendor and product names).

use serde::Serialize;

use crate::collect::topology::{CPU_DIR, opt_flag, opt_text};
use crate::os::fs::{Base, Fs};

/// Machine facts read once at start; each is `None` when unknown.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct KernelFacts {
    /// `/proc/cmdline`, trimmed.
    pub cmdline: Option<String>,
    /// `/proc/sys/kernel/osrelease` (`6.8.0-45-generic`).
    pub osrelease: Option<String>,
    /// `/proc/sys/kernel/hostname`.
    pub hostname: Option<String>,
    /// `/proc/sys/kernel/randomize_va_space`: 0 off, 1 partial, 2 full.
    pub aslr: Option<u8>,
    /// `smt/control`: `on`, `off`, `forceoff`, `notsupported`, `notimplemented`.
    pub smt_control: Option<String>,
    /// `smt/active`: whether sibling threads are running.
    pub smt_active: Option<bool>,
    /// The hypervisor's name when this is a guest (`KVM`, `Hyper-V`, `Xen`, …).
    pub hypervisor: Option<String>,
    /// `/proc/sys/kernel/nmi_watchdog` (it takes a PMU counter per CPU).
    pub nmi_watchdog: Option<bool>,
    /// `/proc/sys/kernel/perf_event_paranoid` (-1 … 4).
    pub perf_event_paranoid: Option<i64>,
}

/// Reads every fact; a missing or malformed file leaves its fact `None`.
pub fn read_kernel_facts(fs: &mut Fs) -> KernelFacts {
    KernelFacts {
        cmdline: opt_text(fs, Base::Proc, "cmdline"),
        osrelease: opt_text(fs, Base::Proc, "sys/kernel/osrelease"),
        hostname: opt_text(fs, Base::Proc, "sys/kernel/hostname"),
        aslr: fs
            .read_u64(Base::Proc, "sys/kernel/randomize_va_space")
            .ok()
            .and_then(|v| u8::try_from(v).ok()),
        smt_control: opt_text(fs, Base::Sys, &format!("{CPU_DIR}/smt/control")),
        smt_active: opt_flag(fs, Base::Sys, &format!("{CPU_DIR}/smt/active")),
        hypervisor: read_hypervisor(fs),
        nmi_watchdog: opt_flag(fs, Base::Proc, "sys/kernel/nmi_watchdog"),
        perf_event_paranoid: fs
            .read_i64(Base::Proc, "sys/kernel/perf_event_paranoid")
            .ok(),
    }
}

/// Names the hypervisor from `sys/hypervisor/type` (Xen, s390 z/VM), else
/// from DMI `sys_vendor`/`product_name`; `None` on bare metal or unknown.
pub fn read_hypervisor(fs: &mut Fs) -> Option<String> {
    if let Some(kind) = opt_text(fs, Base::Sys, "hypervisor/type") {
        return Some(match kind.as_str() {
            "xen" => "Xen".to_string(),
            _ => kind,
        });
    }
    let vendor = opt_text(fs, Base::Sys, "class/dmi/id/sys_vendor").unwrap_or_default();
    let product = opt_text(fs, Base::Sys, "class/dmi/id/product_name").unwrap_or_default();
    hypervisor_from_dmi(&vendor, &product).map(str::to_string)
}

/// Maps DMI vendor and product names to a hypervisor name. Vendors that
/// also sell hardware (Microsoft, Amazon) need the product to tell.
pub fn hypervisor_from_dmi(vendor: &str, product: &str) -> Option<&'static str> {
    let v = vendor.to_ascii_lowercase();
    let p = product.to_ascii_lowercase();
    let has = |s: &str, needle: &str| s.contains(needle);
    if has(&v, "microsoft") {
        return (p == "virtual machine").then_some("Hyper-V");
    }
    if has(&v, "amazon ec2") {
        // EC2 bare-metal instances report the same vendor: `c5.metal`.
        let metal = p.rsplit_once('.').is_some_and(|(_, size)| size == "metal");
        return (!metal).then_some("Amazon EC2");
    }
    let table: [(&str, &str, &'static str); 11] = [
        ("qemu", "", "QEMU"),
        ("", "kvm", "KVM"),
        ("vmware", "", "VMware"),
        ("xen", "", "Xen"),
        ("", "hvm domu", "Xen"),
        ("firecracker", "", "Firecracker"),
        ("", "firecracker", "Firecracker"),
        ("google", "google compute engine", "Google Compute Engine"),
        ("innotek", "", "VirtualBox"),
        ("parallels", "", "Parallels"),
        ("", "openstack", "OpenStack"),
    ];
    table.iter().find_map(|&(vn, pn, name)| {
        let v_ok = vn.is_empty() || has(&v, vn);
        let p_ok = pn.is_empty() || has(&p, pn);
        (v_ok && p_ok && !(vn.is_empty() && pn.is_empty())).then_some(name)
    })
}

/// Returns the value of a kernel parameter on a command line: the last
/// occurrence wins, `-` and `_` match each other in the name (as the kernel
/// treats them), surrounding double quotes are removed, a bare flag gives
/// `Some("")`, and nothing after `--` counts (it goes to init). The key may
/// be given with a trailing `=` (`"isolcpus="`).
pub fn cmdline_param<'a>(cmdline: &'a str, key: &str) -> Option<&'a str> {
    let key = key.strip_suffix('=').unwrap_or(key);
    if key.is_empty() {
        return None;
    }
    let mut found = None;
    for token in tokens(cmdline) {
        if token == "--" {
            break;
        }
        let token = unquote(token);
        let (name, value) = match token.split_once('=') {
            Some((n, v)) => (n, unquote(v)),
            None => (token, ""),
        };
        if same_param(name, key) {
            found = Some(value);
        }
    }
    found
}

/// Splits on white space outside double quotes, as the kernel's `next_arg`.
fn tokens(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        rest = rest.trim_start();
        if rest.is_empty() {
            return None;
        }
        let mut quoted = false;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                if c == '"' {
                    quoted = !quoted;
                }
                c.is_whitespace() && !quoted
            })
            .map_or(rest.len(), |(i, _)| i);
        let (tok, tail) = rest.split_at(end);
        rest = tail;
        Some(tok)
    })
}

fn unquote(s: &str) -> &str {
    s.strip_prefix('"')
        .map_or(s, |t| t.strip_suffix('"').unwrap_or(t))
}

fn same_param(a: &str, b: &str) -> bool {
    let norm = |c: char| if c == '-' { '_' } else { c };
    a.len() == b.len() && a.chars().map(norm).eq(b.chars().map(norm))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::fs::Roots;

    fn tree() -> (tempfile::TempDir, Fs) {
        let dir = tempfile::tempdir().unwrap();
        let fs = Fs::new(Roots::under(dir.path()));
        (dir, fs)
    }

    fn put(dir: &tempfile::TempDir, rel: &str, text: &str) {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn nothing_readable_means_all_none() {
        let (_dir, mut fs) = tree();
        assert_eq!(read_kernel_facts(&mut fs), KernelFacts::default());
    }

    #[test]
    fn garbage_values_are_none() {
        let (dir, mut fs) = tree();
        put(&dir, "proc/sys/kernel/randomize_va_space", "300\n");
        put(&dir, "proc/sys/kernel/nmi_watchdog", "on\n");
        put(&dir, "proc/sys/kernel/perf_event_paranoid", "-1\n");
        put(&dir, "proc/cmdline", "\n");
        put(&dir, "sys/devices/system/cpu/smt/active", "\n");
        let f = read_kernel_facts(&mut fs);
        assert_eq!(f.aslr, None);
        assert_eq!(f.nmi_watchdog, None);
        assert_eq!(f.perf_event_paranoid, Some(-1));
        assert_eq!(f.cmdline, None);
        assert_eq!(f.smt_active, None);
    }

    #[test]
    fn hypervisor_sources() {
        let (dir, mut fs) = tree();
        put(&dir, "sys/class/dmi/id/sys_vendor", "QEMU\n");
        put(
            &dir,
            "sys/class/dmi/id/product_name",
            "Standard PC (Q35 + ICH9, 2009)\n",
        );
        assert_eq!(read_hypervisor(&mut fs).as_deref(), Some("QEMU"));
        put(&dir, "sys/hypervisor/type", "xen\n");
        assert_eq!(read_hypervisor(&mut fs).as_deref(), Some("Xen"));
    }

    #[test]
    fn dmi_names() {
        assert_eq!(
            hypervisor_from_dmi("Microsoft Corporation", "Virtual Machine"),
            Some("Hyper-V")
        );
        assert_eq!(
            hypervisor_from_dmi("Microsoft Corporation", "Surface Pro 7"),
            None
        );
        assert_eq!(
            hypervisor_from_dmi("Amazon EC2", "m5.large"),
            Some("Amazon EC2")
        );
        assert_eq!(hypervisor_from_dmi("Amazon EC2", "c5.metal"), None);
        assert_eq!(
            hypervisor_from_dmi("VMware, Inc.", "VMware Virtual Platform"),
            Some("VMware")
        );
        assert_eq!(hypervisor_from_dmi("Red Hat", "KVM"), Some("KVM"));
        assert_eq!(hypervisor_from_dmi("Xen", "HVM domU"), Some("Xen"));
        assert_eq!(
            hypervisor_from_dmi("innotek GmbH", "VirtualBox"),
            Some("VirtualBox")
        );
        assert_eq!(
            hypervisor_from_dmi("Google", "Google Compute Engine"),
            Some("Google Compute Engine")
        );
        assert_eq!(hypervisor_from_dmi("Dell Inc.", "PowerEdge R740"), None);
        assert_eq!(hypervisor_from_dmi("", ""), None);
    }

    #[test]
    fn cmdline_params() {
        let c = "BOOT_IMAGE=/vmlinuz ro quiet isolcpus=2-3 console=tty0 console=ttyS0,115200n8 \
                 intel_idle.max_cstate=1 nohz_full=\"2,3\" \"rcu_nocbs=2-3\" -- isolcpus=9";
        assert_eq!(
            cmdline_param(c, "isolcpus="),
            Some("2-3"),
            "after -- is for init"
        );
        assert_eq!(
            cmdline_param(c, "console"),
            Some("ttyS0,115200n8"),
            "the last one wins"
        );
        assert_eq!(cmdline_param(c, "quiet"), Some(""));
        assert_eq!(cmdline_param(c, "intel-idle.max-cstate"), Some("1"));
        assert_eq!(cmdline_param(c, "nohz_full"), Some("2,3"));
        assert_eq!(cmdline_param(c, "rcu_nocbs"), Some("2-3"));
        assert_eq!(cmdline_param(c, "nosmt"), None);
        assert_eq!(cmdline_param(c, "quie"), None);
        assert_eq!(cmdline_param(c, "="), None);
        assert_eq!(cmdline_param("", "ro"), None);
        assert_eq!(
            cmdline_param("a=\"unterminated b", "a"),
            Some("unterminated b")
        );
    }
}
