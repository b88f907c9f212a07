//! Client-side znode path validation, with the rules of Java's `PathUtils.validatePath`.

use thiserror::Error;

/// How a path will be used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PathKind {
    /// An existing znode, or a create without a sequence suffix.
    #[default]
    Plain,
    /// The prefix of a sequential create: the server appends digits, so the path is validated
    /// with a `1` appended (which makes `/queue/` legal).
    Sequential,
}

/// Why a path is not a valid znode path.
///
/// Offsets are byte offsets into the path as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path is empty.
    #[error("path must not be empty")]
    Empty,
    /// The path does not start with `/`.
    #[error("path must start with '/'")]
    NotAbsolute,
    /// The path ends with `/` and is not the root.
    #[error("path must not end with '/'")]
    TrailingSlash,
    /// Two consecutive slashes; `offset` is the second one.
    #[error("empty node name (\"//\") at offset {offset}")]
    EmptyComponent {
        /// Byte offset of the second `/`.
        offset: usize,
    },
    /// A `.` or `..` component; `offset` is its last dot.
    #[error("relative path component ('.' or '..') at offset {offset}")]
    RelativeComponent {
        /// Byte offset of the component's last `.`.
        offset: usize,
    },
    /// A NUL character.
    #[error("null character at offset {offset}")]
    NullCharacter {
        /// Byte offset of the NUL.
        offset: usize,
    },
    /// A control, private-use, specials or non-BMP character.
    #[error("invalid character {ch:?} at offset {offset}")]
    InvalidCharacter {
        /// Byte offset of the character.
        offset: usize,
        /// The character.
        ch: char,
    },
}

