import Coffer

/// The OpenPGP implementations the interoperability tests compare coffer with: gpg and the ones
/// Debian packages as `sq`, `sqop`, `rnp` and `python3-pgpy` (installed by `scripts/bootstrap.sh`).
public enum OpenPGPImplementation: String, CaseIterable, Sendable, CustomStringConvertible {
    case gpg, sq, sqop, rnp, pgpy

    /// The name.
    public var description: String { rawValue }

    /// The kinds of message ``GPGSandbox/encrypt(_:with:variant:to:)`` makes with it: plain binary
    /// first, then what it offers beyond (armor, text mode, compression, other ciphers, AEAD,
    /// hidden recipients).
    public var variants: [String] {
        switch self {
        case .gpg: ["binary", "armored", "text", "compressed", "aes128", "camellia256", "hidden-recipient"]
        case .sq: ["binary", "armored", "zip"]
        case .sqop: ["binary", "armored", "text"]
        case .rnp: ["binary", "armored", "compressed", "aes128", "camellia256", "aead-ocb", "aead-eax"]
        case .pgpy: ["binary", "text", "armored", "zip", "aes128", "cast5"]
        }
    }
}

/// The keys of the interoperability tests, made once per test process beside the usual three:
/// RSA-3072, a key with two encryption subkeys, and one whose newer encryption subkeys are expired
/// and revoked. Each comes with its secret key (unprotected, binary) and its public key (armored)
/// exported to files for the other implementations.
public struct InteropKey: Sendable {
    /// The user id's e-mail address (what `.gpg-id` and `-r` name).
    public let email: String
    /// The file name (inside the GnuPG home) of the exported secret key.
    public let secretKeyFile: String
    /// The file name (inside the GnuPG home) of the exported public key, armored.
    public let publicKeyFile: String

    /// The usual cv25519 key (the sandbox's `keys[0]`).
    public static let curve25519 = InteropKey(name: "one")
    /// A second cv25519 key (the sandbox's `keys[1]`).
    public static let curve25519Second = InteropKey(name: "two")
    /// RSA-3072, signing primary key and encryption subkey.
    public static let rsa = InteropKey(name: "rsa")
    /// Two encryption subkeys; gpg encrypts to the newer one.
    public static let twoSubkeys = InteropKey(name: "two-subkeys")
    /// An encryption subkey from 2020 that gpg uses, a newer one that expired in 2021, and a newest
    /// one that is revoked.
    public static let worn = InteropKey(name: "worn")

    init(name: String) {
        email = "\(name)@coffer.test"
        secretKeyFile = "interop-\(name).secret.pgp"
        publicKeyFile = "interop-\(name).public.pgp"
    }
}

extension GPGSandbox {
    /// Replaces the sandbox's keyring by a copy of the interoperability keyring (the usual three keys
    /// and the ``InteropKey`` ones, with their exported files).
    public func useInteropKeyring() throws {
        let template = try interopKeyring.get()
        _ = try? run(["gpgconf", "--kill", "all"])
        try check(["rm", "-rf", gnupgHome])
        try check(["cp", "-a", template, gnupgHome])
    }

    /// The path of a file of the interoperability keyring.
    public func keyFile(_ name: String) -> String { gnupgHome + "/" + name }

