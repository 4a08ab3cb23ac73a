fn main() -> std::process::ExitCode {
    // `run`'s trampoline, before anything else: it only pins and execs
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args
        .first()
        .is_some_and(|a| a == noisetop::os::sys::EXEC_PINNED)
    {
        return std::process::ExitCode::from(noisetop::os::sys::exec_pinned(&args[1..]));
    }
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
