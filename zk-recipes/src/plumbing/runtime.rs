//! The runtime a long-lived recipe's background work runs on: the caller's, found when the
//! recipe starts, so that a start outside a runtime is an error rather than a panic.

use tokio::runtime::Handle;

use crate::{RecipeError, Result};

/// The current tokio runtime; [`RecipeError::NoRuntime`] outside one.
pub(crate) fn current() -> Result<Handle> {
    Handle::try_current().map_err(|_| RecipeError::NoRuntime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_a_runtime_is_an_error_inside_one_the_handle() {
        assert!(matches!(current(), Err(RecipeError::NoRuntime)));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert!(rt.block_on(async { current() }).is_ok());
    }
}
