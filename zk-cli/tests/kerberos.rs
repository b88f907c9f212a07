//! `zk --sasl-mechanism gssapi` against a real ZooKeeper server that logs in to a real MIT KDC
//! the harness starts (`zk_testkit::kdc`): a keytab principal and a `kinit`ed one, a `sasl:`
//! ACL, and a missing ticket. Built without the `gssapi` feature, the option says so.

mod support;

use support::{assert_code, command_at, finish, stderr, stdout};

#[cfg(feature = "gssapi")]
mod with_gssapi {
    use std::{
        path::{Path, PathBuf},
        sync::OnceLock,
        time::Duration,
    };

    use zk_testkit::{shared_kdc, Kdc, KerberosServer, ServerOptions, Standalone};

    use super::*;

    /// A Kerberos server (`zookeeper/localhost`), and `carol`'s keytab; `dave` is `kinit`ed.
    fn setup() -> &'static (Standalone, PathBuf) {
        static SETUP: OnceLock<(Standalone, PathBuf)> = OnceLock::new();
        SETUP.get_or_init(|| {
            let kdc = shared_kdc();
            let login = KerberosServer::create(kdc, &["zookeeper/localhost"]).unwrap();
            let server = Standalone::builder()
                .options(login.apply(ServerOptions::default()))
                .start()
                .expect("a Kerberos server");
            let carol = kdc.principal_with_keytab("carol").unwrap();
            let dave = kdc.principal_with_keytab("dave").unwrap();
            kdc.kinit("dave", &dave, Duration::from_secs(3600)).unwrap();
            (server, carol)
        })
    }

    fn path_arg(p: &Path) -> &str {
        p.to_str().expect("a UTF-8 temp path")
    }

    async fn zk_as(principal: &str, keytab: Option<&Path>, tail: &[&str]) -> std::process::Output {
        let principal = Kdc::principal(principal);
        let mut args = vec!["--sasl-mechanism", "gssapi", "--sasl-principal", &principal];
        if let Some(k) = keytab {
            args.extend(["--sasl-keytab", path_arg(k)]);
        }
        args.extend(tail);
        finish(command_at(&setup().0.connect_string(), args), None).await
    }

    #[tokio::test]
    async fn a_keytab_principal_owns_a_sasl_acl_that_refuses_a_kinit_one() {
        let keytab = setup().1.clone();
        let o = zk_as("carol", Some(&keytab), &["whoami"]).await;
        assert_code(&o, 0);
        let me = format!("sasl: {}", Kdc::principal("carol"));
        assert!(stdout(&o).lines().any(|l| l == me), "{}", stdout(&o));

        let path = support::unique("krb");
        let acl = format!("sasl:{}:cdrwa", Kdc::principal("carol"));
        assert_code(
            &zk_as("carol", Some(&keytab), &["create", &path, "c"]).await,
            0,
        );
        assert_code(
            &zk_as("carol", Some(&keytab), &["setAcl", &path, &acl]).await,
            0,
        );
        let o = zk_as("carol", Some(&keytab), &["get", &path]).await;
        assert_code(&o, 0);
        assert_eq!(o.stdout, b"c");

        // dave from kinit's ticket cache: authenticated, and refused by carol's ACL.
        let o = zk_as("dave", None, &["whoami"]).await;
        assert_code(&o, 0);
        let dave = format!("sasl: {}", Kdc::principal("dave"));
        assert!(stdout(&o).lines().any(|l| l == dave), "{}", stdout(&o));
        let o = zk_as("dave", None, &["get", &path]).await;
        assert_code(&o, 1);
        assert!(stderr(&o).contains("not authenticated"), "{}", stderr(&o));
        assert_code(&zk_as("carol", Some(&keytab), &["delete", &path]).await, 0);
    }

    /// The plain Kerberos way: `kinit`, then `KRB5CCNAME` names the cache, no other option.
    #[tokio::test]
    async fn kinit_and_krb5ccname_are_enough() {
        let kdc = shared_kdc();
        let server = setup().0.connect_string();
        let keytab = kdc.principal_with_keytab("frank").unwrap();
        let cache = format!("FILE:{}", kdc.dir().join("frank.ccache").display());
        kdc.kinit_into(&cache, "frank", &keytab, Duration::from_secs(3600))
            .unwrap();
        let mut c = command_at(&server, ["--sasl-mechanism", "gssapi", "whoami"]);
        c.env("KRB5CCNAME", &cache);
        let o = finish(c, None).await;
        assert_code(&o, 0);
        let me = format!("sasl: {}", Kdc::principal("frank"));
        assert!(stdout(&o).lines().any(|l| l == me), "{}", stdout(&o));
    }

    #[tokio::test]
    async fn no_ticket_exits_3_with_auth_failed() {
        setup();
        shared_kdc().add_principal("erin").unwrap();
        let o = zk_as("erin", None, &["ls", "/"]).await;
        assert_code(&o, 3);
        let err = stderr(&o);
        assert!(
            err.contains("Kerberos (GSSAPI) authentication as erin@ZK.TEST failed (AuthFailed)"),
            "{err}"
        );
        // Kerberos' own reason, not only where to look.
        assert!(err.contains("no Kerberos credentials"), "{err}");
    }
}

/// Without the feature the options exist, and using one is a clear usage error.
#[cfg(not(feature = "gssapi"))]
#[tokio::test]
async fn without_the_feature_the_option_says_so() {
    let o = finish(
        command_at("127.0.0.1:9", ["--sasl-mechanism", "gssapi", "ls", "/"]),
        None,
    )
    .await;
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("built without Kerberos"),
        "{}",
        stderr(&o)
    );
    let _ = stdout;
}
