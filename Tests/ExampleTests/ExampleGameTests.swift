import Foundation
import Stasis
import StasisTestSupport
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

  @Test("an autosave still writing when the background save starts: generations in frame order, none written twice")
  func generationsInFrameOrder() throws {
    for _ in 0..<5 {
      let result = try run(
        "stasis-example-tanks", ["--saves", try temporaryFolder().path, "--frames", "900", "--background-at", "450"])
      #expect(result.status == 0, "\(result.stderr)")
      // `save: background generation 1 at frame 450, ...`
      let written = result.lines.compactMap { line -> (generation: Int, frame: Int)? in
        guard let match = line.firstMatch(of: /^save: \w+ generation (\d+) at frame (\d+),/) else { return nil }
        return (Int(match.1)!, Int(match.2)!)
      }.sorted { $0.generation < $1.generation }
      #expect(written.count >= 3, "\(result.stdout)")
      for (older, newer) in zip(written, written.dropFirst()) {
        #expect(older.frame < newer.frame, "generation \(newer.generation) holds an older or the same state")
      }
      // The quit at frame 900 either found the autosave of frame 900 durable (unchanged) or
      // superseded it while it waited: frame 900 is written once.
      #expect(written.last?.frame == 900)
    }
  }

  @Test("a save with a field this build cannot decode stops --resume, survives three runs that start over, and is kept")
  func unreadableSaveIsKept() throws {
    let saves = try temporaryFolder().path
    #expect(try run("stasis-example-tanks", ["--saves", saves, "--frames", "600"]).status == 0)
    // Another build renamed `tank.health` without a migration.
    let store = SaveStore(directory: saves)
    let newest = try #require(try store.generations(of: "slot-1").first)
    var document = try store.readDocument(at: store.path(of: "slot-1", generation: newest))
    let index = try #require(document.sections.firstIndex { $0.name == "tank" })
    guard case .tree(var tank) = document.sections[index].content else { throw CocoaError(.coderInvalidValue) }
    tank.renameField("health", to: "hp")
    document.sections[index].content = .tree(tank)
    let renamed = try store.save(document: document, slot: "slot-1").wait().generation

    let refused = try run("stasis-example-tanks", ["--saves", saves, "--resume", "--frames", "900"])
    #expect(refused.status == 1)
    let said = try #require(refused.lines.first { $0.hasPrefix("cannot restore: ") }, "\(refused.stdout)")
    #expect(said.contains("field not decoded in section 'tank', field 'hp': generation \(renamed):"))
    for _ in 0..<3 {
      let started = try run("stasis-example-tanks", ["--saves", saves, "--resume", "--start-over", "--frames", "900"])
      #expect(started.status == 0, "\(started.stderr)")
    }
    #expect(try store.generations(of: "slot-1").contains(renamed), "never pruned")
    let slots = try run("stasis", ["slots", saves])
    #expect(slots.stdout.contains("kept: this build cannot read it"), "\(slots.stdout)")
    let discard = try run("stasis", ["discard", "slot-1", "\(renamed)", "--saves", saves])
    #expect(discard.status == 0, "\(discard.stderr)")
    #expect(try !store.generations(of: "slot-1").contains(renamed))
  }

  @Test("the Stasis-specific lines are as few as the README says, at most 45")
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
    #expect(count <= 45)
    let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    #expect(readme.contains("\(count) lines of Stasis-specific code"), "the README states the count: \(count)")
  }
}

