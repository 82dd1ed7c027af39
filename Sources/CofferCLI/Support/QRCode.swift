import Coffer

/// pass's `qrcode`: a window (feh, GraphicsMagick or ImageMagick) when a display is available, else a QR
/// code drawn in UTF-8 blocks by `qrencode -t utf8`. The secret reaches qrencode on standard input.
enum QRCode {
    /// Shows `secret` as a QR code titled with the entry `name`.
    static func show(_ secret: SecureBytes, name: String, _ invocation: Invocation) throws {
        let environment = invocation.environment
        let hasDisplay =
            !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        let title = "\(invocation.program): \(name)"
        let viewers: [(String, [String])] = [
            ("feh", ["feh", "-x", "--title", title, "-g", "+200+200", "-"]),
            ("gm", ["gm", "display", "-title", title, "-geometry", "+200+200", "-"]),
            ("display", ["display", "-title", title, "-geometry", "+200+200", "-"]),
        ]
        if hasDisplay,
            let viewer = viewers.first(where: { ChildProcess.isOnPath($0.0, environment: environment) })
        {
            let image = try encode(secret, ["qrencode", "--size", "10", "-o", "-"], invocation)
            _ = try? ChildProcess(viewer.1).run(input: image.standardOutput)
            return
        }
        let drawing = try encode(secret, ["qrencode", "-t", "utf8"], invocation)
        standardOutput.write(bytes: drawing.standardOutput)
    }

    private static func encode(_ secret: SecureBytes, _ command: [String], _ invocation: Invocation) throws
        -> ChildProcess.Output
    {
        do {
            let output = try ChildProcess(command).run(input: secret)
            standardError.write(bytes: output.standardError)
            return output
        } catch let error as CofferError {
            throw Exit(0, "\(invocation.program): \(error.message)")
        }
    }
}
