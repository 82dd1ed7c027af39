import Testing

/// Where the `coffer` executable under test is.
///
/// `COFFER_BIN` names it explicitly (for example `/usr/bin/pass`, to check the differential harness by
/// running pass against itself); otherwise it is the `coffer` next to the test bundle
/// (`.build/<config>/coffer` beside `.build/<config>/CofferPackageTests.xctest`).
package enum CofferBinary {
    /// The path of the executable, or an error that says where it was looked for.
    package static func path() throws -> String {
        if let explicit = environmentVariable("COFFER_BIN"), !explicit.isEmpty {
            guard access(explicit, X_OK) == 0 else {
                throw TestProcess.Failure(description: "COFFER_BIN=\(explicit) is not an executable file")
            }
            return explicit
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else {
            throw TestProcess.Failure(
                description: "cannot read /proc/self/exe; set COFFER_BIN to the coffer binary")
        }
        let executable = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var folder = String(executable[..<(executable.lastIndex(of: "/") ?? executable.endIndex)])
        // In a bundle (`X.xctest/Contents/MacOS/X`) the executable is deeper: use the bundle's folder.
        if let bundle = folder.firstRange(of: ".xctest/") {
            folder = String(folder[..<bundle.lowerBound])
            folder = String(folder[..<(folder.lastIndex(of: "/") ?? folder.startIndex)])
        }
        let candidate = folder + "/coffer"
        guard access(candidate, X_OK) == 0 else {
            throw TestProcess.Failure(
                description:
                    "the coffer executable is missing: expected it at \(candidate) (next to the test bundle "
                    + "\(executable)); build it with `swift build --build-tests` or set COFFER_BIN")
        }
        return candidate
    }
}

extension GPGSandbox {
    /// Runs the coffer under test with `arguments`, `input` on standard input and the sandbox's environment
    /// plus `environment`; expects it to exit 0 and returns its standard output.
    package func coffer(
        _ arguments: [String], input: String = "", environment: [String: String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let output = try run(
            [try CofferBinary.path()] + arguments, input: Array(input.utf8), environment: environment)
        #expect(
            output.status == 0, "coffer \(arguments.joined(separator: " ")): \(output.errorText)",
            sourceLocation: sourceLocation)
        return output.outputText
    }
}
