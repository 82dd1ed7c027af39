/// libFuzzer target: the getopt-style argument parser takes any argument list (NUL-separated in the input)
/// without crashing, and everything it returns comes from that list.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArguments(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
    }
    let parser = OptionParser(
        options: [
            .init(short: UInt8(ascii: "n"), long: "no-symbols", argument: .none),
            .init(short: UInt8(ascii: "c"), long: "clip", argument: .optional),
            .init(short: UInt8(ascii: "p"), long: "path", argument: .required),
            .init(short: UInt8(ascii: "i"), long: "in-place", argument: .none),
            .init(short: nil, long: "force", argument: .none),
        ],
        program: "coffer", stopAtFirstOperand: bytes.first == 0x2b)
    let result = parser.parse(arguments)
    precondition(result.operands.count <= arguments.count, "more operands than arguments")
    for operand in result.operands {
        precondition(arguments.contains(operand), "an operand that was not given")
    }
    return 0
}
