//! The engine's public surface, listed from its sources and compared with the committed listing
//! `gangway/public-surface.txt` (issue 30, item 1), so that every change to what hosts can name
//! shows in review. The listing is made on stable Rust by a `syn` walk of the sources: from
//! `src/lib.rs`, every module (inline or in its file; test modules left out), and in each, every
//! item declared `pub`: functions with their signatures, structs with their public fields, enums
//! with their variants, traits with their methods, constants, statics, type aliases, `pub use`
//! re-exports, and the public methods and constants of inherent impls. A module that is not
//! `pub` shows in brackets in the path (`gangway::[scheduler]::[what_if]::WhatIf`): its items are
//! public only where re-exported (the `pub use` lines say where), but the methods of a type it
//! defines are public wherever the type is, so they are listed all the same. Items behind
//! `#[cfg(...)]` carry it; `#[doc(hidden)]` and `#[non_exhaustive]` are marked. Items made by macros are not
//! seen (the engine's public items are all written out).
//!
//! After an intended change, write the listing again:
//! `GANGWAY_BLESS=1 cargo test -p gangway --test engine public_surface`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::{Attribute, Fields, ImplItem, Item, ItemMod, TraitItem, UseTree, Visibility, parse_file};

/// The committed listing, relative to the crate.
const LISTING: &str = "public-surface.txt";

/// Tokens as text, with the spaces `to_string` puts between every two tokens taken out where
/// Rust would not write them.
fn text(tokens: impl ToTokens) -> String {
    let raw = tokens.to_token_stream().to_string();
    let mut out = raw
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" ,", ",")
        .replace(" ;", ";")
        .replace("& ", "&")
        .replace("& '", "&'")
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" (", "(")
        .replace("( ", "(")
        .replace(" )", ")")
        .replace("[ ", "[")
        .replace(" ]", "]")
        .replace(" :", ":")
        .replace("' ", "'")
        .replace("# ", "#")
        .replace("! ", "!");
    out = out.replace("->", " -> ").replace("  ", " ");
    out
}

