// The C library (Glibc on Linux, Darwin on macOS), imported here once for every file of the module
// rather than at the top of each file that calls it.
#if canImport(Glibc)
    @_exported import Glibc
#elseif canImport(Darwin)
    @_exported import Darwin
#endif
