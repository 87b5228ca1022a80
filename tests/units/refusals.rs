//! The guide's refusal table (docs/guide.md) is the list the binary answers with (`RefusalCode::ALL`): every code,
//! its owner, what it means and the next step, in order. `ARGUS_BLESS=1` rewrites the table.

use argus_supervisor_lib::runtime::reply::{RefusalCode, RefusedBy};

const START: &str = "<!-- refusals: generated from runtime/reply.rs RefusalCode; a test compares them -->\n| code | refused by | means | next |\n| --- | --- | --- | --- |\n";
const END: &str = "<!-- /refusals -->";

fn rows() -> String {
    RefusalCode::ALL
        .iter()
        .map(|code| {
            let by = match code.by() {
                RefusedBy::Supervisor => "supervisor",
                RefusedBy::Remote => "remote",
            };
            format!(
                "| `{}` | {by} | {} | {} |\n",
                code.name(),
                code.means(),
                code.next_step()
            )
        })
        .collect()
}

#[test]
fn the_readmes_refusal_table_is_the_list_the_binary_answers_with() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide.md");
    let readme = std::fs::read_to_string(&path).expect("docs/guide.md");
    let start = readme.find(START).expect("the table's start marker") + START.len();
    let end = start + readme[start..].find(END).expect("the table's end marker");
    if std::env::var_os("ARGUS_BLESS").is_some() {
        let fresh = format!("{}{}{}", &readme[..start], rows(), &readme[end..]);
        std::fs::write(&path, fresh).expect("write the guide");
        return;
    }
    assert_eq!(
        &readme[start..end],
        rows(),
        "the guide's refusal table differs from RefusalCode (re-bless with ARGUS_BLESS=1)"
    );
    // Each code is documented once.
    let mut codes: Vec<&str> = RefusalCode::ALL.iter().map(|r| r.name()).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), RefusalCode::ALL.len());
}

const API_START: &str = "<!-- api-errors: generated from api/reply.rs ApiError; a test compares them -->\n| code | HTTP | means | next |\n| --- | --- | --- | --- |\n";
const API_END: &str = "<!-- /api-errors -->";

/// The guide's table of the API's own answers is the list the binary answers with (`ApiError::ALL`),
/// and no code is both one of those and an action's refusal: every code printed is in one table.
#[test]
fn the_guides_table_of_the_apis_own_answers_is_the_list_the_binary_answers_with() {
    use argus_supervisor_lib::api::ApiError;
    let rows: String = ApiError::ALL
        .iter()
        .map(|e| {
            format!(
                "| `{}` | {} | {} | {} |\n",
                e.name(),
                e.status().as_u16(),
                e.means(),
                e.next()
            )
        })
        .collect();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide.md");
    let guide = std::fs::read_to_string(&path).expect("docs/guide.md");
    let marker = API_START.lines().next().unwrap_or_default();
    let at = guide.find(marker).expect("the table's start marker");
    let end = at + guide[at..].find(API_END).expect("the table's end marker");
    if std::env::var_os("ARGUS_BLESS").is_some() {
        let fresh = format!("{}{API_START}{rows}{}", &guide[..at], &guide[end..]);
        std::fs::write(&path, fresh).expect("write the guide");
        return;
    }
    assert_eq!(
        &guide[at..end],
        format!("{API_START}{rows}"),
        "the guide's table differs from ApiError (re-bless with ARGUS_BLESS=1)"
    );
    for e in ApiError::ALL {
        assert!(
            RefusalCode::ALL.iter().all(|r| r.name() != e.name()),
            "{} is in both tables",
            e.name()
        );
    }
}
