//! Values per CPU number, indexed directly by the number.
//!
//! A snapshot holds half a dozen tables keyed by CPU and the delta looks
//! each CPU up in every one of them, twice (previous and current). With a
//! `BTreeMap` those lookups were most of the delta's time on a 1024-CPU
//! machine; CPU numbers are small and dense, so a slot per number makes a
//! lookup one bounds check. Numbers past [`DENSE_LIMIT`] (no kernel
//! numbers CPUs that high; a corrupt capture might) go to a sorted side
//! list instead of growing the slots without bound.

use std::fmt;

use serde::ser::{Serialize, SerializeMap, Serializer};

/// CPU numbers below this are slots; above, a sorted list.
pub const DENSE_LIMIT: u32 = 1 << 16;

/// A map from CPU number to `T`, iterated in ascending CPU order.
#[derive(Clone)]
pub struct CpuMap<T> {
    slots: Vec<Option<T>>,
    /// Numbers at or above `DENSE_LIMIT`, sorted.
    high: Vec<(u32, T)>,
    len: usize,
}

impl<T> Default for CpuMap<T> {
    fn default() -> Self {
        CpuMap {
            slots: Vec::new(),
            high: Vec::new(),
            len: 0,
        }
    }
}

impl<T> CpuMap<T> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns the value of `cpu`.
    pub fn get(&self, cpu: &u32) -> Option<&T> {
        match self.slots.get(*cpu as usize) {
            Some(slot) => slot.as_ref(),
            None if *cpu < DENSE_LIMIT => None,
            None => self
                .high
                .binary_search_by_key(cpu, |(c, _)| *c)
                .ok()
                .map(|i| &self.high[i].1),
        }
    }

    /// Returns the value of `cpu`, mutable.
    pub fn get_mut(&mut self, cpu: &u32) -> Option<&mut T> {
        if *cpu < DENSE_LIMIT {
            return self.slots.get_mut(*cpu as usize)?.as_mut();
        }
        let i = self.high.binary_search_by_key(cpu, |(c, _)| *c).ok()?;
        Some(&mut self.high[i].1)
    }

    /// Whether `cpu` has a value.
    pub fn contains_key(&self, cpu: &u32) -> bool {
        self.get(cpu).is_some()
    }

    /// Sets the value of `cpu`; returns the one it replaces.
    pub fn insert(&mut self, cpu: u32, value: T) -> Option<T> {
        let old = if cpu < DENSE_LIMIT {
            let i = cpu as usize;
            if self.slots.len() <= i {
                self.slots.resize_with(i + 1, || None);
            }
            self.slots[i].replace(value)
        } else {
            match self.high.binary_search_by_key(&cpu, |(c, _)| *c) {
                Ok(i) => Some(std::mem::replace(&mut self.high[i].1, value)),
                Err(i) => {
                    self.high.insert(i, (cpu, value));
                    None
                }
            }
        };
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Returns the value of `cpu`, inserting `T::default()` first if absent.
    pub fn get_or_default(&mut self, cpu: u32) -> &mut T
    where
        T: Default,
    {
        if !self.contains_key(&cpu) {
            self.insert(cpu, T::default());
        }
        self.get_mut(&cpu).expect("inserted above")
    }

    /// Removes and returns the value of `cpu`.
    pub fn remove(&mut self, cpu: &u32) -> Option<T> {
        let old = if *cpu < DENSE_LIMIT {
            self.slots.get_mut(*cpu as usize)?.take()
        } else {
            let i = self.high.binary_search_by_key(cpu, |(c, _)| *c).ok()?;
            Some(self.high.remove(i).1)
        };
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    /// Keeps only the CPUs for which `keep` says true.
    pub fn retain(&mut self, mut keep: impl FnMut(u32, &mut T) -> bool) {
        for (cpu, slot) in self.slots.iter_mut().enumerate() {
            if let Some(v) = slot
                && !keep(cpu as u32, v)
            {
                *slot = None;
                self.len -= 1;
            }
        }
        let before = self.high.len();
        self.high.retain_mut(|(c, v)| keep(*c, v));
        self.len -= before - self.high.len();
    }

    /// Empties the map, keeping its memory.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
        self.high.clear();
        self.len = 0;
    }

    /// Number of CPUs with a value.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no CPU has a value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// CPU numbers and values, in ascending CPU order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        let dense = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(c, v)| Some((c as u32, v.as_ref()?)));
        dense.chain(self.high.iter().map(|(c, v)| (*c, v)))
    }

    /// CPU numbers, ascending.
    pub fn keys(&self) -> impl Iterator<Item = u32> + '_ {
        self.iter().map(|(c, _)| c)
    }

    /// Values in ascending CPU order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.iter().map(|(_, v)| v)
    }
}

