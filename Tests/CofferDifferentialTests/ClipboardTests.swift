import CofferTestSupport
import Testing

/// `coffer show -c` and `generate -c` with a real X server (Xvfb) and xclip: what is copied, that the
/// previous clipboard comes back after `PASSWORD_STORE_CLIP_TIME`, and that it does not when something
/// else was copied meanwhile.
@Suite("Clipboard under Xvfb")
struct ClipboardTests {
    /// An Xvfb server on a display number it picked itself (`-displayfd`); stopped when released.
    /// `-noreset` keeps it from resetting when its last client leaves: a client that comes during a
    /// reset is turned away ("Can't open display"), and coffer runs xclip several times in a row.
    final class VirtualDisplay {
        let pid: pid_t
        let name: String

        init() throws {
            let started = try TestProcess.startWithOutputPipe(
                [
                    "Xvfb", "-displayfd", "1", "-nolisten", "tcp", "-noreset", "-screen", "0",
                    "320x240x24",
                ],
                environment: ["PATH": "/usr/bin:/bin"])
            defer { close(started.output) }
            guard let number = TestProcess.readLine(started.output, timeout: 20), !number.isEmpty else {
                TestProcess.stop(started.pid, signal: SIGKILL)
                throw TestProcess.Failure(description: "Xvfb did not report its display")
            }
            pid = started.pid
            name = ":" + number
            try waitUntilOpen()
        }

        /// Waits until a client can open the display. Xvfb reports its number as soon as it listens, and a
        /// client that comes while it still starts up may be turned away ("Can't open display").
        private func waitUntilOpen() throws {
            let deadline = TestProcess.monotonicSeconds() + 20
            while true {
                let probe = try TestProcess.run(
                    ["xclip", "-o", "-selection", "clipboard"],
                    environment: ["PATH": "/usr/bin:/bin", "DISPLAY": name], timeout: 10)
                // A probe that timed out (a loaded machine) proves nothing: it is tried again.
                if !probe.timedOut && !probe.errorText.contains("Can't open display") { return }
                if TestProcess.monotonicSeconds() > deadline {
                    // The deinitializer stops the server: every stored property is set.
                    throw TestProcess.Failure(description: "Xvfb on \(name) accepts no client")
                }
                usleep(100_000)
            }
        }

        deinit { TestProcess.stop(pid) }
    }

    /// A store with `bank` (two lines), an X display and coffer; when released, it stops what the coffer
    /// runs left behind (clipboard helpers, the restoring process) and the display.
    final class Context {
        let sandbox: DifferentialSandbox
        let display: VirtualDisplay
        private var groups: [pid_t] = []

        init() throws {
            sandbox = try DifferentialSandbox(locale: .utf8)
            try sandbox.link(try CofferBinary.path())
            try sandbox.runSetup(DifferentialTable.basic)
            display = try VirtualDisplay()
        }

        deinit {
            for group in groups { kill(-group, SIGKILL) }
        }

        func environment(_ extra: [String: String] = [:]) -> [String: String] {
            var environment = sandbox.baseEnvironment
            environment["DISPLAY"] = display.name
            environment["PASSWORD_STORE_CLIP_TIME"] = "3"
            for (name, value) in extra { environment[name] = value }
            return environment
        }

