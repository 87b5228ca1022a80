//! `docs/qualification.md` explains every check `qualify` makes, by the id the report prints.

use argus_supervisor_lib::qualify::CheckId;

#[test]
fn the_qualification_doc_explains_every_check_by_its_id() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/qualification.md"
    ))
    .expect("docs/qualification.md");
    let explained = doc.split("## The report produced").next().unwrap_or("");
    for id in CheckId::ALL {
        assert!(
            explained.contains(&format!("| `{}` |", id.name())),
            "docs/qualification.md does not explain {}",
            id.name()
        );
    }
}
