use argus_supervisor_lib::bridges::foreman::Hint;
use argus_supervisor_lib::runtime::OperatorCommand;

// Foreman's output can only ever be a hint: there is no way to turn it into an operator action.
fn act(hint: Hint) -> OperatorCommand {
    OperatorCommand::from(hint)
}

fn main() {}