/// Every Swift block in the README is compiled: each appears, line for line, in a file under
/// `Examples/`, which the package builds. The README's guide moved to the DocC articles (GuideTests
/// checks their blocks); the README keeps the quick start.
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
    #expect(blocks.count >= 1)
    let quickStart = try #require(blocks.first { $0.contains("SaveCoordinator(") }, "the README has a quick start")
    #expect(quickStart.contains("Application(delegate: coordinator)") && quickStart.contains("app.launch("))
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

  @Test("the dependency snippet names the package as Package.swift does, whatever the checkout's folder")
  func dependencyNamesThePackage() throws {
    let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    let manifest = try String(contentsOf: packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
    #expect(manifest.contains("  name: \"Stasis\","), "the package is named Stasis")
    let snippet = try #require(readme.range(of: ".package(name: \"Stasis\", path: \"../stasis\", traits: [])"))
    let after = readme[snippet.upperBound...].prefix(400)
    #expect(after.contains(".product(name: \"Stasis\", package: \"Stasis\")"))
    #expect(after.contains(".package(url:"))
    // The trait it turns off is the manifest's, and the measured one-file game does the same.
    #expect(manifest.contains(".trait(name: \"Cloud\""))
    let game = try String(
      contentsOf: packageRoot.appendingPathComponent("Examples/OneFileGame/Package.swift"), encoding: .utf8)
    #expect(game.contains(".package(name: \"Stasis\", path: \"../..\", traits: [])"))
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

/// Every Swift block of the DocC articles, and of the doc comments the guide leans on, is
/// compiled: each appears, line for line, in a file under `Examples/`.
@Suite("The guide's Swift compiles")
struct GuideTests {
  private static func normalized(_ text: some StringProtocol) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
      .filter { !$0.isEmpty }
  }

  private static func exampleSources() throws -> [[String]] {
    var sources: [[String]] = []
    let files = FileManager.default.enumerator(
      at: packageRoot.appendingPathComponent("Examples"), includingPropertiesForKeys: nil)
    for case let file as URL in files ?? FileManager.DirectoryEnumerator() where file.pathExtension == "swift" {
      sources.append(normalized(try String(contentsOf: file, encoding: .utf8)))
    }
    return sources
  }

  private static func swiftBlocks(_ text: String) -> [String] {
    text.components(separatedBy: "```swift\n").dropFirst().map { String($0.components(separatedBy: "```").first ?? "") }
  }

  private static func expectCompiled(_ blocks: [String], from file: String, in sources: [[String]]) {
    for block in blocks {
      let lines = normalized(block)
      let found = sources.contains { source in
        source.count >= lines.count
          && (0...(source.count - lines.count)).contains { Array(source[$0..<($0 + lines.count)]) == lines }
      }
      #expect(found, "\(file): not in any compiled file under Examples/:\n\(block)")
    }
  }

  /// Every article of the libraries' DocC catalogs: one per module, each in its module's folder.
  static func catalogArticles() throws -> [URL] {
    let sources = packageRoot.appendingPathComponent("Sources")
    let catalogs = (FileManager.default.enumerator(atPath: sources.path)?.allObjects as? [String] ?? [])
      .filter { $0.hasSuffix(".docc") }.sorted().map { sources.appendingPathComponent($0) }
    #expect(catalogs.count >= 5, "the catalogs are where they were: \(catalogs)")
    return try catalogs.flatMap { catalog in
      try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }.sorted()
        .map { catalog.appendingPathComponent($0) }
    }
  }

  @Test("every ```swift block of the DocC articles is in a compiled file of Examples/")
  func articles() throws {
    let sources = try Self.exampleSources()
    var count = 0
    for article in try Self.catalogArticles() {
      let text = try String(contentsOf: article, encoding: .utf8)
      let blocks = Self.swiftBlocks(text)
      count += blocks.count
      Self.expectCompiled(blocks, from: article.lastPathComponent, in: sources)
    }
    #expect(count >= 29)  // 21 before the README's guide moved here, and its 8 blocks the articles lacked
  }

  @Test("the guide names what adopters needed, each with a compiled snippet")
  func coverage() throws {
    var blocks = ""
    for article in try Self.catalogArticles() {
      blocks += Self.swiftBlocks(try String(contentsOf: article, encoding: .utf8)).joined(separator: "\n")
    }
    for needed in [
      "Application.Configuration(backgroundBudget:", "closeGate()", "reachedGate.wait()", "openGate()",
      "fields[\"x\"] = .int64(", "SigningKey(bytes:", "waitForCatchUp()", "isCatchingUp",
      "CloudCredentials.token(fromFile:", ".custom {", "ConflictPolicy(name:",
      "SaveStore(directory: \"Saves\", device:",
      "rules.group([", ".byKey(\"id\")", ".savedAlongside(let", ".held", "app.quit()",
    ] {
      #expect(blocks.contains(needed), "no compiled snippet shows \(needed)")
    }
  }

  @Test("the examples in LoadReport's doc comment are the real API")
  func loadReportComment() throws {
    let source = try String(
      contentsOf: packageRoot.appendingPathComponent("Sources/Core/Stasis/Coding/LoadReport.swift"), encoding: .utf8)
    let comment = source.split(separator: "\n").filter { $0.hasPrefix("///") }.map { $0.dropFirst(3) }
      .joined(separator: "\n")
    let blocks = Self.swiftBlocks(comment)
    #expect(!blocks.isEmpty)
    Self.expectCompiled(blocks, from: "LoadReport.swift", in: try Self.exampleSources())
  }
}
