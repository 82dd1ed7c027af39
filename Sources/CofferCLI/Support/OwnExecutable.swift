import Coffer

/// This program's own executable, by its absolute path (whatever name or link it was started by), for
/// starting it again from git, a shell or a detached helper with any `PATH`.
var ownExecutable: String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    #if os(Linux)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count > 0 {
            return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    #elseif canImport(Darwin)
        var size = UInt32(buffer.count)
        if _NSGetExecutablePath(&buffer, &size) == 0, let resolved = realpath(buffer, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
    #endif
    let invoked = CommandLine.arguments.first ?? "coffer"
    if invoked.startsWithSlash { return invoked }
    if invoked.utf8.contains(0x2F), let resolved = realpath(invoked, nil) {
        defer { free(resolved) }
        return String(cString: resolved)
    }
    return ChildProcess.findOnPath(invoked, environment: StoreConfiguration.processEnvironment()) ?? invoked
}
