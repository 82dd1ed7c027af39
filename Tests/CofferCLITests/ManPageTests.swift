import CofferTestSupport
import Testing

/// The manual pages in `man/`: clean under mandoc's linter, rendered by man(1), and complete.
@Suite("Manual pages")
struct ManPageTests {

    static let pages = ["man/coffer.1", "man/coffer-store.5"]

    static let environment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "MANWIDTH": "80", "TERM": "dumb"]

    /// The page as plain text: mandoc's ASCII output without its backspace overstriking, lines joined
    /// with spaces so that phrases can be looked up whatever the line breaks.
    static func plainText(_ page: String) throws -> String {
        let rendered = try TestProcess.check(
            ["mandoc", "-T", "ascii", "-O", "width=1000", TestFiles.packageRoot + "/" + page],
            environment: environment)
        var bytes: [UInt8] = []
        for byte in rendered.standardOutput {
            if byte == 0x08 {
                if !bytes.isEmpty { bytes.removeLast() }
                continue
            }
            bytes.append(byte)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.split(whereSeparator: { $0 == "\n" || $0 == " " }).joined(separator: " ")
    }

    @Test("mandoc -T lint -W warning reports nothing", arguments: pages)
    func lint(page: String) throws {
        let result = try TestProcess.run(
            ["mandoc", "-T", "lint", "-W", "warning", TestFiles.packageRoot + "/" + page],
            environment: Self.environment)
        #expect(
            result.status == 0 && result.outputText.isEmpty && result.errorText.isEmpty,
            "\(result.outputText)\(result.errorText)")
    }

    @Test("man -l renders the page", arguments: pages)
    func render(page: String) throws {
        var environment = Self.environment
        environment["MANPAGER"] = "cat"
        environment["PAGER"] = "cat"
        let result = try TestProcess.run(
            ["man", "-P", "cat", "-l", TestFiles.packageRoot + "/" + page], environment: environment)
        #expect(result.status == 0, "\(result.errorText)")
        #expect(result.outputText.contains("NAME") && result.outputText.count > 2000)
        #expect(!result.errorText.contains("warning"), "\(result.errorText)")
    }

    @Test("coffer(1) documents every command, option and environment variable")
    func commandPageIsComplete() throws {
        let text = try Self.plainText("man/coffer.1")
        let phrases = [
            // Commands and their options.
            "init [--path=subfolder, -p subfolder]", "ls [subfolder], list [subfolder]", "find part...",
            "search part...", "grep [grep-options] pattern",
            "show [--clip[=line], -c[line]] [--qrcode[=line], -q[line]] name",
            "show --revision revision | -r revision name",
            "insert [--echo, -e | --multiline, -m] [--force, -f] name", "edit name",
            "generate [--no-symbols, -n] [--clip, -c] [--qrcode, -q] [--in-place, -i | --force, -f] name [length]",
            "rm [--recursive, -r] [--force, -f] name", "remove", "delete", "mv [--force, -f] old new",
            "rename",
            "cp [--force, -f] old new", "copy", "git git-arguments...", "history name",
            "restore --revision revision name", "sync", "clone url [--path folder]", "fsck [--fix]",
            "audit [--json] [--show-passwords] [--age days] [--breached file] [--min-bits bits] [subfolder]",
            "secret-service [--replace]",
            "help [command]", "version", "--help", "--version",
            // Environment.
            "PASSWORD_STORE_DIR", "PASSWORD_STORE_KEY", "PASSWORD_STORE_GPG_OPTS",
            "PASSWORD_STORE_X_SELECTION",
            "PASSWORD_STORE_CLIP_TIME", "PASSWORD_STORE_UMASK", "PASSWORD_STORE_GENERATED_LENGTH",
            "PASSWORD_STORE_CHARACTER_SET", "PASSWORD_STORE_CHARACTER_SET_NO_SYMBOLS",
            "PASSWORD_STORE_ENABLE_EXTENSIONS", "PASSWORD_STORE_EXTENSIONS_DIR", "PASSWORD_STORE_SIGNING_KEY",
            "COFFER_LOCK_TIMEOUT", "EDITOR", "DISPLAY", "WAYLAND_DISPLAY", "TMPDIR",
            // Sections and topics.
            "SYNOPSIS", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "THE ENTRY FORMAT",
            "COMPATIBILITY WITH PASS", "SECURITY", "/dev/shm", "Core dumps are disabled", "renamed over",
            "store-wide lock", "*.gpg merge=coffer", "inside the encrypted entry",
            "complete -o filenames -F _coffer pass",
            "compdef _coffer pass", "pass.fish",
        ]
        for phrase in phrases {
            #expect(text.contains(phrase), "coffer.1 lacks \"\(phrase)\"")
        }
    }

    @Test("coffer-store(5) documents the layout, .gpg-id, the entry format and the Codable archive")
    func storePageIsComplete() throws {
        let text = try Self.plainText("man/coffer-store.5")
        let phrases = [
            "LAYOUT", "THE .gpg-id FILE", "THE ENTRY FORMAT", "THE KEYCHAIN LAYOUT", "THE CODABLE ARCHIVE",
            "# starts a comment", "the nearest .gpg-id", "group family = alice@example.com bob@example.com",
            ".gpg-id.sig", "PASSWORD_STORE_SIGNING_KEY", "PASSWORD_STORE_KEY", "notes: |", "otpauth://",
            "login:alice", "store/service/account.gpg", "share(with:)", "servers.0.host: h1", "tags: work",
            "tags: mail", "extra.\"github.com\": token", "auth.key.name: deploy", "backup: []", "ISO 8601",
            "base64",
            "sorted", "label:", "*.gpg merge=coffer",
        ]
        for phrase in phrases {
            #expect(text.contains(phrase), "coffer-store.5 lacks \"\(phrase)\"")
        }
    }
}
