#if canImport(CSDBus)
    import CSDBus

    #if canImport(Glibc)
        import Glibc
    #endif

    /// SIGTERM, SIGINT and SIGHUP (`systemctl --user stop`, a logout, Ctrl-C), held back and read from a
    /// descriptor, so that the provider stops between calls: a write and its commit in progress finish (or
    /// are undone when git is stopped too) and are answered before it exits.
    ///
    /// The signals are blocked in the calling thread before the provider starts any other thread, so
    /// threads started later (the index's decrypting workers) block them too; programs it runs start with
    /// them unblocked. A signal the provider was started with ignored (`nohup`) stays ignored.
    final class StopSignals {
        /// The signalfd to poll, `nil` when none could be made (then the signals act as before).
        let descriptor: Int32?

        /// Blocks the signals and opens the descriptor that reads them.
        init() {
            var set = sigset_t()
            sigemptyset(&set)
            for number in [SIGTERM, SIGINT, SIGHUP] {
                var current = sigaction()
                if sigaction(number, nil, &current) == 0,
                    let handler = current.__sigaction_handler.sa_handler,
                    unsafeBitCast(handler, to: Int.self) == 1
                {
                    continue
                }
                sigaddset(&set, number)
            }
            let made = signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC))
            if made >= 0 {
                pthread_sigmask(SIG_BLOCK, &set, nil)
                descriptor = made
            } else {
                descriptor = nil
            }
        }

        deinit {
            if let descriptor { close(descriptor) }
        }

        /// The first of the signals received since the last call, `nil` when none.
        func received() -> Int32? {
            guard let descriptor else { return nil }
            var first: Int32?
            var info = signalfd_siginfo()
            while read(descriptor, &info, MemoryLayout<signalfd_siginfo>.size)
                == MemoryLayout<signalfd_siginfo>.size
            {
                if first == nil { first = Int32(info.ssi_signo) }
            }
            return first
        }
    }
#endif
