fn main() -> std::process::ExitCode {
    match noisetop::cmd::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("noisetop: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
