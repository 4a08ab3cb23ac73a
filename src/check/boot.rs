//! Which tool changes the kernel command line on the system judged:
//! Fedora's and RHEL's `grubby`, or the GRUB defaults file of Debian and
//! Ubuntu with `update-grub`. Looked for under the tree's root, as every
//! other reader reads, so `--root /host` and a fixture answer for their
//! own system.

use std::path::Path;

/// How boot arguments are changed there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BootLoader {
    /// `grubby` is installed: it edits every kernel entry.
    Grubby,
    /// `/etc/default/grub` without `grubby`: `GRUB_CMDLINE_LINUX`, then
    /// `update-grub` (Debian, Ubuntu) or `grub-mkconfig` where that is
    /// missing.
    GrubDefaults {
        /// `update-grub` is installed.
        update_grub: bool,
    },
    /// Neither was found (a capture, another boot loader).
    Unknown,
}

/// Where `grubby` is installed (merged `/usr` or not).
const GRUBBY: [&str; 2] = ["usr/sbin/grubby", "sbin/grubby"];
/// Where `update-grub` is installed.
const UPDATE_GRUB: [&str; 2] = ["usr/sbin/update-grub", "sbin/update-grub"];
/// The GRUB defaults file.
const DEFAULTS: &str = "etc/default/grub";

impl BootLoader {
    /// Finds the tool under `root`: `grubby` first (Fedora has the
    /// defaults file too, but grubby is what keeps its entries).
    pub fn detect(root: &Path) -> BootLoader {
        let has = |p: &str| root.join(p).exists();
        if GRUBBY.iter().any(|p| has(p)) {
            BootLoader::Grubby
        } else if has(DEFAULTS) {
            BootLoader::GrubDefaults {
                update_grub: UPDATE_GRUB.iter().any(|p| has(p)),
            }
        } else {
            BootLoader::Unknown
        }
    }

    /// The command that adds `args` to the kernel command line.
    pub fn add_command(self, args: &str) -> String {
        match self {
            BootLoader::Grubby => {
                format!("grubby --update-kernel=ALL --args=\"{args}\"  # then reboot")
            }
            BootLoader::GrubDefaults { update_grub } => format!(
                "sed -i 's/^GRUB_CMDLINE_LINUX=\"/&{args} /' /{DEFAULTS} && {}  # then reboot",
                regenerate(update_grub)
            ),
            BootLoader::Unknown => format!(
                "# add {args} to the kernel command line, then reboot (grubby \
                 --update-kernel=ALL --args=\"…\" on Fedora and RHEL; GRUB_CMDLINE_LINUX in \
                 /{DEFAULTS}, then update-grub, on Debian and Ubuntu)"
            ),
        }
    }

    /// The command that removes `param=` from the kernel command line.
    pub fn remove_command(self, param: &str) -> String {
        match self {
            BootLoader::Grubby => {
                format!("grubby --update-kernel=ALL --remove-args={param}  # then reboot")
            }
            BootLoader::GrubDefaults { update_grub } => format!(
                "sed -i 's/\\(^\\|[ \"]\\){param}=[^ \"]* \\?/\\1/g' /{DEFAULTS} && {}  # then reboot",
                regenerate(update_grub)
            ),
            BootLoader::Unknown => format!(
                "# remove {param}= from the kernel command line, then reboot (grubby \
                 --update-kernel=ALL --remove-args={param} on Fedora and RHEL; \
                 GRUB_CMDLINE_LINUX in /{DEFAULTS}, then update-grub, on Debian and Ubuntu)"
            ),
        }
    }
}

/// The command that writes GRUB's configuration from its defaults file.
fn regenerate(update_grub: bool) -> &'static str {
    if update_grub {
        "update-grub"
    } else {
        "grub-mkconfig -o /boot/grub/grub.cfg"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for f in files {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        d
    }

    #[test]
    fn debian_gets_its_defaults_file_and_fedora_grubby() {
        let debian = tree(&["etc/default/grub", "usr/sbin/update-grub"]);
        let b = BootLoader::detect(debian.path());
        assert_eq!(b, BootLoader::GrubDefaults { update_grub: true });
        assert_eq!(
            b.add_command("nohz_full=1"),
            "sed -i 's/^GRUB_CMDLINE_LINUX=\"/&nohz_full=1 /' /etc/default/grub && update-grub  # then reboot"
        );
        assert_eq!(
            b.remove_command("idle"),
            "sed -i 's/\\(^\\|[ \"]\\)idle=[^ \"]* \\?/\\1/g' /etc/default/grub && update-grub  # then reboot"
        );
        let fedora = tree(&["etc/default/grub", "usr/sbin/grubby"]);
        let b = BootLoader::detect(fedora.path());
        assert_eq!(b, BootLoader::Grubby);
        assert_eq!(
            b.add_command("nohz_full=1"),
            "grubby --update-kernel=ALL --args=\"nohz_full=1\"  # then reboot"
        );
        let arch = tree(&["etc/default/grub"]);
        assert!(
            BootLoader::detect(arch.path())
                .add_command("x=1")
                .contains("grub-mkconfig")
        );
        let none = tree(&[]);
        let b = BootLoader::detect(none.path());
        assert_eq!(b, BootLoader::Unknown);
        assert!(
            b.add_command("x=1")
                .starts_with("# add x=1 to the kernel command line")
        );
    }

    /// The Debian command, run by sh on a copy of a real defaults file,
    /// puts the arguments where the kernel gets them, and takes them out.
    #[test]
    fn the_debian_commands_edit_the_defaults_file_as_said() {
        let d = tree(&[]);
        let f = d.path().join("grub");
        std::fs::write(
            &f,
            "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\nGRUB_CMDLINE_LINUX=\"idle=poll console=ttyS0\"\n",
        )
        .unwrap();
        let b = BootLoader::GrubDefaults { update_grub: true };
        let run = |cmd: String| {
            let cmd = cmd
                .split(" && ")
                .next()
                .unwrap()
                .replace("/etc/default/grub", &f.display().to_string());
            let ok = std::process::Command::new("sh")
                .args(["-c", &cmd])
                .status()
                .unwrap()
                .success();
            assert!(ok, "{cmd}");
        };
        run(b.add_command("isolcpus=domain,managed_irq,1 nohz_full=1"));
        run(b.remove_command("idle"));
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\n\
             GRUB_CMDLINE_LINUX=\"isolcpus=domain,managed_irq,1 nohz_full=1 console=ttyS0\"\n"
        );
    }
}