/// Checks that `path` is a valid znode path, as the Java client does before sending it.
///
/// The rules: starts with `/`; no trailing `/` except the root; no empty, `.` or `..`
/// component; no NUL; none of U+0001–U+001F, U+007F–U+009F, U+E000–U+F8FF, U+FFF0–U+FFFF,
/// and nothing above U+FFFF (Java sees those as surrogates, which it refuses). The first
/// problem in the path is reported, in Java's order.
///
/// ```
/// use zk_proto::{validate_path, PathError, PathKind};
///
/// assert_eq!(validate_path("/app/config", PathKind::Plain), Ok(()));
/// assert_eq!(validate_path("/", PathKind::Plain), Ok(()));
/// assert_eq!(validate_path("/queue/", PathKind::Plain), Err(PathError::TrailingSlash));
/// assert_eq!(validate_path("/queue/", PathKind::Sequential), Ok(()));
/// assert_eq!(
///     validate_path("/a/../b", PathKind::Plain),
///     Err(PathError::RelativeComponent { offset: 4 })
/// );
/// ```
pub fn validate_path(path: &str, kind: PathKind) -> Result<(), PathError> {
    // A sequential prefix is validated with a digit appended; the digit can only end a
    // component, so checking `path` as if followed by one needs no allocation.
    let seq = kind == PathKind::Sequential;
    if path.is_empty() {
        return Err(if seq {
            PathError::NotAbsolute
        } else {
            PathError::Empty
        });
    }
    if !path.starts_with('/') {
        return Err(PathError::NotAbsolute);
    }
    if path.len() == 1 && !seq {
        return Ok(());
    }
    if path.ends_with('/') && !seq {
        return Err(PathError::TrailingSlash);
    }

    let bytes = path.as_bytes();
    // The byte after `i`, with the appended digit past the end for sequential paths.
    let next = |i: usize| -> Option<u8> {
        match bytes.get(i + 1) {
            Some(&b) => Some(b),
            None if seq => Some(b'1'),
            None => None,
        }
    };
    let component_ends_after = |i: usize| matches!(next(i), None | Some(b'/'));

    // Bytes, not chars, and only the bytes that a rule is about: every path is checked on
    // every request. Refused characters above U+007F start with a UTF-8 lead byte (0xC2 and
    // up); a byte before a '/' or '.' is the char before it ('/' and '.' are ASCII, and never
    // part of a multi-byte char).
    let special = |b: &u8| *b < 0x20 || *b >= 0x7f || *b == b'/' || *b == b'.';
    let mut i = 1;
    while let Some(k) = bytes[i..].iter().position(special) {
        i += k;
        let prev = bytes[i - 1];
        match bytes[i] {
            0 => return Err(PathError::NullCharacter { offset: i }),
            b'/' if prev == b'/' => return Err(PathError::EmptyComponent { offset: i }),
            b'.' if (prev == b'/' || (prev == b'.' && i >= 2 && bytes[i - 2] == b'/'))
                && component_ends_after(i) =>
            {
                return Err(PathError::RelativeComponent { offset: i })
            }
            b @ (0x01..=0x1f | 0x7f) => {
                let ch = char::from(b);
                return Err(PathError::InvalidCharacter { offset: i, ch });
            }
            0xc2.. => {
                // A lead byte is a char boundary.
                if let Some(ch) = path[i..].chars().next().filter(|&c| is_invalid_char(c)) {
                    return Err(PathError::InvalidCharacter { offset: i, ch });
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// The characters `PathUtils` refuses besides NUL (surrogates cannot occur in a `str`, and
/// everything above U+FFFF would reach Java as a surrogate pair).
fn is_invalid_char(c: char) -> bool {
    matches!(c,
        '\u{1}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{e000}'..='\u{f8ff}'
        | '\u{fff0}'..='\u{ffff}'
    ) || c > '\u{ffff}'
}

#[cfg(test)]
mod tests {
    use super::*;
    use PathKind::{Plain, Sequential};

    #[test]
    fn valid_paths() {
        for p in [
            "/",
            "/a",
            "/a/b/c",
            "/a.b",
            "/...",
            "/.a",
            "/a.",
            "/..a",
            "/a/b..",
            "/zookeeper/quota",
            "/日本語",
            "/\u{a0}",
            "/\u{d7ff}",
            "/\u{f900}",
            "/\u{ffef}",
            "/a b",
        ] {
            assert_eq!(validate_path(p, Plain), Ok(()), "{p:?}");
        }
    }

    #[test]
    fn structure_errors() {
        assert_eq!(validate_path("", Plain), Err(PathError::Empty));
        assert_eq!(validate_path("a", Plain), Err(PathError::NotAbsolute));
        assert_eq!(validate_path("a/b", Plain), Err(PathError::NotAbsolute));
        assert_eq!(validate_path("/a/", Plain), Err(PathError::TrailingSlash));
        assert_eq!(validate_path("//", Plain), Err(PathError::TrailingSlash));
        assert_eq!(
            validate_path("/a//b", Plain),
            Err(PathError::EmptyComponent { offset: 3 })
        );
    }

    #[test]
    fn relative_components() {
        for (p, offset) in [
            ("/.", 1),
            ("/..", 2),
            ("/a/.", 3),
            ("/a/..", 4),
            ("/./a", 1),
            ("/../a", 2),
            ("/a/./b", 3),
        ] {
            assert_eq!(
                validate_path(p, Plain),
                Err(PathError::RelativeComponent { offset }),
                "{p:?}"
            );
        }
    }

    #[test]
    fn bad_characters() {
        assert_eq!(
            validate_path("/a\0b", Plain),
            Err(PathError::NullCharacter { offset: 2 })
        );
        for ch in [
            '\u{1}',
            '\u{1f}',
            '\u{7f}',
            '\u{9f}',
            '\u{e000}',
            '\u{f8ff}',
            '\u{fff0}',
            '\u{ffff}',
            '\u{10000}',
            '😀',
        ] {
            let p = format!("/ab{ch}");
            assert_eq!(
                validate_path(&p, Plain),
                Err(PathError::InvalidCharacter { offset: 3, ch }),
                "{ch:?}"
            );
        }
    }

    #[test]
    fn first_problem_wins_in_java_order() {
        // The trailing slash is checked before the characters.
        assert_eq!(
            validate_path("/\u{1}/", Plain),
            Err(PathError::TrailingSlash)
        );
        // Then left to right.
        assert_eq!(
            validate_path("/\u{1}//", Sequential),
            Err(PathError::InvalidCharacter {
                offset: 1,
                ch: '\u{1}'
            })
        );
        assert_eq!(
            validate_path("//\u{1}", Plain),
            Err(PathError::EmptyComponent { offset: 1 })
        );
    }

    #[test]
    fn sequential_paths_are_checked_with_a_digit_appended() {
        assert_eq!(validate_path("/", Sequential), Ok(()));
        assert_eq!(validate_path("/q/", Sequential), Ok(()));
        assert_eq!(validate_path("/q/item-", Sequential), Ok(()));
        // "/q/." + "1" and "/q/.." + "1" are ordinary names.
        assert_eq!(validate_path("/q/.", Sequential), Ok(()));
        assert_eq!(validate_path("/q/..", Sequential), Ok(()));
        assert_eq!(validate_path("", Sequential), Err(PathError::NotAbsolute));
        assert_eq!(
            validate_path("/q//", Sequential),
            Err(PathError::EmptyComponent { offset: 3 })
        );
        assert_eq!(
            validate_path("/./", Sequential),
            Err(PathError::RelativeComponent { offset: 1 })
        );
    }

    /// The rules walked char by char, as Java does: the byte walk above must agree with it
    /// on every path.
    fn char_walk(path: &str, seq: bool) -> Result<(), PathError> {
        let chars: Vec<(usize, char)> = path.char_indices().collect();
        let ends_after = |k: usize| match chars.get(k + 1) {
            Some(&(_, c)) => c == '/',
            None => !seq,
        };
        let (mut prev, mut prev2) = ('/', '\0');
        for (k, &(i, c)) in chars.iter().enumerate().skip(1) {
            match c {
                '\0' => return Err(PathError::NullCharacter { offset: i }),
                '/' if prev == '/' => return Err(PathError::EmptyComponent { offset: i }),
                '.' if prev == '.' && prev2 == '/' && ends_after(k) => {
                    return Err(PathError::RelativeComponent { offset: i })
                }
                '.' if prev == '/' && ends_after(k) => {
                    return Err(PathError::RelativeComponent { offset: i })
                }
                c if is_invalid_char(c) => {
                    return Err(PathError::InvalidCharacter { offset: i, ch: c })
                }
                _ => {}
            }
            (prev2, prev) = (prev, c);
        }
        Ok(())
    }

    proptest::proptest! {
        #[test]
        fn bytes_and_chars_agree(
            body in proptest::collection::vec(
                proptest::sample::select(vec![
                    "/", ".", "a", "\0", "\u{1}", "\u{7f}", "\u{80}", "\u{9f}", "\u{a0}",
                    "é", "\u{d7ff}", "\u{e000}", "\u{f8ff}", "\u{f900}", "\u{ffef}",
                    "\u{fff0}", "\u{ffff}", "😀", "日",
                ]),
                0..12,
            ),
            seq in proptest::bool::ANY,
        ) {
            let path = format!("/{}", body.concat());
            let kind = if seq { Sequential } else { Plain };
            let structural = path.len() > 1 && path.ends_with('/') && !seq;
            proptest::prop_assume!(!structural);
            proptest::prop_assert_eq!(validate_path(&path, kind), char_walk(&path, seq));
        }
    }

    #[test]
    fn messages_name_the_rule() {
        assert_eq!(
            PathError::EmptyComponent { offset: 3 }.to_string(),
            "empty node name (\"//\") at offset 3"
        );
        assert_eq!(
            PathError::TrailingSlash.to_string(),
            "path must not end with '/'"
        );
    }
}