fn is_public(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// The item's `#[cfg(...)]` conditions and whether it is `#[doc(hidden)]` or
/// `#[non_exhaustive]`, as a suffix.
fn marks(attrs: &[Attribute]) -> String {
    let mut out = String::new();
    for attr in attrs {
        if attr.path().is_ident("cfg") {
            let _ = write!(out, "  #[{}]", text(&attr.meta));
        }
        if attr.path().is_ident("doc") && text(&attr.meta).contains("hidden") {
            out.push_str("  #[doc(hidden)]");
        }
        if attr.path().is_ident("non_exhaustive") {
            out.push_str("  #[non_exhaustive]");
        }
    }
    out
}

/// The `pub use` trees of `tree`, as paths (`a::b::{c, d}` gives `a::b::c` and `a::b::d`).
fn use_paths(prefix: &str, tree: &UseTree, out: &mut Vec<String>) {
    match tree {
        UseTree::Path(p) => use_paths(&format!("{prefix}{}::", p.ident), &p.tree, out),
        UseTree::Name(n) => out.push(format!("{prefix}{}", n.ident)),
        UseTree::Rename(r) => out.push(format!("{prefix}{} as {}", r.ident, r.rename)),
        UseTree::Glob(_) => out.push(format!("{prefix}*")),
        UseTree::Group(g) => g.items.iter().for_each(|t| use_paths(prefix, t, out)),
    }
}

/// Lists the public items of one module's `items` (the module at `path`, its file `file`).
fn walk(path: &str, file: &Path, items: &[Item], out: &mut Vec<String>) {
    for item in items {
        match item {
            Item::Fn(f) if is_public(&f.vis) => {
                out.push(format!(
                    "{path}::{}  {}{}",
                    f.sig.ident,
                    text(&f.sig),
                    marks(&f.attrs)
                ));
            }
            Item::Const(c) if is_public(&c.vis) => {
                let ty = text(&c.ty);
                out.push(format!(
                    "{path}::{}  const: {ty}{}",
                    c.ident,
                    marks(&c.attrs)
                ));
            }
            Item::Static(s) if is_public(&s.vis) => {
                let ty = text(&s.ty);
                out.push(format!(
                    "{path}::{}  static: {ty}{}",
                    s.ident,
                    marks(&s.attrs)
                ));
            }
            Item::Type(t) if is_public(&t.vis) => {
                let ty = text(&t.ty);
                out.push(format!(
                    "{path}::{}  type = {ty}{}",
                    t.ident,
                    marks(&t.attrs)
                ));
            }
            Item::Struct(s) if is_public(&s.vis) => {
                let generics = text(&s.generics);
                let name = format!("{path}::{}", s.ident);
                out.push(format!("{name}  struct{generics}{}", marks(&s.attrs)));
                match &s.fields {
                    Fields::Named(named) => {
                        for f in named.named.iter().filter(|f| is_public(&f.vis)) {
                            let field = f.ident.as_ref().map(ToString::to_string);
                            let ty = text(&f.ty);
                            let field = field.unwrap_or_default();
                            out.push(format!("{name}.{field}: {ty}{}", marks(&f.attrs)));
                        }
                    }
                    Fields::Unnamed(unnamed) => {
                        for (i, f) in unnamed.unnamed.iter().enumerate() {
                            if is_public(&f.vis) {
                                out.push(format!("{name}.{i}: {}", text(&f.ty)));
                            }
                        }
                    }
                    Fields::Unit => {}
                }
            }
            Item::Enum(e) if is_public(&e.vis) => {
                let name = format!("{path}::{}", e.ident);
                out.push(format!(
                    "{name}  enum{}{}",
                    text(&e.generics),
                    marks(&e.attrs)
                ));
                for v in &e.variants {
                    let fields = match &v.fields {
                        Fields::Unit => String::new(),
                        fields => text(fields),
                    };
                    out.push(format!("{name}::{}{fields}{}", v.ident, marks(&v.attrs)));
                }
            }
            Item::Trait(t) if is_public(&t.vis) => {
                let name = format!("{path}::{}", t.ident);
                let bounds = text(&t.supertraits);
                out.push(format!("{name}  trait: {bounds}{}", marks(&t.attrs)));
                for i in &t.items {
                    match i {
                        TraitItem::Fn(f) => {
                            out.push(format!("{name}::{}  {}", f.sig.ident, text(&f.sig)));
                        }
                        TraitItem::Const(c) => {
                            out.push(format!("{name}::{}  const: {}", c.ident, text(&c.ty)));
                        }
                        TraitItem::Type(ty) => out.push(format!("{name}::{}  type", ty.ident)),
                        _ => {}
                    }
                }
            }
            Item::Use(u) if is_public(&u.vis) => {
                let mut paths = Vec::new();
                use_paths("", &u.tree, &mut paths);
                for p in paths {
                    out.push(format!("{path}  pub use {p}{}", marks(&u.attrs)));
                }
            }
            Item::Impl(i) if i.trait_.is_none() => {
                let ty = text(&i.self_ty);
                for member in &i.items {
                    match member {
                        ImplItem::Fn(f) if is_public(&f.vis) => {
                            let sig = text(&f.sig);
                            out.push(format!(
                                "{path}::{ty}::{}  {sig}{}",
                                f.sig.ident,
                                marks(&f.attrs)
                            ));
                        }
                        ImplItem::Const(c) if is_public(&c.vis) => {
                            let cty = text(&c.ty);
                            out.push(format!("{path}::{ty}::{}  const: {cty}", c.ident));
                        }
                        _ => {}
                    }
                }
            }
            Item::Mod(m) if !is_test(&m.attrs) => module(path, file, m, out),
            _ => {}
        }
    }
}

/// Whether `attrs` make an item test-only (`#[cfg(test)]`).
fn is_test(attrs: &[Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && text(&a.meta) == "cfg(test)")
}

/// Lists module `m` of the module at `path` (whose file is `file`).
fn module(path: &str, file: &Path, m: &ItemMod, out: &mut Vec<String>) {
    let name = if is_public(&m.vis) {
        let name = format!("{path}::{}", m.ident);
        out.push(format!("{name}  mod{}", marks(&m.attrs)));
        name
    } else {
        format!("{path}::[{}]", m.ident)
    };
    if let Some((_, items)) = &m.content {
        walk(&name, file, items, out);
        return;
    }
    // A module's own file: `dir/name.rs` or `dir/name/mod.rs`, `dir` being the folder of the
    // declaring file's module (the file itself's folder for `lib.rs` and `mod.rs`).
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let parent = file.parent().unwrap_or(Path::new("."));
    let dir = match stem {
        "lib" | "mod" => parent.to_path_buf(),
        _ => parent.join(stem),
    };
    let ident = m.ident.to_string();
    let candidates = [
        dir.join(format!("{ident}.rs")),
        dir.join(&ident).join("mod.rs"),
    ];
    let Some(found) = candidates.iter().find(|p| p.exists()) else {
        panic!("module {name}: none of {candidates:?} exists");
    };
    let source = std::fs::read_to_string(found).unwrap();
    let parsed = parse_file(&source).unwrap_or_else(|e| panic!("{}: {e}", found.display()));
    walk(&name, found, &parsed.items, out);
}

/// The public surface of the crate whose root is `lib`, one line per item, sorted.
fn surface(lib: &Path) -> String {
    let source = std::fs::read_to_string(lib).unwrap();
    let parsed = parse_file(&source).unwrap();
    let mut out = Vec::new();
    walk("gangway", lib, &parsed.items, &mut out);
    out.sort();
    out.dedup();
    let mut listing = String::from(
        "# gangway's public surface, one item a line (gangway/tests/engine/public_surface.rs).\n",
    );
    for line in out {
        listing.push_str(&line);
        listing.push('\n');
    }
    listing
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_public_surface_is_the_committed_listing() {
    let listed = surface(&crate_dir().join("src/lib.rs"));
    let committed_path = crate_dir().join(LISTING);
    if std::env::var_os("GANGWAY_BLESS").is_some() {
        std::fs::write(&committed_path, &listed).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    if committed != listed {
        let old: std::collections::BTreeSet<&str> = committed.lines().collect();
        let new: std::collections::BTreeSet<&str> = listed.lines().collect();
        let mut diff = String::new();
        for gone in old.difference(&new).take(40) {
            let _ = writeln!(diff, "- {gone}");
        }
        for added in new.difference(&old).take(40) {
            let _ = writeln!(diff, "+ {added}");
        }
        panic!(
            "the public surface changed; if intended, write the listing again with \
             GANGWAY_BLESS=1 cargo test -p gangway --test engine public_surface\n{diff}"
        );
    }
}

/// The walk sees what it must: items of public modules, re-exports, inherent methods, fields and
/// variants; and leaves out private and crate-visible ones.
#[test]
fn the_walk_lists_public_items_only() {
    let dir = std::env::temp_dir().join(format!("gangway-surface-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("inner")).unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        "pub mod inner;\nmod hidden;\npub use inner::Thing;\npub(crate) fn no() {}\n\
         pub fn yes(a: u32) -> u64 { 0 }\n#[cfg(test)]\nmod tests { pub fn t() {} }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("hidden.rs"),
        "pub struct Kept;\nimpl Kept { pub fn seen(&self) {} pub(crate) fn not(&self) {} }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("inner/mod.rs"),
        "pub struct Thing { pub a: u8, b: u8 }\nimpl Thing { pub fn new() -> Self { todo!() } \
         fn private(&self) {} }\npub enum E { A, B(u8) }\n#[cfg(feature = \"x\")]\npub const C: u8 = 1;\n",
    )
    .unwrap();
    let listing = surface(&dir.join("lib.rs"));
    let _ = std::fs::remove_dir_all(&dir);
    let lines: Vec<&str> = listing.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "gangway  pub use inner::Thing",
            "gangway::[hidden]::Kept  struct",
            "gangway::[hidden]::Kept::seen  fn seen(&self)",
            "gangway::inner  mod",
            "gangway::inner::C  const: u8  #[cfg(feature = \"x\")]",
            "gangway::inner::E  enum",
            "gangway::inner::E::A",
            "gangway::inner::E::B(u8)",
            "gangway::inner::Thing  struct",
            "gangway::inner::Thing.a: u8",
            "gangway::inner::Thing::new  fn new() -> Self",
            "gangway::yes  fn yes(a: u32) -> u64",
        ]
    );
}

/// The type names of the backquoted items in `text` (`a::B`, `a::{B, C}`): those that start
/// with a capital (modules, methods and attributes left out).
fn type_names(text: &str) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    for (i, quoted) in text.split('`').enumerate() {
        if i % 2 == 0 {
            continue;
        }
        let parts: Vec<&str> = match (quoted.find('{'), quoted.find('}')) {
            (Some(open), Some(close)) => quoted[open + 1..close].split(',').collect(),
            _ => vec![quoted.rsplit("::").next().unwrap_or(quoted)],
        };
        for part in parts.into_iter().map(str::trim) {
            if part.starts_with(|c: char| c.is_ascii_uppercase()) {
                names.insert(part.to_string());
            }
        }
    }
    names
}

/// docs/stability.md's section on `#[non_exhaustive]` names exactly the engine's public types
/// that carry it (the test kit's aside), and none of those it says stay exhaustive carries it,
/// so the page a host reads cannot drift from the code.
#[test]
fn stability_md_names_the_non_exhaustive_types() {
    let page = std::fs::read_to_string(crate_dir().join("../docs/stability.md")).unwrap();
    let section = &page[page.find("## `#[non_exhaustive]`").expect("the section")..];
    let body = &section[section.find('\n').unwrap()..];
    let said_marked = type_names(&body[..body.find("For you this means").unwrap()]);
    let exhaustive = &body[body.find("Exhaustive, because").unwrap()..];
    let said_exhaustive = type_names(&exhaustive[..exhaustive.find("\n\n").unwrap()]);

    let listing = surface(&crate_dir().join("src/lib.rs"));
    let mut marked = std::collections::BTreeSet::new();
    let mut unmarked = std::collections::BTreeSet::new();
    for line in listing
        .lines()
        .filter(|l| !l.starts_with("gangway::testkit"))
    {
        let mut fields = line.split("  ");
        let (Some(path), Some(kind)) = (fields.next(), fields.next()) else {
            continue;
        };
        if !(kind.starts_with("struct") || kind.starts_with("enum")) {
            continue;
        }
        let name = path.rsplit("::").next().unwrap().to_string();
        match line.contains("#[non_exhaustive]") {
            true => marked.insert(name),
            false => unmarked.insert(name),
        };
    }
    let unsaid: Vec<&String> = marked.difference(&said_marked).collect();
    let unmarked_said: Vec<&String> = said_marked.difference(&marked).collect();
    assert!(
        unsaid.is_empty() && unmarked_said.is_empty(),
        "docs/stability.md's #[non_exhaustive] list and the code differ: \
         marked but not listed {unsaid:?}, listed but not marked {unmarked_said:?}"
    );
    let wrong: Vec<&String> = said_exhaustive.difference(&unmarked).collect();
    assert!(
        wrong.is_empty(),
        "docs/stability.md says these stay exhaustive, but they are not public exhaustive types: {wrong:?}"
    );
}

/// The only `#[doc(hidden)]` items of the surface are `policy::__private` (the module the
/// `#[plugin]` attribute's code names) and its re-export, and docs/stability.md states the rule
/// for them: implement `DerivedHooks` only through the attribute.
#[test]
fn the_only_hidden_items_are_the_macros_and_stability_md_says_so() {
    let listing = surface(&crate_dir().join("src/lib.rs"));
    let hidden: Vec<&str> = listing
        .lines()
        .filter(|l| l.contains("#[doc(hidden)]"))
        .collect();
    assert_eq!(
        hidden,
        [
            "gangway::policy  pub use hooks::__private  #[doc(hidden)]",
            "gangway::policy::[hooks]::__private  mod  #[doc(hidden)]",
        ],
        "a new #[doc(hidden)] item: say in docs/stability.md what it is for"
    );
    let page = std::fs::read_to_string(crate_dir().join("../docs/stability.md")).unwrap();
    let rule = page
        .split("\n- ")
        .find(|item| item.contains("`policy::__private`"))
        .expect("docs/stability.md names policy::__private");
    assert!(
        rule.contains("`DerivedHooks`") && rule.contains("only through the attribute"),
        "{rule}"
    );
}
