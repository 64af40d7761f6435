//! SQL `LIKE` patterns with `%` wildcards (all TPC-H needs). Dictionary columns
//! evaluate a pattern once per distinct value (or as a code range for
//! `'prefix%'`); heap columns match every row with substring search (memchr's
//! SIMD `memmem`, each segment's searcher built once per pattern).

use memchr::memmem::Finder;

use crate::error::ExecError;

/// A parsed pattern: literal segments between `%`s.
#[derive(Clone, Debug)]
pub struct Like {
    pattern: String,
    /// The literal pieces (the first anchored at the start unless the pattern
    /// begins with `%`, the last anchored at the end unless it ends with `%`).
    segments: Vec<String>,
    /// A searcher per segment, for the unanchored ones.
    finders: Vec<Finder<'static>>,
    wild_start: bool,
    wild_end: bool,
}

impl PartialEq for Like {
    fn eq(&self, other: &Like) -> bool {
        self.pattern == other.pattern
    }
}

impl Eq for Like {}

/// What a pattern amounts to, for choosing an evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LikeShape<'p> {
    /// No `%`: equality with this string.
    Exact(&'p str),
    /// `'prefix%'`: a code range on a sorted dictionary.
    Prefix(&'p str),
    /// Anything else.
    General,
}

impl Like {
    /// Parses `pattern`. `_` (one character) and escapes are not supported.
    pub fn new(pattern: &str) -> Result<Like, ExecError> {
        if pattern.contains('_') || pattern.contains('\\') {
            return Err(ExecError::Pattern {
                pattern: pattern.to_string(),
                reason: "only % wildcards are supported (no _ or escapes)",
            });
        }
        let parts: Vec<&str> = pattern.split('%').collect();
        let wild_start = parts.len() > 1 && parts[0].is_empty();
        let wild_end = parts.len() > 1 && parts[parts.len() - 1].is_empty();
        let segments: Vec<String> = parts
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| s.to_string())
            .collect();
        let finders = segments
            .iter()
            .map(|s| Finder::new(s.as_bytes()).into_owned())
            .collect();
        Ok(Like {
            pattern: pattern.to_string(),
            segments,
            finders,
            wild_start,
            wild_end,
        })
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    pub fn shape(&self) -> LikeShape<'_> {
        let has_wildcard = self.pattern.contains('%');
        if !has_wildcard {
            return LikeShape::Exact(&self.pattern);
        }
        match (self.wild_start, self.wild_end, self.segments.as_slice()) {
            (false, true, [prefix]) => LikeShape::Prefix(prefix),
            (_, _, []) => LikeShape::Prefix(""),
            _ => LikeShape::General,
        }
    }

    /// Whether `s` matches the pattern.
    pub fn matches(&self, s: &str) -> bool {
        if !self.pattern.contains('%') {
            return s == self.pattern;
        }
        let mut rest = s;
        let n = self.segments.len();
        for (i, seg) in self.segments.iter().enumerate() {
            let first = i == 0;
            let last = i + 1 == n;
            if first && !self.wild_start {
                match rest.strip_prefix(seg.as_str()) {
                    Some(r) => rest = r,
                    None => return false,
                }
                if last && !self.wild_end {
                    return rest.is_empty();
                }
            } else if last && !self.wild_end {
                return rest.ends_with(seg.as_str());
            } else {
                // A match ends on a char boundary: `seg` is whole UTF-8.
                match self.finders[i].find(rest.as_bytes()) {
                    Some(at) => rest = &rest[at + seg.len()..],
                    None => return false,
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A naive matcher by recursion over the pattern, the reference.
    fn naive(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'%') => (0..=s.len()).any(|i| naive(&p[1..], &s[i..])),
            Some(&c) => s.first() == Some(&c) && naive(&p[1..], &s[1..]),
        }
    }

    #[test]
    fn agrees_with_a_naive_matcher() {
        let patterns = [
            "",
            "%",
            "%%",
            "a",
            "ab",
            "a%",
            "%a",
            "%a%",
            "a%b",
            "ab%ba",
            "%ab%ba%",
            "a%a%a",
            "%BRASS",
            "PROMO%",
            "%special%requests%",
            "%green%",
        ];
        let mut rng = fastrand::Rng::with_seed(7);
        let mut strings: Vec<String> =
            ["", "a", "aba", "abba", "ababa", "PROMO BRUSHED", "x BRASS"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        for _ in 0..300 {
            let len = rng.usize(0..8);
            strings.push((0..len).map(|_| ['a', 'b', 'x'][rng.usize(0..3)]).collect());
        }
        for p in patterns {
            let like = Like::new(p).unwrap();
            for s in &strings {
                assert_eq!(
                    like.matches(s),
                    naive(p.as_bytes(), s.as_bytes()),
                    "{p:?} {s:?}"
                );
            }
        }
    }

    #[test]
    fn shapes_and_errors() {
        assert_eq!(
            Like::new("PROMO%").unwrap().shape(),
            LikeShape::Prefix("PROMO")
        );
        assert_eq!(Like::new("%").unwrap().shape(), LikeShape::Prefix(""));
        assert_eq!(Like::new("MAIL").unwrap().shape(), LikeShape::Exact("MAIL"));
        assert_eq!(Like::new("%BRASS").unwrap().shape(), LikeShape::General);
        assert_eq!(Like::new("a%b%").unwrap().shape(), LikeShape::General);
        assert!(matches!(Like::new("a_c"), Err(ExecError::Pattern { .. })));
    }
}
