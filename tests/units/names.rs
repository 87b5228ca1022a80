//! One name per concept (the glossary in docs/architecture.md): within each crate that ships, no
//! two types visible outside their module (`pub`, `pub(crate)`, `pub(super)`), and no two type
//! aliases (private ones too), share a name. A name that means two things is a bug: the reader of
//! one finds the other.

use super::source;
use std::collections::BTreeMap;
use syn::visit::Visit;

/// The names of the types a file declares beyond its module's privacy, with their lines.
#[derive(Default)]
struct Declared(Vec<(String, usize)>);

impl Declared {
    fn add(&mut self, vis: &syn::Visibility, name: &syn::Ident) {
        if !matches!(vis, syn::Visibility::Inherited) {
            self.0.push((name.to_string(), name.span().start().line));
        }
    }
}

impl<'a> Visit<'a> for Declared {
    fn visit_item_struct(&mut self, i: &'a syn::ItemStruct) {
        self.add(&i.vis, &i.ident);
    }
    fn visit_item_enum(&mut self, i: &'a syn::ItemEnum) {
        self.add(&i.vis, &i.ident);
    }
    fn visit_item_trait(&mut self, i: &'a syn::ItemTrait) {
        self.add(&i.vis, &i.ident);
    }
    /// An alias counts even when private: it is a name a reader meets, and two aliases of one
    /// name (`Answer<T>` in four files) are one concept spelt four times, or two concepts.
    fn visit_item_type(&mut self, i: &'a syn::ItemType) {
        self.0
            .push((i.ident.to_string(), i.ident.span().start().line));
    }
}

/// Each name declared more than once in the crate rooted at `root`, with where.
fn twice(root: &std::path::Path) -> Vec<String> {
    let mut at: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for m in source::crate_modules(root) {
        let mut d = Declared::default();
        d.visit_file(&m.file);
        for (name, line) in d.0 {
            at.entry(name)
                .or_default()
                .push(format!("{}:{line}", m.name()));
        }
    }
    at.into_iter()
        .filter(|(_, places)| places.len() > 1)
        .map(|(name, places)| format!("{name}: {}", places.join(", ")))
        .collect()
}

#[test]
fn no_two_types_of_a_shipped_crate_share_a_name() {
    let twice: Vec<String> = source::shipped_roots()
        .iter()
        .flat_map(|root| twice(root))
        .collect();
    assert!(
        twice.is_empty(),
        "one name per concept; declared twice:\n{}",
        twice.join("\n")
    );
}

#[test]
fn the_check_sees_a_second_type_of_the_same_name_and_leaves_private_ones_alone() {
    let file = source::parse(
        "pub struct Reply;\nmod a { pub(crate) enum Reply {} struct Quiet; type Answer<T> = T; }\nstruct Quiet;\ntype Answer<T> = Option<T>;\n",
    )
    .expect("parses");
    let mut d = Declared::default();
    d.visit_file(&file);
    let names: Vec<&str> = d.0.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Reply", "Reply", "Answer", "Answer"]);
}
