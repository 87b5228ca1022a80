//! Property test of the simulated remote's lease rules, without HTTP: random interleavings of
//! claims, renewals, releases and mutations from two controllers, with clock jumps and replayed
//! request ids, never let a stale or expired epoch through. The oracle is a model built only from
//! the answers the remote gave, independent of the sim's own checks.

use argus_sim::{Scenario, World};
use argus_supervisor_lib::protocol::Constraints;
use proptest::prelude::*;
use serde_json::{json, Value};

#[derive(Debug, Clone)]
enum Op {
    Claim(usize),
    Renew(usize, Guess),
    Release(usize, Guess),
    Submit(usize, Guess),
    Advance(u64),
    ReplayLast,
}

/// Which epoch a controller sends: the one it was granted last, or a guess.
#[derive(Debug, Clone, Copy)]
enum Guess {
    Granted,
    Other(u64),
}

fn op() -> impl Strategy<Value = Op> {
    let who = 0usize..2;
    let guess = prop_oneof![3 => Just(Guess::Granted), 1 => (0u64..6).prop_map(Guess::Other)];
    prop_oneof![
        3 => who.clone().prop_map(Op::Claim),
        2 => (who.clone(), guess.clone()).prop_map(|(w, g)| Op::Renew(w, g)),
        1 => (who.clone(), guess.clone()).prop_map(|(w, g)| Op::Release(w, g)),
        4 => (who, guess).prop_map(|(w, g)| Op::Submit(w, g)),
        2 => (1u64..90_000).prop_map(Op::Advance),
        1 => Just(Op::ReplayLast),
    ]
}

/// A request as sent: method, params, actor (controller index and epoch sent), first answer if accepted.
type Request = (String, Value, Option<(usize, Option<u64>)>, Option<Value>);

const WHO: [&str; 2] = ["argus-openoperator", "loopx-local"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn no_stale_epoch_is_ever_applied(ops in proptest::collection::vec(op(), 1..80)) {
        let mut world = World::new(Scenario::load("happy").expect("scenario"));
        let mut now: u64 = 1_800_000_000_000;
        let mut granted = [0u64; 2];
        // The model: who holds which epoch until when, from the remote's own answers.
        let mut holder: Option<(usize, u64, u64)> = None;
        let mut highest = 0u64;
        let mut n = 0u64;
        // The last request, its actor, and its first answer if the remote accepted it.
        let mut last: Option<Request> = None;
        let mut tasks_seen = std::collections::BTreeSet::new();
        for op in ops {
            n += 1;
            let rid = format!("r{n}");
            let epoch = |w: usize, g: Guess| match g { Guess::Granted => granted[w], Guess::Other(e) => e };
            let (method, params, actor) = match op {
                Op::Advance(ms) => { now += ms; continue; }
                // A replay is the same actor sending the same request again. One the remote accepted
                // returns its first answer and has no second effect; a refused one is new again.
                Op::ReplayLast => match last.clone() {
                    Some((m, p, _, Some(first))) => {
                        let again = world.call(&m, &p, now);
                        prop_assert_eq!(again, Ok(first), "a replay returns the first answer");
                        continue;
                    }
                    Some((m, p, a, None)) => (m, p, a),
                    None => continue,
                },
                Op::Claim(w) => ("campaign/claim_control".to_string(), json!({"campaign_id": "c1", "controller_id": WHO[w], "ttl_seconds": 60, "request_id": rid, "constraints": Constraints::strict_json()}), Some((w, None))),
                Op::Renew(w, g) => ("campaign/renew_control".to_string(), json!({"campaign_id": "c1", "controller_id": WHO[w], "controller_epoch": epoch(w, g), "request_id": rid, "ttl_seconds": 60}), Some((w, Some(epoch(w, g))))),
                Op::Release(w, g) => ("campaign/release_control".to_string(), json!({"campaign_id": "c1", "controller_id": WHO[w], "controller_epoch": epoch(w, g), "request_id": rid}), Some((w, Some(epoch(w, g))))),
                Op::Submit(w, g) => ("message/send".to_string(), json!({"message": {"kind": "message", "role": "user", "messageId": rid, "parts": [{"kind": "text", "text": "go"}]}, "metadata": {"argus_supervisor": {"campaign_id": "c1", "controller_id": WHO[w], "controller_epoch": epoch(w, g), "request_id": rid}}}), Some((w, Some(epoch(w, g))))),
            };
            let answer = world.call(&method, &params, now);
            last = Some((method.clone(), params.clone(), actor, answer.clone().ok()));
            let Some((w, sent)) = actor else { continue };
            let valid_now = holder.is_some_and(|(h, e, exp)| h == w && Some(e) == sent && exp > now / 1000);
            match (method.as_str(), &answer) {
                ("campaign/claim_control", Ok(v)) => {
                    let l = &v["lease"];
                    let e = l["epoch"].as_u64().expect("epoch");
                    let exp = l["expires_at"].as_u64().expect("expiry");
                    prop_assert!(e >= highest, "epochs never go back");
                    if holder.is_some_and(|(h, _, hexp)| h != w && hexp > now / 1000) {
                        prop_assert!(false, "granted over a live lease of another controller");
                    }
                    if holder.is_none_or(|(h, he, _)| h != w || he != e) {
                        prop_assert!(e > highest || highest == 0, "a takeover raises the epoch");
                    }
                    highest = e;
                    granted[w] = e;
                    holder = Some((w, e, exp));
                }
                ("campaign/renew_control", Ok(v)) => {
                    prop_assert!(valid_now, "renewal accepted for a lease we do not hold: {v}");
                    let exp = v["lease"]["expires_at"].as_u64().expect("expiry");
                    holder = holder.map(|(h, e, _)| (h, e, exp));
                }
                ("campaign/release_control", Ok(_)) => {
                    prop_assert!(valid_now, "release accepted for a lease we do not hold");
                    holder = None;
                }
                ("message/send", Ok(v)) => {
                    let id = v["id"].as_str().expect("task id").to_string();
                    prop_assert!(valid_now, "a write was applied with a stale or expired epoch");
                    prop_assert!(tasks_seen.insert(id), "a new request created a task twice");
                }
                _ => {}
            }
        }
        prop_assert_eq!(world.audit().counters.stale_or_expired_accepted, 0);
    }
}

