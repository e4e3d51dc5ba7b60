import Foundation
import Stasis
import StasisTesting
import Synchronization
import Testing

/// What a disk may show after a crash: each file's content, by path relative to the save folder.
struct DiskState: Hashable {
  var files: [String: [UInt8]]
}

/// The crash states of a recorded save: for every prefix of its operations, the states a
/// real disk may show — data written but not flushed missing, zero-filled or half there; a
/// rename or an unlink not followed by a folder flush done or not done.
func crashStates(from initial: DiskState, operations: [RecordingFileSystem.Operation]) -> [DiskState] {
  enum DataFate: CaseIterable { case kept, missing, zeroed, half }
  var states = Set<DiskState>()
  for length in 0...operations.count {
    let prefix = Array(operations[0..<length])
    // Which renames and unlinks were followed, in the prefix, by a flush of their folder.
    var namespaceOps: [(index: Int, durable: Bool)] = []
    for (index, operation) in prefix.enumerated() {
      switch operation {
      case .rename(_, let destination), .unlink(let destination):
        let folder = (destination as NSString).deletingLastPathComponent
        let durable = prefix[(index + 1)...].contains { $0 == .fsyncDirectory(folder) }
        namespaceOps.append((index, durable))
      default: break
      }
    }
    let undecided = namespaceOps.filter { !$0.durable }.map(\.index)
    for fate in DataFate.allCases {
      for mask in 0..<(1 << undecided.count) {
        var files = initial.files
        var flushed = Set<String>()
        for operation in prefix { if case .fsync(let path) = operation { flushed.insert(path) } }
        for (index, operation) in prefix.enumerated() {
          switch operation {
          case .create(let path): files[path] = []
          case .write(let path, let bytes): files[path, default: []] += bytes
          case .fsync: break
          case .fsyncDirectory: break
          case .rename(let source, let destination):
            if let slot = undecided.firstIndex(of: index), mask & (1 << slot) == 0 { continue }
            files[destination] = files[source]
            files[source] = nil
          case .unlink(let path):
            if let slot = undecided.firstIndex(of: index), mask & (1 << slot) == 0 { continue }
            files[path] = nil
          }
        }
        // Data of files never flushed: kept, lost, zeroed or half there (wherever the name now is).
        let written = Set(
          prefix.compactMap { op -> String? in if case .create(let p) = op { return p } else { return nil } })
        for path in written where !flushed.contains(path) {
          let name =
            files[path] != nil
            ? path
            : prefix.compactMap { op -> String? in
              if case .rename(let source, let destination) = op, source == path {
                return destination
              } else {
                return nil
              }
            }.first
          guard let name, let content = files[name] else { continue }
          switch fate {
          case .kept: break
          case .missing: files[name] = []
          case .zeroed: files[name] = [UInt8](repeating: 0, count: content.count)
          case .half: files[name] = Array(content.prefix(content.count / 2))
          }
        }
        states.insert(DiskState(files: files))
      }
    }
  }
  return Array(states)
}

@Suite("Crash states, enumerated")
struct CrashStateTests {
  private func snapshot(_ folder: String) throws -> DiskState {
    var files: [String: [UInt8]] = [:]
    let enumerator = FileManager.default.enumerator(atPath: folder)
    while let name = enumerator?.nextObject() as? String {
      var isFolder: ObjCBool = false
      FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isFolder)
      if !isFolder.boolValue { files[name] = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))) }
    }
    return DiskState(files: files)
  }

  private func materialize(_ state: DiskState) throws -> String {
    let folder = makeTemporaryDirectory()
    for (name, bytes) in state.files {
      let url = URL(fileURLWithPath: folder + "/" + name)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(bytes).write(to: url)
    }
    return folder
  }

  @Test(
    "after a crash at any point of a save, in any state the disk may show, loading gives the old save or the new one",
    arguments: [1, 3])
  func everyCrashState(existingGenerations: Int) throws {
    let folder = makeTemporaryDirectory()
    let recorder = RecordingFileSystem(root: folder)
    let store = SaveStore(directory: folder, fileSystem: recorder)
    var old = TestGameState.sample(bodies: 50, seed: 1)
    for generation in 1...existingGenerations {
      old.score.points = Int64(generation)
      _ = try store.save(old, codec: testCodec, slot: "autosave", summary: old.summary).wait()
    }
    let initial = try snapshot(folder)
    recorder.reset()
    var new = TestGameState.sample(bodies: 50, seed: 2)
    new.score.points = 999
    _ = try store.save(new, codec: testCodec, slot: "autosave", summary: new.summary).wait()
    let operations = recorder.operations
    #expect(operations.contains { if case .fsync = $0 { return true } else { return false } })

    let states = crashStates(from: initial, operations: operations)
    #expect(states.count >= operations.count, "at least one state per prefix: \(states.count)")
    var sawOld = 0
    var sawNew = 0
    for state in states {
      let copy = try materialize(state)
      let loaded = try SaveStore(directory: copy).load(codec: testCodec, slot: "autosave")
      if loaded.state == new {
        sawNew += 1
      } else {
        #expect(loaded.state == old, "a crash state loaded something that is neither save")
        sawOld += 1
      }
      try? FileManager.default.removeItem(atPath: copy)
    }
    #expect(sawOld > 0 && sawNew > 0, "both outcomes occur: \(sawOld) old, \(sawNew) new")
    // The figures for docs/RELIABILITY.md.
    print(
      "crash states: \(states.count) from \(operations.count) operations; \(sawOld) loaded the old save, \(sawNew) the new one"
    )
  }

  @Test("the enumeration catches a save protocol without fsync: a negative control")
  func catchesAMissingFsync() throws {
    // Generation 1 on disk; a careless save writes generation 2 with no fsync and deletes 1.
    let good = SaveFileFormat.encode(try testCodec.document(for: .sample(), summary: SaveSummary(), createdAt: 0))
    let initial = DiskState(files: ["autosave/0000000001.stasis": good])
    let careless: [RecordingFileSystem.Operation] = [
      .create("autosave/.2.tmp"), .write("autosave/.2.tmp", good),
      .rename("autosave/.2.tmp", "autosave/0000000002.stasis"),
      .unlink("autosave/0000000001.stasis"), .fsyncDirectory("autosave"),
    ]
    var lost = 0
    for state in crashStates(from: initial, operations: careless) {
      let copy = try materialize(state)
      if (try? SaveStore(directory: copy).load(codec: testCodec, slot: "autosave")) == nil { lost += 1 }
    }
    #expect(lost > 0, "without fsync some crash states lose every save")
  }
}
