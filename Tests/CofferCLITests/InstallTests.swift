import Coffer
import CofferTestSupport
import Testing

/// `make install`, `make install-pass-shim` and `make uninstall` into a staging folder (`DESTDIR`).
///
/// This builds coffer in release mode, which takes minutes the first time. The build uses its own
/// scratch folder, `.build-install`: `swift test` holds the lock of `.build` while the tests run, so a
/// `swift build` there from inside a test would wait forever. `SWIFT` is pointed at a two-line wrapper that
/// adds `--scratch-path` to every `swift build`.
@Suite("Installation")
struct InstallTests {

    /// This process's environment without make's own variables (a `make test` above would pass its
    /// jobserver and command-line variables down).
    static func environment() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        for name in ["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "DESTDIR", "PREFIX", "SWIFT"] {
            result[name] = nil
        }
        return result
    }

    /// Every file and symbolic link under `folder`, relative to it.
    static func files(under folder: String) throws -> [String] {
        let output = try TestProcess.check(
            ["find", folder, "(", "-type", "f", "-o", "-type", "l", ")", "-printf", "%P\\n"],
            environment: ["PATH": "/usr/bin:/bin"])
        return output.outputText.split(separator: "\n").map(String.init).sorted()
    }

    @Test("install puts the binary, the man pages and the completions in place; uninstall removes them")
    func installAndUninstall() throws {
        let makefile = String(
            decoding: TestFiles.read(TestFiles.packageRoot + "/Makefile") ?? [], as: UTF8.self)
        try #require(
            makefile.split(separator: "\n").contains {
                $0.contains("include") && $0.contains("mk/install.mk")
            },
            "the Makefile must `include mk/install.mk` (its install, uninstall and install-pass-shim targets)"
        )
        let staging = try TestFiles.temporaryFolder("coffer-install")
        defer { _ = try? TestProcess.run(["rm", "-rf", staging], environment: ["PATH": "/usr/bin:/bin"]) }
        let destination = staging + "/root"
        let wrapper = staging + "/swift"
        try TestFiles.write(
            """
            #!/bin/sh
            if [ "$1" = build ]; then shift; exec swift build --scratch-path "\(TestFiles.packageRoot)/.build-install" "$@"; fi
            exec swift "$@"

            """, to: wrapper, mode: 0o755)
        let environment = Self.environment()
        @discardableResult
        func make(_ target: String) throws -> ProcessResult {
            try TestProcess.check(
                [
                    "make", "--no-print-directory", target, "DESTDIR=" + destination, "PREFIX=/usr",
                    "SWIFT=" + wrapper,
                ],
                environment: environment, directory: TestFiles.packageRoot, timeout: 3600)
        }

        try make("install")
        let installed = [
            "usr/bin/coffer", "usr/bin/docker-credential-coffer", "usr/bin/git-credential-coffer",
            "usr/lib/systemd/user/coffer-secret-service.service",
            "usr/share/bash-completion/completions/coffer",
            "usr/share/dbus-1/services/org.freedesktop.secrets.service",
            "usr/share/fish/vendor_completions.d/coffer.fish",
            "usr/share/man/man1/coffer.1", "usr/share/man/man5/coffer-store.5",
            "usr/share/zsh/vendor-completions/_coffer",
        ]
        #expect(try Self.files(under: destination) == installed)
        // The Secret Service starts by D-Bus activation or as a systemd user unit, by the installed path.
        let activation = String(
            decoding: TestFiles.read(
                destination + "/usr/share/dbus-1/services/org.freedesktop.secrets.service")
                ?? [], as: UTF8.self)
        #expect(activation.contains("\nName=org.freedesktop.secrets\nExec=/usr/bin/coffer secret-service\n"))
        let unit = String(
            decoding: TestFiles.read(destination + "/usr/lib/systemd/user/coffer-secret-service.service")
                ?? [],
            as: UTF8.self)
        #expect(
            unit.contains("\nBusName=org.freedesktop.secrets\nExecStart=/usr/bin/coffer secret-service\n"))
        var info = stat()
        #expect(stat(destination + "/usr/bin/coffer", &info) == 0 && info.st_mode & 0o777 == 0o755)
        #expect(
            stat(destination + "/usr/share/man/man1/coffer.1", &info) == 0 && info.st_mode & 0o777 == 0o644)

        for helper in ["git-credential-coffer", "docker-credential-coffer"] {
            #expect(FileSystem.linkTarget(destination + "/usr/bin/" + helper) == "coffer")
        }
        let dockerVersion = try TestProcess.run(
            [destination + "/usr/bin/docker-credential-coffer", "version"], environment: environment)
        #expect(dockerVersion.outputText.hasPrefix("docker-credential-coffer (coffer "))
        let version = try TestProcess.run(
            [destination + "/usr/bin/coffer", "--version"], environment: environment)
        #expect(version.status == 0)
        #expect(version.outputText.hasPrefix("coffer \(CofferRelease.version): "))
        var manEnvironment = environment
        manEnvironment["MANPAGER"] = "cat"
        manEnvironment["MANWIDTH"] = "80"
        let manual = try TestProcess.run(
            ["man", "-P", "cat", "-l", destination + "/usr/share/man/man1/coffer.1"],
            environment: manEnvironment)
        #expect(manual.status == 0 && manual.outputText.contains("coffer"), "\(manual.errorText)")

        // coffer as pass: links beside each file, and a _pass for zsh.
        try make("install-pass-shim")
        let links = [
            "usr/bin/pass": "coffer", "usr/share/bash-completion/completions/pass": "coffer",
            "usr/share/fish/vendor_completions.d/pass.fish": "coffer.fish",
        ]
        for (link, target) in links {
            var buffer = [CChar](repeating: 0, count: 4096)
            let count = readlink(destination + "/" + link, &buffer, buffer.count - 1)
            let value =
                count > 0
                ? String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
            #expect(value == target, "\(link) -> \(value)")
        }
        let zshShim = String(
            decoding: TestFiles.read(destination + "/usr/share/zsh/vendor-completions/_pass") ?? [],
            as: UTF8.self)
        #expect(zshShim.hasPrefix("#compdef pass\n") && zshShim.contains("_coffer \"$@\""))
        let asPass = try TestProcess.run(
            [destination + "/usr/bin/pass", "--version"], environment: environment)
        // Installed as pass, it prints pass's banner, which tools look for.
        #expect(asPass.status == 0 && asPass.outputText.contains("pass: the standard unix password manager"))
        let registration = try TestProcess.run(
            [
                "bash", "--norc", "--noprofile", "-c", "source \"$1\" && complete -p pass", "bash",
                destination + "/usr/share/bash-completion/completions/pass",
            ], environment: ["PATH": "/usr/bin:/bin"])
        #expect(registration.status == 0 && registration.outputText.contains("-F _coffer pass"))

        try make("uninstall")
        #expect(try Self.files(under: destination) == [])

        // A pass that is not coffer's is neither replaced nor removed.
        try TestFiles.write("#!/bin/sh\n", to: destination + "/usr/bin/pass", mode: 0o755)
        try make("uninstall")
        #expect(try Self.files(under: destination) == ["usr/bin/pass"])
    }
}
