// Only with the `Records` trait, as the store itself.
#if Records
  import Testing

  @testable import StasisRecords

  @Suite("The ordered diff")
  struct ResultsDiffTests {
    private func rows(_ spec: String) -> [DiffedRow<String, String>] {
      // "a1:x b2:y": identity a, content 1, section x.
      spec.split(separator: " ").map { item in
        let parts = item.split(separator: ":")
        let key = parts[0]
        return DiffedRow(identity: String(key.prefix(1)), content: String(key.dropFirst()), section: String(parts[1]))
      }
    }

    private func diff(_ old: String, _ new: String) -> String {
      ResultsDiff.changes(from: rows(old), to: rows(new)).description
    }

    @Test("reversing four rows moves three; the one kept is always the same (the last)")
    func reverse() {
      #expect(
        diff("a1:s b1:s c1:s d1:s", "d1:s c1:s b1:s a1:s")
          == "move [0, 3] → [0, 0]; move [0, 2] → [0, 1]; move [0, 1] → [0, 2]")
      #expect(diff("a1:s b1:s c1:s d1:s", "d1:s c1:s b1:s a1:s") == diff("a1:s b1:s c1:s d1:s", "d1:s c1:s b1:s a1:s"))
    }

    @Test("nothing changed is nothing; content alone is an update")
    func updates() {
      #expect(diff("a1:s b1:s", "a1:s b1:s") == "nothing")
      #expect(diff("a1:s b1:s", "a1:s b2:s") == "update [0, 1]")
    }

    @Test("sections that swap order: one is removed and inserted, its rows moved")
    func sectionsSwap() {
      #expect(
        diff("a1:x b1:y", "b1:y a1:x")
          == "remove section 1 \"y\"; insert section 0 \"y\"; move [1, 0] → [0, 0]")
    }

    @Test("the longest increasing run")
    func longestRun() {
      #expect(ResultsDiff.longestIncreasingRun([]) == [])
      #expect(ResultsDiff.longestIncreasingRun([3, 0, 1, 2]) == [1, 2, 3])
      #expect(ResultsDiff.longestIncreasingRun([2, 0, 1, 3]) == [1, 2, 3])
      #expect(ResultsDiff.longestIncreasingRun([0, 1, 2]) == [0, 1, 2])
    }
  }
#endif
