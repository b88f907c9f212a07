use super::*;

fn stat(czxid: i64, mzxid: i64, num_children: i32, cversion: i32) -> Stat {
    Stat {
        czxid,
        mzxid,
        pzxid: mzxid,
        num_children,
        cversion,
        ..Stat::default()
    }
}

#[derive(Default)]
struct Run {
    events: Vec<CacheEvent>,
    wants: Vec<Want>,
}

impl Run {
    fn data(&mut self, t: &mut Tree, path: &str, read: Option<(&[u8], Stat)>) {
        t.apply_data(path, read, &mut self.events, &mut self.wants);
    }

    fn children(&mut self, t: &mut Tree, path: &str, names: &[&str]) {
        let names = names.iter().map(|s| s.to_string()).collect();
        t.apply_children(path, Some(names), &mut self.events, &mut self.wants);
    }

    fn take(&mut self) -> (Vec<String>, Vec<Want>) {
        let shown = self
            .events
            .drain(..)
            .map(|e| match e {
                CacheEvent::Created { path, .. } => format!("created {path}"),
                CacheEvent::Changed { path, .. } => format!("changed {path}"),
                CacheEvent::Deleted { path, .. } => format!("deleted {path}"),
                other => format!("{other:?}"),
            })
            .collect();
        (shown, std::mem::take(&mut self.wants))
    }
}

fn loaded() -> (Tree, Run) {
    let mut t = Tree::new("/app", usize::MAX, true);
    let mut r = Run::default();
    r.data(&mut t, "/app", Some((b"root", stat(1, 1, 2, 2))));
    r.children(&mut t, "/app", &["a", "b"]);
    r.data(&mut t, "/app/a", Some((b"A", stat(2, 2, 1, 1))));
    r.data(&mut t, "/app/b", Some((b"B", stat(3, 3, 0, 0))));
    r.children(&mut t, "/app/a", &["x"]);
    r.data(&mut t, "/app/a/x", Some((b"X", stat(4, 4, 0, 0))));
    r.take();
    (t, r)
}

#[test]
fn the_initial_load_reads_children_only_of_nodes_that_have_some() {
    let mut t = Tree::new("/app", usize::MAX, true);
    let mut r = Run::default();
    r.data(&mut t, "/app", Some((b"root", stat(1, 1, 2, 2))));
    assert_eq!(r.take().1, [Want::Children("/app".into())]);
    r.children(&mut t, "/app", &["a", "b"]);
    let (_, wants) = r.take();
    assert_eq!(
        wants,
        [Want::Data("/app/a".into()), Want::Data("/app/b".into())]
    );
    r.data(&mut t, "/app/b", Some((b"B", stat(3, 3, 0, 0))));
    let (events, wants) = r.take();
    assert_eq!(events, ["created /app/b"]);
    assert!(wants.is_empty(), "a leaf is never listed: {wants:?}");
    assert_eq!(t.len(), 2);
    assert_eq!(t.get("/app/b").unwrap().data(), Some(&b"B"[..]));
    assert_eq!(t.children("/app").unwrap(), ["b"]);
}

