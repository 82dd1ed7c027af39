import Coffer

/// A throwaway `HOME` and `GNUPGHOME` with test keys, for tests that run real gpg, gpg-agent, git and pass.
///
/// Keys (ed25519 signing, cv25519 encryption, no passphrase) are generated once per test process into
/// a template keyring and copied into each sandbox. The sandbox stops its gpg-agent and deletes its
/// folder when it is released.
package final class GPGSandbox: @unchecked Sendable {
    /// A key generated for the tests.
    package struct TestKey: Sendable {
        /// The primary key's fingerprint.
        package let fingerprint: String
        /// The user id's e-mail address.
        package let email: String
    }

    /// The sandbox folder; everything else is inside it.
    package let directory: String
    /// `HOME`.
    package let home: String
    /// `GNUPGHOME`.
    package let gnupgHome: String
    /// `PASSWORD_STORE_DIR` (not created).
    package let storeDirectory: String
    /// Three keys: `keys[0]` is the usual recipient.
    package let keys: [TestKey]

    /// Creates a sandbox with a copy of the test keyring.
    package init() throws {
        let template = try KeyringTemplate.shared.get()
        var buffer = Array("/tmp/coffer-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&buffer) else { throw SandboxError("mkdtemp failed") }
        directory = String(cString: made)
        home = directory + "/home"
        gnupgHome = directory + "/gnupg"
        storeDirectory = home + "/.password-store"
        keys = template.keys
        mkdir(home, 0o700)
        try Self.check(["cp", "-a", template.directory, gnupgHome], environment: nil)
        let config =
            "[user]\n\tname = Coffer Test\n\temail = test@coffer.test\n[init]\n\tdefaultBranch = main\n"
        try config.write(toFile: home + "/.gitconfig")
    }

    /// Stops the agent and removes the sandbox, which `COFFER_TEST_KEEP=1` keeps, to look into a failure.
    deinit {
        _ = try? ChildProcess(["gpgconf", "--kill", "all"], environment: environmentList).run()
        if getenv("COFFER_TEST_KEEP") == nil { _ = try? ChildProcess(["rm", "-rf", directory]).run() }
    }

    /// The environment for programs run in the sandbox.
    package var environment: [String: String] {
        [
            "HOME": home, "GNUPGHOME": gnupgHome, "PASSWORD_STORE_DIR": storeDirectory,
            "PATH": environmentValue("PATH") ?? "/usr/local/bin:/usr/bin:/bin",
            "LC_ALL": "C.UTF-8", "TZ": "UTC", "GIT_CONFIG_NOSYSTEM": "1", "EDITOR": "false",
        ]
    }

    /// ``environment`` as `NAME=value` strings.
    package var environmentList: [String] { environment.map { "\($0.key)=\($0.value)" }.sorted() }

    /// A store over the sandbox's store folder and keyring.
    package func store(root: String? = nil, environment extra: [String: String] = [:]) -> PasswordStore {
        var variables = environment
        for (name, value) in extra { variables[name] = value }
        var configuration = StoreConfiguration(environment: variables)
        if let root { configuration.root = root }
        configuration.gpgOptions.homeDirectory = gnupgHome
        return PasswordStore(configuration: configuration)
    }

    /// A new sandbox and its store, initialized for the first test key (and, with a commit message, made a
    /// git repository with everything committed): where most store tests start.
    package static func withStore(committing message: String? = nil) throws -> SandboxAndStore {
        let sandbox = try GPGSandbox()
        let store = sandbox.store()
        try store.initialize(recipients: [sandbox.keys[0].email])
        if let message { try sandbox.commitEverything(in: store.root, message: message) }
        return (sandbox, store)
    }

    /// A GPGME engine over the sandbox's keyring.
    package var engine: GPGMEEngine { GPGMEEngine(options: GPGOptions(homeDirectory: gnupgHome)) }

    /// Runs a program in the sandbox environment (plus `extra`).
    @discardableResult
    package func run(
        _ arguments: [String], input: [UInt8] = [], environment extra: [String: String] = [:]
    ) throws -> ChildProcess.Output {
        var variables = environment
        for (name, value) in extra { variables[name] = value }
        return try ChildProcess(arguments, environment: variables.map { "\($0.key)=\($0.value)" }).run(
            input: input)
    }

    /// Runs a program and throws when it fails.
    @discardableResult
    package func check(
        _ arguments: [String], input: [UInt8] = [], environment extra: [String: String] = [:]
    ) throws -> ChildProcess.Output {
        let output = try run(arguments, input: input, environment: extra)
        guard output.status == 0 else {
            throw SandboxError(
                "\(arguments.joined(separator: " ")) failed (\(output.status)): \(output.errorText)")
        }
        return output
    }

    static func check(_ arguments: [String], environment: [String]?) throws {
        let output = try ChildProcess(arguments, environment: environment).run()
        guard output.status == 0 else {
            throw SandboxError("\(arguments.joined(separator: " ")) failed: \(output.errorText)")
        }
    }

    /// Makes `folder` a git work tree with everything in it committed as `message`.
    package func commitEverything(in folder: String, message: String = "start") throws {
        try check(["git", "-C", folder, "init", "-q"])
        try check(["git", "-C", folder, "add", "-A"])
        try check(["git", "-C", folder, "commit", "-qm", message])
    }

    /// Makes wrappers for `programs` in the sandbox's `wrappers` folder: each appends a line
    /// `argv: [program] [argument]...` and then its environment to `log`, and runs the real program.
    /// Returns a `PATH` that finds the wrappers first.
    package func loggingWrappers(for programs: [String], log: String) throws -> String {
        let wrappers = directory + "/wrappers"
        var script = "dir=$0 log=$1; shift; mkdir -p \"$dir\" || exit 1; for p in \"$@\"; do "
        script += "real=$(command -v \"$p\") || exit 1; "
        script +=
            "printf '#!/bin/sh\\n{ printf \"argv:\"; for a in \"$0\" \"$@\"; do printf \" [%%s]\" \"$a\"; done; "
        script += "echo; env; } >> %s\\nexec %s \"$@\"\\n' \"$log\" \"$real\" > \"$dir/$p\" || exit 1; "
        script += "chmod +x \"$dir/$p\"; done"
        try check(["sh", "-c", script, wrappers, log] + programs)
        return wrappers + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    }

    /// Reads a file of the sandbox.
    package func read(_ path: String) throws -> [UInt8] {
        try check(["cat", path]).standardOutput
    }
}

/// A failure of the test scaffolding itself.
package struct SandboxError: Error, CustomStringConvertible {
    /// What failed.
    package let description: String
    /// Creates an error.
    package init(_ description: String) { self.description = description }
}

extension ChildProcess.Output {
    /// This output when the program exited 0; else a ``SandboxError`` that says `command` exited with its
    /// status, and what it wrote on standard error.
    package func exitedZero(_ command: String) throws -> Self {
        guard status == 0 else { throw SandboxError("\(command) exited \(status): \(errorText)") }
        return self
    }
}

/// The keyring made once per test process.
final class KeyringTemplate: @unchecked Sendable {
    static let shared = KeyringTemplate()

    struct Made {
        let directory: String
        let keys: [GPGSandbox.TestKey]
    }

    private let made = Locked<Result<Made, SandboxError>?>(nil)

    func get() throws -> Made {
        try made.withLock { made in
            if made == nil { made = Result { try make() }.mapError { SandboxError("\($0)") } }
            return try made!.get()
        }
    }

    private func make() throws -> Made {
        var buffer = Array("/tmp/coffer-keys-XXXXXX".utf8CString)
        guard let created = mkdtemp(&buffer) else { throw SandboxError("mkdtemp failed") }
        let directory = String(cString: created)
        let environment = [
            "GNUPGHOME=\(directory)", "HOME=\(directory)",
            "PATH=\(environmentValue("PATH") ?? "/usr/bin:/bin")",
        ]
        var keys: [GPGSandbox.TestKey] = []
        for name in ["one", "two", "three"] {
            let email = "\(name)@coffer.test"
            let uid = "Coffer Test \(name.capitalizedFirst) <\(email)>"
            try GPGSandbox.check(
                [
                    "gpg", "--batch", "--quiet", "--passphrase", "", "--quick-gen-key", uid, "ed25519",
                    "sign", "never",
                ],
                environment: environment)
            let listing = try ChildProcess(
                ["gpg", "--batch", "--with-colons", "--list-keys", email], environment: environment
            ).run()
            guard
                let line = listing.outputText.split(separator: "\n").first(where: { $0.hasPrefix("fpr:") }),
                let fingerprint = line.split(separator: ":", omittingEmptySubsequences: false).dropFirst(9)
                    .first
            else { throw SandboxError("no fingerprint for \(email)") }
            try GPGSandbox.check(
                [
                    "gpg", "--batch", "--quiet", "--passphrase", "", "--quick-add-key", String(fingerprint),
                    "cv25519", "encr", "never",
                ],
                environment: environment)
            keys.append(GPGSandbox.TestKey(fingerprint: String(fingerprint), email: email))
        }
        _ = try? ChildProcess(["gpgconf", "--kill", "all"], environment: environment).run()
        templateDirectory = strdup(directory)
        atexit {
            guard let path = templateDirectory else { return }
            _ = try? ChildProcess(["rm", "-rf", String(cString: path)]).run()
        }
        for socket in ["S.gpg-agent", "S.gpg-agent.browser", "S.gpg-agent.extra", "S.gpg-agent.ssh"] {
            unlink(directory + "/" + socket)
        }
        return Made(directory: directory, keys: keys)
    }
}

/// The template keyring's folder, removed when the test process exits.
nonisolated(unsafe) private var templateDirectory: UnsafeMutablePointer<CChar>?

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }

    /// Writes the UTF-8 text to a file, replacing it.
    package func write(toFile path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw SandboxError("cannot write \(path)") }
        defer { close(descriptor) }
        let bytes = Array(utf8)
        _ = bytes.withUnsafeBytes { writeBytes(descriptor, $0.baseAddress, $0.count) }
    }
}

/// One variable of this process's environment.
package func environmentValue(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

private func writeBytes(_ descriptor: Int32, _ pointer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, pointer, count)
}
