import Coffer

/// `extension-helper verify|reencrypt|clip|qrcode ...`: the prelude's helpers that need coffer, run by a
/// pass extension through the prelude (see ``ExtensionPrelude``), never by people.
///
/// `verify FILE` checks `FILE.sig` as pass's `verify_file` does; `reencrypt PATH` re-encrypts the entries
/// at or below `PATH` for their recipients, printing pass's lines, and names on standard error each entry
/// it cannot decrypt (the others are still re-encrypted, and the status is 0, as in pass); `clip NAME` and `qrcode NAME` take the
/// text on standard input (never as an argument) and copy it, or show it as a QR code, as `show -c` and
/// `show -q` do for the entry `NAME`.
enum ExtensionHelperCommand {
    /// `extension-helper`.
    static let command = Command(
        names: ["extension-helper"], usage: "verify FILE | reencrypt PATH | clip NAME | qrcode NAME",
        origin: .hidden, operands: .none,
        help: { _ in ["Run a helper of a pass extension (the extension prelude runs it)."] }, run: run)

    /// Runs the command.
    static func run(_ arguments: [String], _ invocation: Invocation) throws {
        guard arguments.count == 2 else {
            throw invocation.usage("verify FILE | reencrypt PATH | clip NAME | qrcode NAME")
        }
        let operand = arguments[1]
        do {
            switch arguments[0] {
            case "verify":
                try invocation.store.verifySignature(of: operand)
            case "reencrypt":
                // pass's reencrypt_path goes on past an entry gpg cannot decrypt, and returns 0.
                try invocation.store.reencrypt(operand) {
                    CoreutilsMessages.print($0)
                } skipping: { name, error in
                    let reason =
                        (error as? CofferError)?.message ?? (error as? GPGError)?.message ?? "\(error)"
                    standardError.line("Error: \(name) left as it was: \(reason)")
                }
            case "clip":
                try Clipboard.copy(try SystemCall.readAllSecret(0), name: operand, invocation)
            case "qrcode":
                try QRCode.show(try SystemCall.readAllSecret(0), name: operand, invocation)
            default:
                throw invocation.usage("verify FILE | reencrypt PATH | clip NAME | qrcode NAME")
            }
        } catch let error as CofferError {
            throw Exit.die(error.message)
        }
    }
}
