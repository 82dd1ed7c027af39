import CofferTestSupport
import Testing

/// `coffer edit` with scripted editors: no trace of the plaintext (neither its text nor a temporary file
/// named after the entry) is left in /dev/shm, `$TMPDIR`, the store or the sandbox after a successful
/// edit, after the editor fails, and after coffer gets SIGTERM while the editor runs.
@Suite("edit leaves no plaintext behind")
struct EditPlaintextTests {
    /// A store with one entry whose text is unique to the test, and coffer on `PATH`.
    struct Context {
        let sandbox: DifferentialSandbox
        /// The entry's name; the temporary file's name contains it.
        let entry: String
        /// The entry's first line.
        let plaintext: String
        /// What the editors write, from `$EDIT_TOKEN`.
        let token: String

        init() throws {
            sandbox = try DifferentialSandbox(locale: .utf8)
            try sandbox.link(try CofferBinary.path())
            let unique = String(UInt64.random(in: 1...UInt64.max), radix: 36)
            entry = "vault/plain-" + unique
            plaintext = "PLAINTEXT-" + String(UInt64.random(in: 1...UInt64.max), radix: 36)
            token = String(UInt64.random(in: 1...UInt64.max), radix: 36)
            try sandbox.runSetup(
                "pass init \"$K1\" >/dev/null\nins '\(entry)' '\(plaintext)\\nurl: https://plain.example\\n'\n"
            )
            let editors = [
                ("edit-add", #"printf 'ADDED-%s\n' "$EDIT_TOKEN" >> "$1""#),
                ("edit-change-fail", #"printf 'CHANGED-%s\n' "$EDIT_TOKEN" >> "$1"; exit 1"#),
                ("edit-fail", "exit 1"),
                ("edit-hang", #"printf '%s' "$1" > "$EDIT_READY"; exec sleep 60"#),
            ]
            for (name, script) in editors {
                try TestFiles.write("#!/bin/sh\n" + script + "\n", to: sandbox.bin + "/" + name, mode: 0o755)
            }
        }

        var readyFile: String { sandbox.directory + "/editor-ready" }

        func environment(editor: String) -> [String: String] {
            var environment = sandbox.baseEnvironment
            environment["EDITOR"] = sandbox.bin + "/" + editor
            environment["EDIT_TOKEN"] = token
            environment["EDIT_READY"] = readyFile
            return environment
        }

        func edit(with editor: String) throws -> ProcessResult {
            try TestProcess.run(
                ["coffer", "edit", entry], environment: environment(editor: editor), directory: sandbox.home,
                timeout: 30)
        }

        /// Files under /dev/shm, `$TMPDIR`, the store and the sandbox holding the plaintext or the editor's
        /// text, and files in /dev/shm or `$TMPDIR` named after the entry.
        func traces() throws -> [String] {
            let places = ["/dev/shm", sandbox.temporary, sandbox.store, sandbox.directory]
            var found: [String] = []
            for needle in [plaintext, "ADDED-" + token, "CHANGED-" + token] {
                let grep = try TestProcess.run(
                    ["grep", "-rlF", "--binary-files=text", "-D", "skip", "-e", needle] + places,
                    environment: sandbox.baseEnvironment, timeout: 60)
                found += grep.outputText.split(separator: "\n").map { "\($0) holds \(needle)" }
            }
            let leaf = String(entry.split(separator: "/").last!)
            let names = try TestProcess.run(
                ["find", "/dev/shm", sandbox.temporary, "-name", "*\(leaf)*"],
                environment: sandbox.baseEnvironment)
            found += names.outputText.split(separator: "\n").map { "\($0) is named after the entry" }
            return Array(Set(found)).sorted()
        }

        /// Starts `coffer edit` (by `program`, a name on the sandbox's `PATH` or a path) with an editor that
        /// waits, and returns coffer's pid (a process group leader) and the temporary file once the editor
        /// has it open (`nil` when it never started).
        func startWaitingEdit(program: String = "coffer") throws -> (pid: pid_t, temporaryFile: String?) {
            let pid = try TestProcess.start(
                [program, "edit", entry], environment: environment(editor: "edit-hang"),
                directory: sandbox.home)
            let deadline = TestProcess.monotonicSeconds() + 20
            while !TestFiles.exists(readyFile) && TestProcess.monotonicSeconds() < deadline {
                usleep(50_000)
            }
            usleep(100_000)
            return (pid, TestFiles.read(readyFile).map { String(decoding: $0, as: UTF8.self) })
        }

        /// Runs coffer with `arguments` (no editor involved).
        func coffer(_ arguments: [String]) throws -> ProcessResult {
            try TestProcess.run(
                ["coffer"] + arguments, environment: environment(editor: "edit-add"), directory: sandbox.home,
                timeout: 30)
        }

        /// The entry decrypted.
        func stored() throws -> String {
            try TestProcess.run(
                ["gpg", "--batch", "--quiet", "-d", sandbox.store + "/" + entry + ".gpg"],
                environment: sandbox.baseEnvironment
            ).outputText
        }
    }

    // Expectations are checked after the blocking work: issues must be recorded on the test's task.

    @Test("After a successful edit")
    func afterSuccess() async throws {
        let (result, stored, traces, context) = try await BlockingGate.shared.run {
            let context = try Context()
            let result = try context.edit(with: "edit-add")
            return (result, try context.stored(), try context.traces(), context.values)
        }
        #expect(result.status == 0, "\(result.errorText)")
        #expect(stored == "\(context.plaintext)\nurl: https://plain.example\nADDED-\(context.token)\n")
        #expect(traces == [])
    }

    @Test("After the editor fails, with and without changing the file")
    func afterEditorFails() async throws {
        for editor in ["edit-change-fail", "edit-fail"] {
            let (result, traces, stored, before) = try await BlockingGate.shared.run {
                let context = try Context()
                let before = try context.stored()
                return (try context.edit(with: editor), try context.traces(), try context.stored(), before)
            }
            #expect(!result.timedOut, "\(editor)")
            #expect(traces == [], "\(editor)")
            // What a failed editor left is not saved: one line, exit 1, the entry as it was.
            #expect(result.status == 1, "\(editor): \(result.errorText)")
            #expect(stored == before, "\(editor)")
            #expect(result.errorText.split(separator: "\n").count == 1, "\(editor): \(result.errorText)")
            if editor == "edit-change-fail" {
                #expect(result.errorText.contains("the editor exited with status 1"), "\(result.errorText)")
            }
        }
    }

    @Test("After SIGTERM to coffer while the editor runs")
    func afterTermination() async throws {
        let outcome = try await BlockingGate.shared.run { () -> TerminationOutcome in
            let context = try Context()
            let (pid, path) = try context.startWaitingEdit()
            var ended = false
            defer {
                kill(-pid, SIGKILL)
                if !ended { TestProcess.waitFor(pid) }
            }
            var outcome = TerminationOutcome()
            guard let path else { return outcome }
            outcome.editorStarted = true
            outcome.temporaryFile = path
            outcome.tracesWhileEditing = try context.traces()
            kill(pid, SIGTERM)
            let exitDeadline = TestProcess.monotonicSeconds() + 10
            while outcome.status == nil && TestProcess.monotonicSeconds() < exitDeadline {
                outcome.status = TestProcess.statusIfEnded(pid)
                if outcome.status == nil { usleep(50_000) }
            }
            ended = outcome.status != nil
            outcome.traces = try context.traces()
            outcome.temporaryFileLeft = TestFiles.exists(outcome.temporaryFile)
            outcome.stored = try context.stored()
            outcome.plaintext = context.plaintext
            return outcome
        }
        try #require(outcome.editorStarted, "the editor never ran")
        #expect(!outcome.tracesWhileEditing.isEmpty, "the scan must see the plaintext while the editor runs")
        #expect(outcome.status != nil, "coffer did not exit within 10 seconds of SIGTERM")
        #expect(!outcome.temporaryFileLeft, "\(outcome.temporaryFile) is still there")
        #expect(outcome.traces == [])
        #expect(outcome.stored == "\(outcome.plaintext)\nurl: https://plain.example\n")
    }

    @Test("After SIGKILL the next edit removes the plaintext left behind; fsck reports and removes leftovers")
    func afterKill() async throws {
        let outcome = try await BlockingGate.shared.run { () -> KillOutcome in
            let context = try Context()
            var outcome = KillOutcome()
            let (pid, path) = try context.startWaitingEdit()
            kill(-pid, SIGKILL)
            TestProcess.waitFor(pid)
            guard let path else { return outcome }
            let folder = String(path[..<path.lastIndex(of: "/")!])
            outcome.leftBehind = TestFiles.exists(path)
            // Folders younger than two seconds are left alone (one may be in the making). Any coffer edit
            // removes the folder from then on: this one, or one that another test runs meanwhile.
            sleep(3)
            outcome.editStatus = try context.edit(with: "edit-add").status
            outcome.removedByEdit = !TestFiles.exists(folder)

            // fsck, over a leftover in $TMPDIR (where no other test's edit looks).
            let leftover = context.sandbox.temporary + "/coffer.ABCDEFGHIJKLM"
            mkdir(leftover, 0o700)
            try TestFiles.write(context.plaintext + "\n", to: leftover + "/x.txt", mode: 0o600)
            var old = [
                timeval(tv_sec: time(nil) - 60, tv_usec: 0), timeval(tv_sec: time(nil) - 60, tv_usec: 0),
            ]
            utimes(leftover, &old)
            let report = try context.coffer(["fsck"])
            outcome.reportStatus = report.status
            outcome.reported = report.outputText.contains(
                "\(leftover): plaintext left by an interrupted edit")
            outcome.keptByReport = TestFiles.exists(leftover + "/x.txt")
            let fixed = try context.coffer(["fsck", "--fix"])
            outcome.fixedStatus = fixed.status
            outcome.fixed = fixed.outputText.contains(
                "\(leftover): plaintext left by an interrupted edit (fixed)")
            outcome.removedByFix = !TestFiles.exists(leftover)
            outcome.traces = try context.traces()
            return outcome
        }
        #expect(outcome.leftBehind, "SIGKILL cannot be caught: the file must be there to find")
        #expect(outcome.editStatus == 0 && outcome.removedByEdit)
        #expect(outcome.reportStatus == 1 && outcome.reported && outcome.keptByReport)
        #expect(outcome.fixedStatus == 0 && outcome.fixed && outcome.removedByFix)
        #expect(outcome.traces == [])
    }

    @Test("After SIGKILL of coffer installed as pass, fsck finds its folder and never touches pass's own")
    func afterKillWhenInstalledAsPass() async throws {
        let outcome = try await BlockingGate.shared.run { () -> KillOutcome in
            let context = try Context()
            var outcome = KillOutcome()
            let installed = context.sandbox.directory + "/installed"
            mkdir(installed, 0o755)
            guard symlink(try CofferBinary.path(), installed + "/pass") == 0 else { return outcome }
            // A folder of the real pass's edit in progress: private, unlocked, without coffer's mark.
            let passFolder =
                "/dev/shm/pass." + String((0..<13).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
            mkdir(passFolder, 0o700)
            defer {
                _ = try? TestProcess.run(
                    ["rm", "-rf", passFolder], environment: context.sandbox.baseEnvironment)
            }
            try TestFiles.write("being edited by pass\n", to: passFolder + "/entry.txt", mode: 0o600)
            let (pid, path) = try context.startWaitingEdit(program: installed + "/pass")
            kill(-pid, SIGKILL)
            TestProcess.waitFor(pid)
            guard let path else { return outcome }
            let folder = String(path[..<path.lastIndex(of: "/")!])
            outcome.leftBehind =
                TestFiles.exists(path) && folder.hasPrefix("/dev/shm/pass.")
                && TestFiles.exists(folder + "/.coffer-tmpdir")
            // fsck looks at $TMPDIR too, where no other test's edit sweeps: the killed folder, moved there
            // as it was, is found by its mark whatever its name; a folder of pass's without it is not.
            let moved = context.sandbox.temporary + "/" + String(folder.split(separator: "/").last!)
            let unmarked =
                context.sandbox.temporary + "/pass."
                + String((0..<13).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
            try TestProcess.check(["mv", folder, moved], environment: context.sandbox.baseEnvironment)
            mkdir(unmarked, 0o700)
            try TestFiles.write("being edited by pass\n", to: unmarked + "/entry.txt", mode: 0o600)
            var old = [
                timeval(tv_sec: time(nil) - 60, tv_usec: 0), timeval(tv_sec: time(nil) - 60, tv_usec: 0),
            ]
            for backdated in [moved, unmarked, passFolder] { utimes(backdated, &old) }
            let report = try context.coffer(["fsck"])
            outcome.reportStatus = report.status
            outcome.reported = report.outputText.contains("\(moved): plaintext left by an interrupted edit")
            outcome.keptByReport = TestFiles.exists(moved)
            let fixed = try context.coffer(["fsck", "--fix"])
            outcome.fixedStatus = fixed.status
            outcome.fixed = fixed.outputText.contains(
                "\(moved): plaintext left by an interrupted edit (fixed)")
            outcome.removedByFix = !TestFiles.exists(moved)
            // pass's own folders are neither reported nor removed, by fsck or by other tests' edits.
            outcome.passFolderUntouched =
                TestFiles.exists(passFolder + "/entry.txt") && TestFiles.exists(unmarked + "/entry.txt")
                && ![passFolder, unmarked].contains { (report.outputText + fixed.outputText).contains($0) }
            outcome.traces = try context.traces()
            return outcome
        }
        #expect(outcome.leftBehind, "SIGKILL cannot be caught: the folder must be there to find")
        #expect(outcome.reportStatus == 1 && outcome.reported && outcome.keptByReport)
        #expect(outcome.fixedStatus == 0 && outcome.fixed && outcome.removedByFix)
        #expect(outcome.passFolderUntouched, "pass's own folder was touched")
        #expect(outcome.traces == [])
    }

    /// What the SIGKILL test saw.
    struct KillOutcome: Sendable {
        var leftBehind = false
        var editStatus: Int32 = -1
        var removedByEdit = false
        var reportStatus: Int32 = -1
        var reported = false
        var keptByReport = false
        var fixedStatus: Int32 = -1
        var fixed = false
        var removedByFix = false
        var passFolderUntouched = false
        var traces: [String] = []
    }

    /// What the SIGTERM test saw.
    struct TerminationOutcome: Sendable {
        var editorStarted = false
        var temporaryFile = ""
        var tracesWhileEditing: [String] = []
        var status: Int32?
        var traces: [String] = []
        var temporaryFileLeft = false
        var stored = ""
        var plaintext = ""
    }
}

extension EditPlaintextTests.Context {
    /// The values a test compares with, without the sandbox.
    var values: (plaintext: String, token: String) { (plaintext, token) }
}
