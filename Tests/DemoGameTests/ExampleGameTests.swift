import Foundation
import Testing

/// The README's guide is a real game: `Examples/Tanks`, built with the package and run here.
@Suite("The example game adopts Stasis through the coordinator")
struct ExampleGameTests {
  private func digest(_ arguments: [String]) throws -> String {
    let result = try run("stasis-example-tanks", arguments)
    #expect(result.status == 0, "\(result.stderr)")
    return try #require(result.lines.last { $0.hasPrefix("digest: ") })
  }

  @Test("the same digest uninterrupted, with a background round trip, and after quitting and --resume")
  func roundTrips() throws {
    let plain = try digest(["--saves", try temporaryFolder().path, "--frames", "900"])
    let away = try digest(["--saves", try temporaryFolder().path, "--frames", "900", "--background-at", "450"])
    #expect(away == plain)
    let saves = try temporaryFolder().path
    _ = try digest(["--saves", saves, "--frames", "500", "--background-at", "300"])
    let resumed = try digest(["--saves", saves, "--frames", "900", "--resume"])
    #expect(resumed == plain)
  }

  @Test("a schema-1 save from version 1.0 loads into 1.1: the rename migrated, the new field defaulted, reported")
  func schemaChange() throws {
    let saves = try temporaryFolder().path
    #expect(try run("stasis-example-tanks", ["--saves", saves, "--write-v1"]).status == 0)
    let result = try run("stasis-example-tanks", ["--saves", saves, "--resume", "--frames", "660"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.lines.contains(
        "load: restored generation 1 at frame 600 [schema 1 → 2: 1 → 2; defaulted: tank.armor]"))
    #expect(result.lines.contains { $0.hasPrefix("frame 660,") && $0.hasSuffix("music 0.3") })

    // The saves made after that load carry the lineage; the CLI shows it without the game's code.
    let newest = URL(fileURLWithPath: saves).appendingPathComponent("slot-1/0000000002.stasis").path
    let inspect = try run("stasis", ["inspect", newest])
    #expect(inspect.status == 0, "\(inspect.stderr)")
    #expect(inspect.lines.contains("lineage:   schema 1 → 2: 1 → 2"))
    #expect(inspect.lines.contains("           defaulted: tank.armor"))
    let json = try run("stasis", ["inspect", newest, "--json"])
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    let report = object?["loadReport"] as? [String: Any]
    #expect(report?["migrations"] as? [String] == ["1 → 2"])
    #expect(report?["defaultedFields"] as? [String] == ["tank.armor"])
  }

  @Test("the Stasis-specific lines are as few as the README says, at most 40")
  func lineCount() throws {
    let folder = packageRoot.appendingPathComponent("Examples/Tanks")
    let saving = try String(contentsOf: folder.appendingPathComponent("Saving.swift"), encoding: .utf8)
      .split(separator: "\n").filter {
        let line = $0.trimmingCharacters(in: .whitespaces)
        return !line.isEmpty && !line.hasPrefix("//")
      }
    let stasisWords: Set<Substring> = [
      "store", "coordinator", "app", "Application", "LaunchOptions", "SaveStore", "SaveCoordinator", "Stasis",
    ]
    let main = try String(contentsOf: folder.appendingPathComponent("main.swift"), encoding: .utf8)
      .split(separator: "\n").map {
        $0.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
      }
      .filter { code in
        !stasisWords.isDisjoint(with: code.split { !$0.isLetter && !$0.isNumber && $0 != "_" })
      }
    let count = saving.count + main.count
    #expect(count <= 40)
    let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    #expect(readme.contains("\(count) lines of Stasis-specific code"), "the README states the count: \(count)")
  }
}

/// Every Swift block in the README is compiled: each appears, line for line, in a file under
/// `Examples/`, which the package builds.
@Suite("The README's Swift compiles")
struct ReadmeTests {
  private static func normalized(_ text: some StringProtocol) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
      .filter { !$0.isEmpty }
  }

  @Test("every ```swift block of the README is in a compiled file of Examples/")
  func blocksCompile() throws {
    let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map {
      String($0.components(separatedBy: "```").first ?? "")
    }
    #expect(blocks.count >= 4)
    let examples = packageRoot.appendingPathComponent("Examples")
    var sources: [[String]] = []
    let files = FileManager.default.enumerator(at: examples, includingPropertiesForKeys: nil)
    for case let file as URL in files ?? FileManager.DirectoryEnumerator() where file.pathExtension == "swift" {
      sources.append(Self.normalized(try String(contentsOf: file, encoding: .utf8)))
    }
    for block in blocks {
      let lines = Self.normalized(block)
      let found = sources.contains { source in
        source.count >= lines.count
          && (0...(source.count - lines.count)).contains { Array(source[$0..<($0 + lines.count)]) == lines }
      }
      #expect(found, "not in any compiled file under Examples/:\n\(block)")
    }
  }

  @Test("the README links nothing outside the repository")
  func noOutsideLinks() throws {
    let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    #expect(!readme.contains("../shared"))
    for match in readme.matches(of: /\]\(([^)#]+)\)/) {
      let target = String(match.1)
      guard !target.hasPrefix("http") else { continue }
      #expect(FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent(target).path), "\(target)")
    }
  }
}
