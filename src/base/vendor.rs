//! The CPU vendor, as `/proc/cpuinfo` names it.

use serde::Serialize;

/// CPU vendor as `/proc/cpuinfo` `vendor_id` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Vendor {
    /// `GenuineIntel`.
    Intel,
    /// `AuthenticAMD`.
    Amd,
    /// `HygonGenuine` (Zen derivative, AMD registers).
    Hygon,
    /// Anything else, including non-x86 machines.
    Other,
}

impl Vendor {
    /// Maps a cpuinfo `vendor_id` value to a vendor.
    pub fn from_vendor_id(id: &str) -> Vendor {
        match id.trim() {
            "GenuineIntel" => Vendor::Intel,
            "AuthenticAMD" => Vendor::Amd,
            "HygonGenuine" => Vendor::Hygon,
            _ => Vendor::Other,
        }
    }

    /// Says whether the vendor uses AMD's registers (AMD and Hygon).
    pub fn is_amd_like(self) -> bool {
        matches!(self, Vendor::Amd | Vendor::Hygon)
    }
}