    /// Writes `bytes` to a new file of the sandbox and returns its path.
    public func writeFile(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = directory + "/" + name
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw SandboxError("cannot write \(path)") }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                write(descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            guard written > 0 else { throw SandboxError("cannot write \(path)") }
            offset += written
        }
        return path
    }

    /// Decrypts each of `messages` with `implementation` and the secret key `key`; throws when one
    /// does not decrypt. PGPy reads them all in one Python process.
    public func decrypt(
        _ messages: [[UInt8]], with implementation: OpenPGPImplementation, key: InteropKey
    ) throws -> [[UInt8]] {
        let secret = keyFile(key.secretKeyFile)
        let files = try messages.enumerated().map { index, message in
            try writeFile("\(implementation)-in-\(index).pgp", message)
        }
        let outputs = files.map { $0 + ".out" }
        switch implementation {
        case .gpg:
            for (input, output) in zip(files, outputs) {
                try check(["gpg", "--batch", "--quiet", "--yes", "-o", output, "-d", input])
            }
        case .sq:
            for (input, output) in zip(files, outputs) {
                try check(["sq", "--force", "decrypt", "--recipient-key", secret, "-o", output, input])
            }
        case .sqop:
            for (input, output) in zip(files, outputs) {
                try check(["sh", "-c", "exec sqop decrypt \"$0\" < \"$1\" > \"$2\"", secret, input, output])
            }
        case .rnp:
            for (input, output) in zip(files, outputs) {
                try check(
                    ["rnp", "--homedir", directory + "/rnp", "--keyfile", secret, "--overwrite", "-d", input]
                        + ["--output", output])
            }
        case .pgpy:
            try check([Self.python, "-c", Self.pgpyDecrypt, secret] + files)
        }
        return try outputs.map { try read($0) }
    }

    /// Encrypts `plaintext` with `implementation` as `variant` (one of its
    /// ``OpenPGPImplementation/variants``) to the public key `key`.
    public func encrypt(
        _ plaintext: [UInt8], with implementation: OpenPGPImplementation, variant: String, to key: InteropKey
    ) throws -> [UInt8] {
        let certificate = keyFile(key.publicKeyFile)
        let input = try writeFile("\(implementation)-\(variant).plain", plaintext)
        let output = directory + "/\(implementation)-\(variant).pgp"
        switch implementation {
        case .gpg:
            let options: [String: [String]] = [
                "binary": ["--compress-algo", "none"], "armored": ["--compress-algo", "none", "--armor"],
                "text": ["--compress-algo", "none", "--textmode"], "compressed": [],
                "aes128": ["--compress-algo", "none", "--cipher-algo", "AES128"],
                "camellia256": ["--compress-algo", "none", "--cipher-algo", "CAMELLIA256"],
                "hidden-recipient": ["--compress-algo", "none", "--throw-keyids"],
            ]
            try check(
                ["gpg", "--batch", "--quiet", "--yes", "--trust-model", "always", "-r", key.email]
                    + options[variant, default: []] + ["-o", output, "-e", input])
        case .sq:
            let options: [String: [String]] = [
                "binary": ["--binary", "--compression", "none"], "armored": ["--compression", "none"],
                "zip": ["--binary", "--compression", "zip"],
            ]
            try check(
                ["sq", "--force", "encrypt", "--recipient-cert", certificate] + options[variant, default: []]
                    + ["-o", output, input])
        case .sqop:
            let options: [String: [String]] = [
                "binary": ["--no-armor"], "armored": [], "text": ["--as=text"],
            ]
            try check(
                [
                    "sh", "-c", "i=$1 o=$2; shift 2; exec sqop encrypt \"$@\" < \"$i\" > \"$o\"", "sh", input,
                    output,
                ]
                    + options[variant, default: []] + [certificate])
        case .rnp:
            let options: [String: [String]] = [
                "binary": ["-z", "0"], "armored": ["-z", "0", "--armor"], "compressed": [],
                "aes128": ["-z", "0", "--cipher", "AES128"],
                "camellia256": ["-z", "0", "--cipher", "CAMELLIA256"],
                "aead-ocb": ["-z", "0", "--aead=OCB"], "aead-eax": ["--aead=EAX"],
            ]
            try check(
                ["rnp", "--homedir", directory + "/rnp", "--keyfile", certificate, "-e", "-r", key.email]
                    + options[variant, default: []] + ["--overwrite", "--output", output, input])
        case .pgpy:
            try check([Self.python, "-c", Self.pgpyEncrypt, certificate, variant, input, output])
        }
        return try read(output)
    }

    /// Debian's Python, which `python3-pgpy` installs for (a `python3` earlier on `PATH` may be
    /// another one).
    static let python = "/usr/bin/python3"

    /// Decrypts the files `argv[2...]` with the secret key file `argv[1]` into `FILE.out`.
    static let pgpyDecrypt = """
        import sys, warnings
        warnings.simplefilter("ignore")
        import pgpy
        key, _ = pgpy.PGPKey.from_file(sys.argv[1])
        for name in sys.argv[2:]:
            message = key.decrypt(pgpy.PGPMessage.from_file(name)).message
            data = message.encode("utf-8") if isinstance(message, str) else bytes(message)
            open(name + ".out", "wb").write(data)
        """

    /// Encrypts file `argv[3]` to the certificate `argv[1]` as `argv[2]` into file `argv[4]`.
    static let pgpyEncrypt = """
        import sys, warnings
        warnings.simplefilter("ignore")
        import pgpy
        from pgpy.constants import CompressionAlgorithm as Compression, SymmetricKeyAlgorithm as Cipher
        certificate, _ = pgpy.PGPKey.from_file(sys.argv[1])
        variant, data = sys.argv[2], open(sys.argv[3], "rb").read()
        compression = Compression.ZIP if variant == "zip" else Compression.Uncompressed
        if variant == "text":
            message = pgpy.PGPMessage.new(data.decode("utf-8"), compression=compression)
        else:
            message = pgpy.PGPMessage.new(data, file=False, compression=compression)
        cipher = {"aes128": Cipher.AES128, "cast5": Cipher.CAST5}.get(variant, Cipher.AES256)
        encrypted = certificate.encrypt(message, cipher=cipher)
        output = str(encrypted).encode() if variant == "armored" else bytes(encrypted)
        open(sys.argv[4], "wb").write(output)
        """
}