/// The supervisor-side counters can fail: a resent submit and writes the caller should have known
/// were stale (below its grant, after its release, past its expiry) are each counted, whatever
/// the remote answered; a takeover the caller was never told about is not.
#[test]
fn supervisor_side_counts_see_resent_submits_and_known_stale_writes() {
    let mut world = World::new(Scenario::load("happy").expect("scenario"));
    let now: u64 = 1_800_000_000_000;
    let claim = |w: &mut World, rid: &str, at: u64| {
        w.call(
            "campaign/claim_control",
            &json!({"campaign_id": "c1", "controller_id": WHO[0], "ttl_seconds": 60,
                    "request_id": rid, "constraints": Constraints::strict_json()}),
            at,
        )
        .expect("claim")["lease"]["epoch"]
            .as_u64()
            .expect("epoch")
    };
    let send = |w: &mut World, rid: &str, epoch: u64, at: u64| {
        let _ = w.call(
            "message/send",
            &json!({"message": {"kind": "message", "role": "user", "messageId": rid,
                                "parts": [{"kind": "text", "text": "go"}]},
                    "metadata": {"argus_supervisor": {"campaign_id": "c1", "controller_id": WHO[0],
                        "controller_epoch": epoch, "request_id": rid,
                        "constraints": Constraints::strict_json()}}}),
            at,
        );
    };
    let release = |w: &mut World, rid: &str, epoch: u64, at: u64| {
        let _ = w.call(
            "campaign/release_control",
            &json!({"campaign_id": "c1", "controller_id": WHO[0], "controller_epoch": epoch,
                    "request_id": rid, "constraints": Constraints::strict_json()}),
            at,
        );
    };
    let counters = |w: &World| w.audit().counters;
    let e1 = claim(&mut world, "claim-1", now);
    send(&mut world, "send-1", e1, now + 1_000);
    assert_eq!(counters(&world).supervisor_faults(), 0, "a clean submit");
    send(&mut world, "send-1", e1, now + 2_000);
    assert_eq!(
        counters(&world).repeated_submits,
        1,
        "the same request id sent twice"
    );
    assert_eq!(counters(&world).submits_per_request_id["send-1"], 2);
    // Past the expiry it was given (60 s), although the remote would have refused anyway.
    send(&mut world, "send-2", e1, now + 61_000);
    assert_eq!(counters(&world).known_stale_writes, 1);
    // Released, then written under the released epoch.
    let e2 = claim(&mut world, "claim-2", now + 62_000);
    release(&mut world, "rel-1", e2, now + 63_000);
    send(&mut world, "send-3", e2, now + 64_000);
    assert_eq!(counters(&world).known_stale_writes, 2);
    // Below its last grant.
    let e3 = claim(&mut world, "claim-3", now + 65_000);
    assert!(e3 > e1);
    send(&mut world, "send-4", e1, now + 66_000);
    assert_eq!(counters(&world).known_stale_writes, 3);
    // A takeover it was never told about is the remote's news, not the supervisor's fault.
    world.take_over("c1", WHO[1], now + 67_000);
    send(&mut world, "send-5", e3, now + 68_000);
    assert_eq!(counters(&world).known_stale_writes, 3);
}
