import CSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Process-wide protections for a program that holds secrets in memory.
public enum ProcessHardening {
    /// Disables core dumps (`RLIMIT_CORE` 0) and the runtime's crash reports and, on Linux, makes the
    /// process undumpable (`PR_SET_DUMPABLE` 0), so that a crash or a debugger cannot copy plaintext out
    /// of memory.
    public static func disableCoreDumps() {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        #if canImport(Glibc)
            setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
        #else
            setrlimit(RLIMIT_CORE, &limit)
        #endif
        _ = coffer_set_undumpable()
        // The Swift runtime's crash reporter prints registers and the memory they point to, where
        // plaintext may be, and as root it can read the process whatever PR_SET_DUMPABLE says: a crash
        // ends the process plainly instead.
        for signalNumber in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP] { signal(signalNumber, SIG_DFL) }
    }
}