        /// Runs coffer with its output in files: the clipboard helpers it leaves running may keep its
        /// descriptors, and only coffer's own exit counts.
        func coffer(_ arguments: [String], environment extra: [String: String] = [:]) throws -> ProcessResult
        {
            let base = sandbox.directory + "/clip-output"
            var result = try TestProcess.run(
                ["sh", "-c", #"exec "$@" >"$0.out" 2>"$0.err""#, base, "coffer"] + arguments,
                environment: environment(extra), directory: sandbox.home, timeout: 20)
            groups.append(result.processGroup)
            result.standardOutput = TestFiles.read(base + ".out") ?? []
            result.standardError = TestFiles.read(base + ".err") ?? []
            return result
        }

        /// The selection's text, or `nil` when it holds none.
        func selection(_ name: String = "clipboard") throws -> String? {
            let result = try TestProcess.run(
                ["xclip", "-o", "-selection", name], environment: environment(), timeout: 10)
            return result.status == 0 ? result.outputText : nil
        }

        /// Puts text on a selection the way another program would, and waits until the selection holds
        /// it (xclip's server takes the selection after the command has returned).
        func copy(_ text: String, to name: String = "clipboard") throws {
            try TestProcess.check(
                ["sh", "-c", #"xclip -selection "$0" >/dev/null 2>&1"#, name], environment: environment(),
                input: Array(text.utf8), timeout: 10)
            let deadline = TestProcess.monotonicSeconds() + 5
            while try selection(name) != text && TestProcess.monotonicSeconds() < deadline { usleep(50_000) }
        }

        /// Waits until the selection holds `text` (or the time is up) and returns what it last held.
        func waitForSelection(_ text: String, seconds: Double) throws -> String? {
            let deadline = TestProcess.monotonicSeconds() + seconds
            var current = try selection()
            while current != text && TestProcess.monotonicSeconds() < deadline {
                usleep(100_000)
                current = try selection()
            }
            return current
        }
    }

    // Expectations are checked after the blocking work: issues must be recorded on the test's task.

    @Test("show -c copies the first line and says so, without waiting for the timeout")
    func copiesFirstLine() async throws {
        let (result, seconds, copied) = try await BlockingGate.shared.run {
            let context = try Context()
            let started = TestProcess.monotonicSeconds()
            let result = try context.coffer(["show", "-c", "bank"])
            let seconds = TestProcess.monotonicSeconds() - started
            return (result, seconds, try context.selection())
        }
        #expect(result.status == 0, "\(result.errorText)")
        #expect(!result.timedOut)
        #expect(seconds < 2.9, "show -c must not wait for the timeout")
        #expect(result.outputText == "Copied bank to clipboard. Will clear in 3 seconds.\n")
        #expect(result.errorText == "")
        #expect(copied == "bank-password")
    }

    @Test("An extension's clip copies its text (handed to coffer on a pipe) and says so as pass does")
    func extensionClip() async throws {
        let (result, copied, passOutput) = try await BlockingGate.shared.run {
            let context = try Context()
            let folder = context.sandbox.store + "/.extensions"
            mkdir(folder, 0o700)
            try TestFiles.write(
                "secret=\"$($GPG -d \"${GPG_OPTS[@]}\" \"$PREFIX/$1.gpg\" | tail -n 1)\"\nclip \"$secret\" \"$1\"\n",
                to: folder + "/lastline.bash", mode: 0o755)
            let enabled = ["PASSWORD_STORE_ENABLE_EXTENSIONS": "true"]
            let result = try context.coffer(["lastline", "bank"], environment: enabled)
            let copied = try context.selection()
            let pass = try TestProcess.run(
                ["/usr/bin/pass", "lastline", "bank"], environment: context.environment(enabled),
                directory: context.sandbox.home, timeout: 20)
            return (result, copied, pass.outputText)
        }
        #expect(result.status == 0, "\(result.errorText)")
        #expect(copied == "pin: 1234")
        #expect(result.outputText == "Copied bank to clipboard. Will clear in 3 seconds.\n")
        #expect(result.outputText == passOutput)
    }

    @Test("show -c2 copies the second line to PASSWORD_STORE_X_SELECTION")
    func copiesChosenLineToPrimary() async throws {
        let (result, primary) = try await BlockingGate.shared.run {
            let context = try Context()
            let result = try context.coffer(
                ["show", "--clip=2", "bank"], environment: ["PASSWORD_STORE_X_SELECTION": "primary"])
            return (result, try context.selection("primary"))
        }
        #expect(result.status == 0, "\(result.errorText)")
        #expect(primary == "pin: 1234")
    }

    @Test("The previous clipboard comes back after PASSWORD_STORE_CLIP_TIME, not before")
    func restoresPreviousClipboard() async throws {
        let observed = try await BlockingGate.shared.run { () -> [String: String] in
            let context = try Context()
            try context.copy("what was there before")
            var observed = ["before": try context.selection() ?? "<none>"]
            let started = TestProcess.monotonicSeconds()
            let result = try context.coffer(
                ["show", "-c", "email/work"], environment: ["PASSWORD_STORE_CLIP_TIME": "6"])
            observed["status"] = "\(result.status) \(result.errorText)"
            observed["right after"] = try context.selection() ?? "<none>"
            usleep(UInt32(max(0, started + 2 - TestProcess.monotonicSeconds()) * 1_000_000))
            observed["after 2 of 6 seconds"] = try context.selection() ?? "<none>"
            observed["at the end"] =
                try context.waitForSelection("what was there before", seconds: 15) ?? "<none>"
            let seconds = TestProcess.monotonicSeconds() - started
            observed["restored after"] = seconds >= 5.5 ? "at least 5.5 seconds" : "\(seconds) seconds"
            return observed
        }
        #expect(observed["before"] == "what was there before")
        #expect(observed["status"] == "0 ")
        #expect(observed["right after"] == "work-password")
        #expect(observed["after 2 of 6 seconds"] == "work-password", "restored too early")
        #expect(observed["at the end"] == "what was there before")
        #expect(observed["restored after"] == "at least 5.5 seconds")
    }

    @Test("Nothing is restored when something else was copied meanwhile")
    func keepsWhatWasCopiedMeanwhile() async throws {
        let (result, during, after) = try await BlockingGate.shared.run {
            let context = try Context()
            try context.copy("what was there before")
            let result = try context.coffer(["show", "-c", "bank"])
            let during = try context.selection()
            try context.copy("copied meanwhile")
            usleep(5_500_000)
            return (result, during, try context.selection())
        }
        #expect(result.status == 0, "\(result.errorText)")
        #expect(during == "bank-password")
        #expect(after == "copied meanwhile")
    }

    @Test("generate -c copies the new password, which is what the store holds")
    func generateCopies() async throws {
        let (result, copied, stored) = try await BlockingGate.shared.run {
            let context = try Context()
            let result = try context.coffer(["generate", "-c", "fresh", "16"])
            let copied = try context.selection()
            let stored = try TestProcess.run(
                ["gpg", "--batch", "--quiet", "-d", context.sandbox.store + "/fresh.gpg"],
                environment: context.sandbox.baseEnvironment)
            return (result, copied, stored.outputText)
        }
        #expect(result.status == 0, "\(result.errorText)")
        #expect(result.outputText == "Copied fresh to clipboard. Will clear in 3 seconds.\n")
        #expect(copied?.count == 16)
        #expect(stored == (copied ?? "") + "\n")
    }
}
