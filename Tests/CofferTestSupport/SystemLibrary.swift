// The C library (Glibc on Linux, Darwin on macOS), imported here once for this module and for every
// test file that imports it, rather than at the top of each file that calls it.
#if canImport(Glibc)
    @_exported import Glibc
#elseif canImport(Darwin)
    @_exported import Darwin
#endif
