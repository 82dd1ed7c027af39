import Coffer

/// The CLI's side of the library's ``PlaintextFolder``: pass's warning before it falls back to
/// `$TMPDIR`, and the signals.
///
/// While the folder exists, SIGINT, SIGTERM, SIGHUP and the other signals that would end the process are
/// held back (children start with them unblocked and at their defaults) and handled by ``wait(for:)`` and
/// ``finish()``, which remove the folder before a signal ends the process, so the folder is removed on
/// every way out but SIGKILL.
final class SecureTemporaryFolder {
    /// The folder.
    private let folder: PlaintextFolder
    /// The folder's path.
    var path: String { folder.path }
    private var oldMask = sigset_t()
    private var finished = false
    private var deferredSignal: Int32 = 0

    /// The signals held back while plaintext is on disk.
    static var heldSignals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        // Every signal whose default ends the process, so that none leaves the plaintext behind.
        for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGPOLL]
        {
            sigaddset(&set, signalNumber)
        }
        return set
    }

    /// Makes the folder; with `warn`, asks before falling back to `$TMPDIR` as pass does.
    init(program: String, environment: [String: String], warn: Bool) throws {
        var held = Self.heldSignals
        sigprocmask(SIG_BLOCK, &held, &oldMask)
        if !PlaintextFolder.sharedMemoryUsable && warn {
            do {
                try Terminal.confirm(
                    """
                    Your system does not have /dev/shm, which means that it may
                    be difficult to entirely erase the temporary non-encrypted
                    password file after editing.

                    Are you sure you would like to continue?
                    """)
            } catch {
                sigprocmask(SIG_SETMASK, &oldMask, nil)
                throw error
            }
        }
        do {
            folder = try PlaintextFolder(
                program: program, parent: PlaintextFolder.parent(environment: environment))
        } catch {
            sigprocmask(SIG_SETMASK, &oldMask, nil)
            throw Exit.die(
                "mktemp: failed to create directory via template '\(error.template)': "
                    + String(cString: strerror(error.errno)))
        }
    }

    deinit { finish() }

    /// Waits for a child (the editor, git) while holding the folder.
    ///
    /// SIGTERM, SIGHUP and the other signals that would end the process are passed on to the child, then
    /// the folder is removed and this process ends by the same signal at once. A SIGINT is taken as the
    /// user's Ctrl-C, which reached the child too: it ends this process (after the folder is removed)
    /// only if it ended the child.
    ///
    /// - Returns: the child's exit status, or 128 + the signal that ended it.
    @discardableResult
    func wait(for pid: pid_t) -> Int32 {
        var waitSet = Self.heldSignals
        sigaddset(&waitSet, SIGCHLD)
        var previous = sigset_t()
        sigprocmask(SIG_BLOCK, &waitSet, &previous)
        defer { sigprocmask(SIG_SETMASK, &previous, nil) }
        var sawInterrupt = false
        while true {
            if let ended = ChildProcess.status(ifEnded: pid) {
                let code = ended.code
                if sawInterrupt && code == 128 + SIGINT { deferredSignal = SIGINT }
                return code
            }
            var timeout = timespec(tv_sec: 1, tv_nsec: 0)
            let received = sigtimedwait(&waitSet, nil, &timeout)
            if received > 0 && received != SIGINT && received != SIGCHLD {
                kill(pid, received)
                deferredSignal = received
                finish()
            } else if received == SIGINT {
                sawInterrupt = true
            }
        }
    }

    /// Whether a signal has ended the child and must end this process once the folder is gone.
    var mustStop: Bool { deferredSignal != 0 }

    /// Removes the folder, then restores the signal mask, so that a signal held meanwhile takes effect;
    /// a signal that ended the child ends this process too.
    func finish() {
        guard !finished else { return }
        finished = true
        folder.remove()
        sigprocmask(SIG_SETMASK, &oldMask, nil)
        if deferredSignal != 0 {
            signal(deferredSignal, SIG_DFL)
            raise(deferredSignal)
        }
    }
}