/// The interoperability keyring's folder, made from the usual test keyring on first use (a global's
/// initialiser runs once per process, on whichever thread asks first).
private let interopKeyring = Result { try InteropKeyring.make() }.mapError { SandboxError("\($0)") }

/// How the interoperability keyring is made.
enum InteropKeyring {
    static func make() throws -> String {
        let sandbox = try GPGSandbox()
        // The sandbox's own folder goes when it does; the keyring is kept apart until the process ends.
        var buffer = Array("/tmp/coffer-interop-XXXXXX".utf8CString)
        guard let created = mkdtemp(&buffer) else { throw SandboxError("mkdtemp failed") }
        let folder = String(cString: created)
        interopDirectory = strdup(folder)
        atexit {
            guard let path = interopDirectory else { return }
            _ = try? ChildProcess(["rm", "-rf", String(cString: path)]).run()
        }
        let gpg = ["gpg", "--batch", "--quiet", "--passphrase", ""]
        func fingerprint(_ email: String) throws -> String {
            let listing = try sandbox.check(["gpg", "--with-colons", "--list-keys", email]).outputText
            guard let line = listing.split(separator: "\n").first(where: { $0.hasPrefix("fpr:") }) else {
                throw SandboxError("no fingerprint for \(email)")
            }
            return String(line.split(separator: ":", omittingEmptySubsequences: false)[9])
        }
        func uid(_ key: InteropKey) -> String { "Interop Test <\(key.email)>" }
        /// gpg with its clock set to `date` (YYYYMMDD), to make keys of the past.
        func at(_ date: String) -> [String] { gpg + ["--faked-system-time", date + "T120000!"] }

        try sandbox.check(gpg + ["--quick-gen-key", uid(.rsa), "rsa3072", "sign", "never"])
        try sandbox.check(
            gpg + ["--quick-add-key", try fingerprint(InteropKey.rsa.email), "rsa3072", "encr", "never"])

        try sandbox.check(at("20190101") + ["--quick-gen-key", uid(.twoSubkeys), "ed25519", "sign", "never"])
        let two = try fingerprint(InteropKey.twoSubkeys.email)
        try sandbox.check(at("20200101") + ["--quick-add-key", two, "cv25519", "encr", "never"])
        try sandbox.check(gpg + ["--quick-add-key", two, "cv25519", "encr", "never"])

        try sandbox.check(at("20190101") + ["--quick-gen-key", uid(.worn), "ed25519", "sign", "never"])
        let worn = try fingerprint(InteropKey.worn.email)
        try sandbox.check(at("20200101") + ["--quick-add-key", worn, "cv25519", "encr", "never"])
        try sandbox.check(at("20210101") + ["--quick-add-key", worn, "cv25519", "encr", "2021-06-01"])
        try sandbox.check(gpg + ["--quick-add-key", worn, "cv25519", "encr", "never"])
        // The newest encryption subkey (the third) is revoked.
        try sandbox.check(
            gpg + ["--command-fd", "0", "--pinentry-mode", "loopback", "--edit-key", worn],
            input: Array("key 3\nrevkey\ny\n0\n\ny\nsave\n".utf8))

        for key in [InteropKey.curve25519, .curve25519Second, .rsa, .twoSubkeys, .worn] {
            let secret = try sandbox.check(["gpg", "--batch", "--export-secret-keys", key.email])
                .standardOutput
            // sqop reads certificates only armored.
            let public_ = try sandbox.check(["gpg", "--batch", "--armor", "--export", key.email])
                .standardOutput
            guard !secret.isEmpty, !public_.isEmpty else { throw SandboxError("cannot export \(key.email)") }
            _ = try sandbox.writeFile("gnupg/" + key.secretKeyFile, secret)
            _ = try sandbox.writeFile("gnupg/" + key.publicKeyFile, public_)
        }
        try sandbox.check(["gpgconf", "--kill", "all"])
        for socket in ["S.gpg-agent", "S.gpg-agent.browser", "S.gpg-agent.extra", "S.gpg-agent.ssh"] {
            unlink(sandbox.gnupgHome + "/" + socket)
        }
        try sandbox.check(["cp", "-a", sandbox.gnupgHome, folder + "/gnupg"])
        return folder + "/gnupg"
    }
}

/// The interoperability keyring's folder, removed when the test process exits.
nonisolated(unsafe) private var interopDirectory: UnsafeMutablePointer<CChar>?
