//! A keytab login with a ticket cache of its own: `gss_acquire_cred_from` with the
//! credential store `client_keytab=<keytab>`, `ccache=MEMORY:<unique>` (MIT krb5's credential
//! store extensions), so that the login neither reads nor writes the user's default cache
//! and needs no environment variable.
//!
//! The one place of the workspace that calls C directly: the safe binding has no
//! `gss_acquire_cred_from`. Two imports and a release, each checked; the credential handed
//! back is owned by `libgssapi`'s [`Cred`] from then on.
#![allow(unsafe_code)]

use std::{
    ffi::CString,
    path::Path,
    ptr,
    sync::atomic::{AtomicU64, Ordering},
};

use libgssapi::{credential::Cred, error::Error as GssError};
use libgssapi_sys::{
    gss_OID_set, gss_acquire_cred_from, gss_buffer_desc, gss_cred_id_t, gss_import_name,
    gss_key_value_element_desc, gss_key_value_set_desc, gss_name_t, gss_release_name, OM_uint32,
    _GSS_C_INDEFINITE, GSS_C_INITIATE, GSS_C_NT_USER_NAME, GSS_S_COMPLETE,
};

/// A credential for `principal` (`alice@REALM`) from `keytab`, its tickets in a new
/// in-memory cache that lives as long as the credential.
pub(super) fn acquire(principal: &str, keytab: &Path) -> Result<Cred, String> {
    let keytab = keytab.to_str().ok_or("the keytab path is not UTF-8")?;
    let keytab = CString::new(format!("FILE:{keytab}")).map_err(|_| "a NUL in the keytab path")?;
    // Unique per credential: every login of the process gets its own cache.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let ccache = CString::new(format!("MEMORY:zk-session-{}-{n}", std::process::id()))
        .map_err(|_| "a NUL in the cache name")?;
    let mut elements = [
        gss_key_value_element_desc {
            key: c"client_keytab".as_ptr(),
            value: keytab.as_ptr(),
        },
        gss_key_value_element_desc {
            key: c"ccache".as_ptr(),
            value: ccache.as_ptr(),
        },
    ];
    let store = gss_key_value_set_desc {
        count: elements.len() as OM_uint32,
        elements: elements.as_mut_ptr(),
    };
    let name =
        ImportedName::new(principal).map_err(|e| format!("bad principal {principal:?}: {e}"))?;
    let mut minor: OM_uint32 = 0;
    let mut cred: gss_cred_id_t = ptr::null_mut();
    // SAFETY: every pointer is valid for the call: `store` and its strings live until the
    // end of this function, `name` until its drop below; a null OID set asks for the default
    // mechanisms (krb5) and null out-parameters are allowed. On success `cred` is a new
    // credential that nothing else owns.
    let major = unsafe {
        gss_acquire_cred_from(
            &mut minor,
            name.0,
            _GSS_C_INDEFINITE,
            ptr::null_mut::<libgssapi_sys::gss_OID_set_desc>() as gss_OID_set,
            GSS_C_INITIATE as libgssapi_sys::gss_cred_usage_t,
            &store,
            &mut cred,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if major != GSS_S_COMPLETE {
        return Err(gss_error(major, minor));
    }
    // SAFETY: `cred` came from a successful acquire and is handed over whole.
    Ok(unsafe { Cred::from_c(cred) })
}

/// A name imported for a call, released when dropped.
struct ImportedName(gss_name_t);

impl ImportedName {
    fn new(principal: &str) -> Result<Self, String> {
        let mut bytes = principal.as_bytes().to_vec();
        let mut buffer = gss_buffer_desc {
            length: bytes.len(),
            value: bytes.as_mut_ptr().cast(),
        };
        let mut minor: OM_uint32 = 0;
        let mut name: gss_name_t = ptr::null_mut();
        // SAFETY: `buffer` points at `bytes`, alive for the call; GSS_C_NT_USER_NAME is a
        // constant the library initializes (krb5 parses it as a principal name).
        let major =
            unsafe { gss_import_name(&mut minor, &mut buffer, GSS_C_NT_USER_NAME, &mut name) };
        if major != GSS_S_COMPLETE {
            return Err(gss_error(major, minor));
        }
        Ok(ImportedName(name))
    }
}

impl Drop for ImportedName {
    fn drop(&mut self) {
        let mut minor: OM_uint32 = 0;
        // SAFETY: a name imported above and released once.
        unsafe { gss_release_name(&mut minor, &mut self.0) };
    }
}

/// The library's words for a failed call.
fn gss_error(major: OM_uint32, minor: OM_uint32) -> String {
    GssError {
        major: libgssapi::error::MajorFlags::from_bits_retain(major),
        minor,
    }
    .to_string()
}
