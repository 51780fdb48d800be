//! The `#[plugin]` attribute of gangway (re-exported as `gangway::policy::plugin`): on an
//! `impl Plugin for T` block, it derives the plug-in's hooks from the hook methods the block
//! defines, so that what a plug-in declares cannot disagree with what it implements. The
//! engine calls a plug-in's hooks and no other; gangway's documentation has the examples.

use proc_macro::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl, parse_macro_input};

/// The hook methods of `gangway::policy::Plugin` and the hook each one implements, in the
/// order of `gangway::policy::Hook` (gangway's tests check the two agree).
const HOOK_METHODS: [(&str, &str); 12] = [
    ("prepare", "Prepare"),
    ("admit", "Admission"),
    ("order_key", "Order"),
    ("filter_node", "NodeFilter"),
    ("score_node", "NodeScore"),
    ("choose_devices", "DeviceChoice"),
    ("score_domain", "DomainScore"),
    ("veto_victim", "VictimVeto"),
    ("victim_key", "VictimOrder"),
    ("may_backfill", "Backfill"),
    ("wake_up", "WakeUp"),
    ("observe", "Observe"),
];

/// Derives a plug-in's hooks from the hook methods its `impl Plugin for T` block defines (one
/// hook per method: `order_key` is the `order` hook, `score_node` the `node_score` hook, ...).
/// The block is left as written; a `fn hooks` in it, or an `explain_key` without the
/// `order_key` it explains, is a compile error.
///
/// Use it as `#[gangway::policy::plugin]` (gangway's documentation has the examples).
#[proc_macro_attribute]
pub fn plugin(args: TokenStream, input: TokenStream) -> TokenStream {
    if !args.is_empty() {
        let args = proc_macro2::TokenStream::from(args);
        return syn::Error::new(args.span(), "#[plugin] takes no arguments")
            .to_compile_error()
            .into();
    }
    let mut item = parse_macro_input!(input as ItemImpl);
    if item.trait_.is_none() {
        let message = "#[plugin] goes on an `impl Plugin for T` block";
        return syn::Error::new(item.self_ty.span(), message)
            .to_compile_error()
            .into();
    }
    // The hooks are derived even when the block has a mistake, and a `fn hooks` is dropped,
    // so that the mistake is the only error reported.
    let mistake = mistake(&item).map(|e| e.to_compile_error());
    item.items
        .retain(|i| !matches!(i, ImplItem::Fn(f) if f.sig.ident == "hooks"));
    let derived = derive(&item);
    quote!(#item #derived #mistake).into()
}

/// The names of the methods the block defines.
fn defined(item: &ItemImpl) -> Vec<&syn::Ident> {
    item.items
        .iter()
        .filter_map(|item| match item {
            ImplItem::Fn(f) => Some(&f.sig.ident),
            _ => None,
        })
        .collect()
}

/// A `fn hooks`, or an `explain_key` without `order_key`.
fn mistake(item: &ItemImpl) -> Option<syn::Error> {
    let defined = defined(item);
    if let Some(hooks) = defined.iter().find(|ident| **ident == "hooks") {
        return Some(syn::Error::new(
            hooks.span(),
            "a plug-in's hooks are derived from the hook methods this impl defines: remove `fn hooks`",
        ));
    }
    let explain = defined.iter().find(|ident| **ident == "explain_key")?;
    (!defined.iter().any(|ident| *ident == "order_key")).then(|| {
        syn::Error::new(
            explain.span(),
            "`explain_key` explains the key of `order_key`: define `order_key` too",
        )
    })
}

/// The `DerivedHooks` impl: one hook per hook method the block defines, in `Hook`'s order.
fn derive(item: &ItemImpl) -> proc_macro2::TokenStream {
    let defined = defined(item);
    let has = |name: &str| defined.iter().any(|ident| *ident == name);
    let hooks = HOOK_METHODS
        .iter()
        .filter(|(method, _)| has(method))
        .map(|(_, hook)| format_ident!("{hook}"));
    let (generics, _, where_clause) = item.generics.split_for_impl();
    let self_ty = &item.self_ty;
    quote! {
        impl #generics ::gangway::policy::__private::DerivedHooks for #self_ty #where_clause {
            fn derived_hooks(&self) -> &[::gangway::policy::Hook] {
                &[#(::gangway::policy::Hook::#hooks),*]
            }
        }
    }
}
