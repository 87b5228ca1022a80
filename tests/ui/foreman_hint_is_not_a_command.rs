use argus_supervisor::bridges::foreman::Hint;
use argus_supervisor::runtime::OperatorCommand;

// Foreman's output can only ever be a hint: there is no way to turn it into an operator action.
fn act(hint: Hint) -> OperatorCommand {
    OperatorCommand::from(hint)
}

fn main() {}
