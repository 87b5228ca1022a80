//! The README's refusal table is the list the binary answers with (`RefusalCode::ALL`): every code,
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
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README");
    let start = readme.find(START).expect("the table's start marker") + START.len();
    let end = start + readme[start..].find(END).expect("the table's end marker");
    if std::env::var_os("ARGUS_BLESS").is_some() {
        let fresh = format!("{}{}{}", &readme[..start], rows(), &readme[end..]);
        std::fs::write(&path, fresh).expect("write README");
        return;
    }
    assert_eq!(
        &readme[start..end],
        rows(),
        "the README's refusal table differs from RefusalCode (re-bless with ARGUS_BLESS=1)"
    );
    // Each code is documented once.
    let mut codes: Vec<&str> = RefusalCode::ALL.iter().map(|r| r.name()).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), RefusalCode::ALL.len());
}
