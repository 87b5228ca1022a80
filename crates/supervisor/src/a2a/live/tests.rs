use super::*;

fn track() -> Track {
    Track {
        now: Answering::Yes,
        since: None,
        failing: BTreeMap::new(),
        last_error: None,
        recovered: false,
    }
}

#[test]
fn three_alike_in_a_row_change_how_the_remote_answers_and_one_answer_ends_an_outage() {
    let mut t = track();
    let refused = Some((RemoteCondition::Unreachable, "unavailable"));
    assert_eq!(t.note("status", refused, 10, 3), None);
    assert_eq!(t.note("read_control", refused, 11, 3), None);
    assert_eq!(t.note("status", refused, 12, 3), None);
    let down = t.note("status", refused, 13, 3).expect("a change");
    assert_eq!(
        (down.to, down.since, down.failed_calls),
        (Answering::No(RemoteCondition::Unreachable), 10, 3)
    );
    assert_eq!(t.note("status", refused, 14, 3), None, "told once");
    // Any answer ends it, whatever the operation (the card read here).
    let up = t.note("card", None, 20, 3).expect("a change");
    assert_eq!(
        (up.from, up.from_since, up.to),
        (
            Answering::No(RemoteCondition::Unreachable),
            10,
            Answering::Yes
        )
    );
}

#[test]
fn the_card_read_by_anyone_never_ends_a_refusal_of_our_credentials() {
    let mut t = track();
    let refused = Some((RemoteCondition::AuthRequired, "auth_failed"));
    for at in 0..3 {
        t.note("status", refused, at, 3);
    }
    assert_eq!(t.now, Answering::No(RemoteCondition::AuthRequired));
    assert_eq!(
        t.note(CARD, None, 5, 3),
        None,
        "the card proves nothing of our token"
    );
    assert_eq!(t.now, Answering::No(RemoteCondition::AuthRequired));
    let back = t.note("read_control", None, 6, 3).expect("a change");
    assert_eq!(back.to, Answering::Yes);
    // An outage does end with the card's answer: it was reached.
    let down = Some((RemoteCondition::Unreachable, "unavailable"));
    for at in 10..13 {
        t.note("status", down, at, 3);
    }
    assert_eq!(
        t.note(CARD, None, 14, 3).map(|c| c.to),
        Some(Answering::Yes)
    );
}

#[test]
fn a_remote_said_unreachable_that_answers_with_a_refusal_is_said_to_refuse_at_once() {
    let mut t = track();
    let down = Some((RemoteCondition::Unreachable, "unavailable"));
    for at in 0..3 {
        t.note("status", down, at, 3);
    }
    assert_eq!(t.now, Answering::No(RemoteCondition::Unreachable));
    // Back, refusing a rotated token (Agent Zero's card is behind the token too): one 401
    // proves it reached, and says how it answers now.
    let refused = Some((RemoteCondition::AuthRequired, "auth_failed"));
    let change = t.note(CARD, refused, 10, 3).expect("a change");
    assert_eq!(change.to, Answering::No(RemoteCondition::AuthRequired));
    assert_eq!(t.note("status", refused, 11, 3), None, "told once");
}

#[test]
fn an_answer_after_failures_too_few_to_be_said_still_marks_a_recovery() {
    let mut t = track();
    let down = Some((RemoteCondition::Unreachable, "unavailable"));
    assert_eq!(t.note("status", down, 1, 3), None);
    assert_eq!(t.note("card", None, 2, 3), None, "nothing to tell");
    assert!(t.recovered, "but the waiting campaigns may read now");
    t.recovered = false;
    assert_eq!(t.note("status", None, 3, 3), None);
    assert!(!t.recovered, "nothing failed: nothing recovered");
}

#[test]
fn an_operations_errors_are_not_hidden_by_anothers_answers() {
    let mut t = track();
    let broken = Some((RemoteCondition::Unusable, "malformed_response"));
    for at in 0..3 {
        t.note("read_control", None, at, 3);
        t.note("status", broken, at, 3);
    }
    assert_eq!(t.now, Answering::No(RemoteCondition::Unusable));
    assert_eq!(
        t.note("read_control", None, 5, 3),
        None,
        "still failing its task reads"
    );
    let fixed = t.note("status", None, 6, 3).expect("a change");
    assert_eq!(fixed.to, Answering::Yes);
}
