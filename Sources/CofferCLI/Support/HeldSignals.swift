/// Runs a change of many files with SIGINT, SIGTERM and SIGHUP held back, so that a Ctrl-C or a closed
/// terminal cannot stop it between its steps; a signal that came meanwhile takes effect when it is done.
/// Threads the change starts inherit the mask; children start with the signals unblocked, so a child
/// killed by one fails its step and the change is put back.
enum HeldSignals {
    /// Runs `body` with the signals held back.
    static func during<Result>(_ body: () throws -> Result) rethrows -> Result {
        var held = SecureTemporaryFolder.heldSignals
        var previous = sigset_t()
        sigprocmask(SIG_BLOCK, &held, &previous)
        defer { sigprocmask(SIG_SETMASK, &previous, nil) }
        return try body()
    }
}
