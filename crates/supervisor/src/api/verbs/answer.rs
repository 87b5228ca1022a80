//! `answer`: answer the campaign's pending question — the remote's by intervention (under the
//! lease), any other by keeping the text for Argus (or, with no Argus attached, in the feed).

use super::{waited, HttpReply, Message};
use crate::api::{ActionReply, ApiError};
use crate::runtime::reduce::AnswerTo;
use crate::runtime::reply::RefusalCode;
use crate::runtime::reply::{AnswerReply, Outcome};
use crate::runtime::Runtime;
use argus_machines::Verb;

/// Answer the pending question with `args`'s message, and say where it went.
pub(super) async fn apply(args: Message, rt: &Runtime) -> HttpReply {
    let answer = rt.answer(&args.id, args.message);
    waited(rt, &args.id, answer, |answered| match answered {
        AnswerReply::Intervened(reply) => {
            let mut r = HttpReply::of(Verb::Answer, &reply);
            if reply.outcome() != Outcome::Done {
                // Not accepted by the remote (yet): the operator's question is not lost.
                if let Some(body) = r.answer_mut() {
                    if let Some(m) = body.message.as_mut() {
                        *m = format!("{m}. The question stays pending.");
                        if let Some(error) = body.error.as_mut() {
                            error.message = m.clone();
                        }
                    }
                }
            }
            r
        }
        AnswerReply::Kept(to) => {
            let message = match to {
                AnswerTo::Argus => "answer: done; kept for Argus, which gets it at its next decision boundary",
                AnswerTo::Feed => "answer: done; recorded in the campaign's feed (no Argus is attached to read it)",
            };
            let answer = ActionReply {
                state: None,
                delivered_to: Some(to.name().into()),
                ..ActionReply::done(None, message.into())
            };
            HttpReply::answer(http::StatusCode::OK, answer)
        }
        AnswerReply::NotKept => HttpReply::refused_here(
            Some(Verb::Answer),
            RefusalCode::StorageFailed,
            "the answer could not be kept (the state root cannot be written); the question stays pending",
        ),
        AnswerReply::NothingPending(allowed) => {
            let mut r = HttpReply::verb_error(
                Verb::Answer,
                ApiError::NothingPending,
                "the campaign has no pending question",
            );
            // The next step is one the campaign takes now: `intervene` only where it would go.
            let next = if allowed.contains(&Verb::Intervene) {
                "`intervene` sends a message to the running task".to_string()
            } else {
                let now: Vec<&str> = allowed.iter().map(|v| v.name()).collect();
                format!(
                    "nothing here waits for an answer; what the campaign allows now: {}",
                    if now.is_empty() { "nothing".to_string() } else { now.join(", ") }
                )
            };
            if let Some(body) = r.answer_mut() {
                if let Some(m) = body.message.as_mut() {
                    if let Some(at) = m.find(". Next: ") {
                        m.truncate(at);
                    }
                    *m = format!("{m}. Next: {next}");
                }
                body.next = Some(next);
                body.allowed_actions = Some(allowed);
            }
            r
        }
    })
    .await
}
