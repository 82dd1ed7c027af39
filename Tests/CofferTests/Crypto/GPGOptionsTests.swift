import Testing

@testable import Coffer

@Suite struct GPGOptionsTests {
    @Test func parsesHomedirAndTrustModel() {
        let options = GPGOptions(parsing: "--homedir /x/y --trust-model=always --rfc2440")
        #expect(options.homeDirectory == "/x/y")
        #expect(options.alwaysTrust)
        #expect(options.ignored == ["--rfc2440"])
    }

    @Test func groupsFromGPGConf() {
        let groups = GPGGroups(parsing: "# c\ngroup team = a@x b@x\n group team=c@x\ngroupie = no\n")
        #expect(groups.members(of: "team") == ["a@x", "b@x", "c@x"])
        #expect(groups.members(of: "groupie") == nil)
    }
}
