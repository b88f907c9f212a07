//! [`HoldOptions`]: what a holder's node is created with (data, ACL) and how its hold is
//! watched (the suspend policy), the part the mutex and semaphore builders share.

use zk_session::{Acl, CreateOptions};

use super::{liveness::SuspendPolicy, protected::ProtectedCreate};

/// The options of the protected ephemeral-sequential node a lock or a lease is held by.
/// The default: no data, an open ACL, [`SuspendPolicy::StepDown`].
#[derive(Debug, Clone, Default)]
pub(crate) struct HoldOptions {
    pub(crate) data: Vec<u8>,
    pub(crate) acl: Option<Vec<Acl>>,
    pub(crate) policy: SuspendPolicy,
}

impl HoldOptions {
    /// The protected create of a holder node named `name` under `parent`, with our data
    /// and ACL.
    pub(crate) fn protected_create(&self, parent: String, name: &'static str) -> ProtectedCreate {
        let mut options = CreateOptions::ephemeral_sequential();
        if let Some(acl) = &self.acl {
            options = options.with_acl(acl.clone());
        }
        ProtectedCreate::new(parent, name)
            .data(&self.data)
            .options(options)
    }
}

/// The `data`, `acl` and `suspend_policy` setters of a builder with a `hold: HoldOptions`
/// field, each with the rustdoc written before its name, so the mutex's and the semaphore's
/// builders set their holder node the same way while each documents it in its own words.
/// The caller has `Acl` and `SuspendPolicy` in scope, as its rustdoc links to them too.
macro_rules! hold_setters {
    (
        $(#[$data_doc:meta])* data;
        $(#[$acl_doc:meta])* acl;
        $(#[$policy_doc:meta])* suspend_policy;
    ) => {
        $(#[$data_doc])*
        pub fn data(mut self, data: &[u8]) -> Self {
            self.hold.data = data.to_vec();
            self
        }

        $(#[$acl_doc])*
        pub fn acl(mut self, acl: Vec<Acl>) -> Self {
            self.hold.acl = Some(acl);
            self
        }

        $(#[$policy_doc])*
        pub fn suspend_policy(mut self, policy: SuspendPolicy) -> Self {
            self.hold.policy = policy;
            self
        }
    };
}
pub(crate) use hold_setters;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_empty_data_open_acl_step_down() {
        let hold = HoldOptions::default();
        assert!(hold.data.is_empty());
        assert!(hold.acl.is_none());
        assert_eq!(hold.policy, SuspendPolicy::StepDown);
    }
}
