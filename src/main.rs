fn main() -> std::process::ExitCode {
    match noisetop::cmd::run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("noisetop: {e:#}");
            if e.downcast_ref::<noisetop::cmd::UsageError>().is_some() {
                std::process::ExitCode::from(2)
            } else {
                std::process::ExitCode::FAILURE
            }
        }
    }
}
