//! Typed znode versions for conditional writes.

/// The version a conditional write expects the znode to have.
///
/// ```
/// use zk_session::Version;
/// assert_eq!(Version::Any.as_i32(), -1);
/// assert_eq!(Version::from(3), Version::Exact(3));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Version {
    /// Whatever the version is (`-1` on the wire).
    #[default]
    Any,
    /// Only if the version is exactly this.
    Exact(i32),
}

impl Version {
    /// The wire value.
    ///
    /// ```rust
    /// use zk_session::Version;
    ///
    /// assert_eq!(Version::Exact(7).as_i32(), 7);
    /// assert_eq!(Version::Any.as_i32(), -1);
    /// assert_eq!(Version::default(), Version::Any);
    /// ```
    pub fn as_i32(self) -> i32 {
        match self {
            Version::Any => -1,
            Version::Exact(v) => v,
        }
    }
}

impl From<i32> for Version {
    fn from(v: i32) -> Self {
        Version::Exact(v)
    }
}
