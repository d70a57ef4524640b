//! A FIFO ring buffer with a power-of-two capacity: the per-packet queues of links.
//!
//! `VecDeque` does the same job with a few more instructions per operation (its capacity need
//! not be a power of two, so every index wraps with a compare); links touch these queues
//! several times per packet, so the mask is worth having.

/// First-in, first-out buffer of `Copy` items that grows by doubling.
#[derive(Clone, Debug)]
pub struct Ring<T: Copy> {
    buf: Vec<T>,
    head: usize,
    len: usize,
}

impl<T: Copy + Default> Default for Ring<T> {
    /// Empty, without an allocation: most links never use some of their rings (the record of
    /// losses on the wire is kept only by a link with a loss model).
    fn default() -> Self {
        Ring { buf: Vec::new(), head: 0, len: 0 }
    }
}

impl<T: Copy + Default> Ring<T> {
    /// Index mask; never used while `buf` is empty, as then `len` is 0.
    #[inline]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    /// Number of items.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `i`-th item from the front.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self.buf[(self.head + i) & self.mask()])
    }

    /// The oldest item.
    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.get(0)
    }

    /// The newest item.
    #[inline]
    pub fn back(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    /// Append an item.
    #[inline]
    pub fn push_back(&mut self, item: T) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let at = (self.head + self.len) & self.mask();
        self.buf[at] = item;
        self.len += 1;
    }

    /// Remove the oldest item.
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let item = self.buf[self.head];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(item)
    }

    /// Items from oldest to newest.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        (0..self.len).map(move |i| &self.buf[(self.head + i) & self.mask()])
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.buf);
        let cap = (old.len() * 2).max(4);
        let mut buf = Vec::with_capacity(cap);
        buf.extend((0..self.len).map(|i| old[(self.head + i) & (old.len() - 1)]));
        buf.resize(cap, T::default());
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_as_a_fifo_across_wraps_and_growth() {
        let mut r: Ring<u32> = Ring::default();
        assert!(r.is_empty() && r.front().is_none() && r.pop_front().is_none() && r.iter().next().is_none());
        let mut reference = std::collections::VecDeque::new();
        for i in 0..1000u32 {
            r.push_back(i);
            reference.push_back(i);
            if i % 3 == 0 {
                assert_eq!(r.pop_front(), reference.pop_front());
            }
            assert_eq!(r.len(), reference.len());
            assert_eq!(r.front(), reference.front());
            assert_eq!(r.back(), reference.back());
        }
        assert!(r.iter().copied().eq(reference.iter().copied()));
        assert_eq!(r.get(5), reference.get(5));
        while let Some(x) = r.pop_front() {
            assert_eq!(Some(x), reference.pop_front());
        }
        assert!(r.is_empty() && r.pop_front().is_none());
    }
}