impl<T> FromIterator<(u32, T)> for CpuMap<T> {
    fn from_iter<I: IntoIterator<Item = (u32, T)>>(iter: I) -> Self {
        let mut m = CpuMap::new();
        for (c, v) in iter {
            m.insert(c, v);
        }
        m
    }
}

impl<T: PartialEq> PartialEq for CpuMap<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: Eq> Eq for CpuMap<T> {}

/// Panics when `cpu` has no value, as `BTreeMap`'s index does.
impl<T> std::ops::Index<&u32> for CpuMap<T> {
    type Output = T;
    fn index(&self, cpu: &u32) -> &T {
        self.get(cpu).expect("no value for this CPU")
    }
}

impl<T: fmt::Debug> fmt::Debug for CpuMap<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Serialized as a map from CPU number to value, as a `BTreeMap` would be.
impl<T: Serialize> Serialize for CpuMap<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.len))?;
        for (c, v) in self.iter() {
            m.serialize_entry(&c, v)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_high_numbers_iterate_in_order() {
        let mut m = CpuMap::new();
        assert_eq!(m.insert(5, "five"), None);
        assert_eq!(m.insert(u32::MAX, "max"), None);
        assert_eq!(m.insert(0, "zero"), None);
        assert_eq!(m.insert(DENSE_LIMIT, "limit"), None);
        assert_eq!(m.insert(5, "FIVE"), Some("five"));
        assert_eq!(m.len(), 4);
        let all: Vec<(u32, &str)> = m.iter().map(|(c, v)| (c, *v)).collect();
        assert_eq!(
            all,
            [
                (0, "zero"),
                (5, "FIVE"),
                (DENSE_LIMIT, "limit"),
                (u32::MAX, "max")
            ]
        );
        assert_eq!(m.get(&3), None);
        assert_eq!(m.get(&7), None, "past the last slot");
        assert_eq!(m.get(&(DENSE_LIMIT + 1)), None);
        assert_eq!(m.get(&u32::MAX), Some(&"max"));
        // a huge number does not grow the slots
        assert!(m.slots.len() <= 6);
    }

    #[test]
    fn remove_retain_and_clear_keep_the_count() {
        let mut m: CpuMap<u32> = (0..10).map(|c| (c, c * 10)).collect();
        m.insert(DENSE_LIMIT + 3, 7);
        assert_eq!(m.remove(&4), Some(40));
        assert_eq!(m.remove(&4), None);
        assert_eq!(m.remove(&(DENSE_LIMIT + 3)), Some(7));
        assert_eq!(m.len(), 9);
        m.retain(|c, _| c % 3 == 0);
        assert_eq!(m.keys().collect::<Vec<_>>(), [0, 3, 6, 9]);
        assert_eq!(m.len(), 4);
        *m.get_or_default(11) += 2;
        *m.get_or_default(11) += 2;
        assert_eq!(m.get(&11), Some(&4));
        m.clear();
        assert!(m.is_empty());
        assert_eq!(m.iter().count(), 0);
    }

    #[test]
    fn equality_ignores_empty_slots_and_json_matches_a_btreemap() {
        let mut a: CpuMap<u64> = CpuMap::new();
        a.insert(9, 1);
        a.remove(&9);
        a.insert(2, 5);
        let b: CpuMap<u64> = [(2, 5)].into_iter().collect();
        assert_eq!(a, b);
        let bt: std::collections::BTreeMap<u32, u64> = [(2, 5), (10, 1)].into_iter().collect();
        a.insert(10, 1);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&bt).unwrap()
        );
        assert_eq!(format!("{a:?}"), "{2: 5, 10: 1}");
    }
}