#[test]
fn a_change_is_a_newer_mzxid_and_the_same_read_twice_is_silent() {
    let (mut t, mut r) = loaded();
    r.data(&mut t, "/app/b", Some((b"B2", stat(3, 9, 0, 0))));
    r.data(&mut t, "/app/b", Some((b"B2", stat(3, 9, 0, 0))));
    r.data(&mut t, "/app/b", Some((b"old", stat(3, 5, 0, 0))));
    let events: Vec<_> = r.events.drain(..).collect();
    assert_eq!(events.len(), 1, "{events:?}");
    match &events[0] {
        CacheEvent::Changed { old, new, .. } => {
            assert_eq!(old.data(), Some(&b"B"[..]));
            assert_eq!(new.data(), Some(&b"B2"[..]));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(t.get("/app/b").unwrap().data(), Some(&b"B2"[..]));
}

#[test]
fn deleted_and_created_again_with_the_same_version_is_reported() {
    let (mut t, mut r) = loaded();
    // Version 0 again, as before: only the czxid tells.
    r.data(&mut t, "/app/a", Some((b"A", stat(20, 20, 0, 0))));
    let (events, _) = r.take();
    assert_eq!(
        events,
        ["deleted /app/a/x", "deleted /app/a", "created /app/a"]
    );
    assert_eq!(t.len(), 3);
    assert!(t.get("/app/a/x").is_none());
}

#[test]
fn no_node_removes_the_subtree_children_first() {
    let (mut t, mut r) = loaded();
    r.data(&mut t, "/app/a", None);
    assert_eq!(r.take().0, ["deleted /app/a/x", "deleted /app/a"]);
    assert_eq!(t.len(), 2);
    r.data(&mut t, "/app", None);
    assert_eq!(r.take().0, ["deleted /app/b", "deleted /app"]);
    assert_eq!(t.len(), 0);
    assert!(t.get("/app").is_none());
}

#[test]
fn a_listing_adds_new_names_and_drops_vanished_ones() {
    let (mut t, mut r) = loaded();
    r.children(&mut t, "/app", &["a", "c"]);
    let (events, wants) = r.take();
    assert_eq!(events, ["deleted /app/b"]);
    assert_eq!(wants, [Want::Data("/app/c".into())]);
}

#[test]
fn a_moved_cversion_asks_for_the_children_again() {
    let (mut t, mut r) = loaded();
    // A resync read: same data, but the children changed while we were away.
    r.data(&mut t, "/app/a", Some((b"A", stat(2, 2, 1, 3))));
    let (events, wants) = r.take();
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(wants, [Want::Children("/app/a".into())]);
}

#[test]
fn orphans_paths_outside_and_paths_too_deep_are_ignored() {
    let mut t = Tree::new("/app", 1, true);
    let mut r = Run::default();
    r.data(&mut t, "/app/a", Some((b"", stat(2, 2, 0, 0))));
    r.data(&mut t, "/other", Some((b"", stat(2, 2, 0, 0))));
    r.data(&mut t, "/apple", Some((b"", stat(2, 2, 0, 0))));
    assert!(r.take().0.is_empty());
    r.data(&mut t, "/app", Some((b"", stat(1, 1, 1, 1))));
    r.data(&mut t, "/app/a", Some((b"", stat(2, 2, 1, 1))));
    let (events, wants) = r.take();
    assert_eq!(events, ["created /app", "created /app/a"]);
    // Depth 1: /app/a's children are not wanted.
    assert_eq!(wants, [Want::Children("/app".into())]);
    r.data(&mut t, "/app/a/deep", Some((b"", stat(3, 3, 0, 0))));
    assert!(r.take().0.is_empty());
    assert!(!t.covers("/app/a/deep") && t.covers("/app/a") && !t.covers("/app//a"));
}

#[test]
fn stat_only_keeps_no_data_and_the_root_slash_works() {
    let mut t = Tree::new("/", usize::MAX, false);
    let mut r = Run::default();
    r.data(&mut t, "/", Some((b"", stat(0, 0, 1, 1))));
    assert_eq!(r.take().1, [Want::Children("/".into())]);
    r.children(&mut t, "/", &["zookeeper"]);
    assert_eq!(r.take().1, [Want::Data("/zookeeper".into())]);
    r.data(&mut t, "/zookeeper", Some((b"payload", stat(0, 0, 0, 0))));
    assert_eq!(t.get("/zookeeper").unwrap().data(), None);
    assert_eq!(t.all_paths(), ["/", "/zookeeper"]);
}

#[test]
fn all_paths_lists_parents_before_children() {
    let (t, _) = loaded();
    assert_eq!(t.all_paths(), ["/app", "/app/a", "/app/a/x", "/app/b"]);
}

/// Builds the benchmark's tree shape: `n` znodes, 100 children per parent, 100 bytes each.
fn bushy(n: usize) -> Tree {
    let mut t = Tree::new("/b", usize::MAX, true);
    let mut r = Run::default();
    let data = [b'x'; 100];
    let mut paths = vec!["/b".to_owned()];
    for i in 1..n {
        let parent = (i - 1) / 100;
        paths.push(format!("{}/n{}", paths[parent], (i - 1) % 100));
    }
    for (i, p) in paths.iter().enumerate() {
        let kids = (100 * i + 1..n.min(100 * i + 101)).count() as i32;
        r.data(
            &mut t,
            p,
            Some((&data, stat(i as i64 + 1, i as i64 + 1, kids, kids))),
        );
        r.events.clear();
    }
    assert_eq!(t.len(), n);
    t
}

/// Counts this test binary's live heap bytes, for the layout test below. Other tests run
/// beside it and allocate too, but little next to a tree of 10,000 znodes.
#[global_allocator]
static ALLOCATOR: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// Issue 29's goal is at most 0.65x the 336-344 bytes CuratorCache's heap holds per znode
/// (100-byte data): about 220. A slot of 88 bytes, the name and data, a few bytes of index.
#[test]
fn a_cached_znode_costs_its_slot_its_name_and_data_and_a_few_bytes_of_index() {
    assert_eq!(std::mem::size_of::<crate::cache::store::Slot>(), 88);
    for n in [10_000, 50_000] {
        let before = ALLOCATOR.allocated() as f64;
        let t = bushy(n);
        let live = (ALLOCATOR.allocated() as f64 - before) / n as f64;
        let counted = t.heap_bytes() as f64 / n as f64;
        eprintln!("{n} znodes: {live:.1} live B/node, {counted:.1} by the store's count");
        assert!(live < 210.0, "{n} znodes: {live:.1} B/node");
        assert!((live - counted).abs() < 5.0, "{live:.1} vs {counted:.1}");
    }
}
