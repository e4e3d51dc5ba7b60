import Foundation
import Stasis
import StasisTesting
import Testing

/// Issue 44: the simulated world names its temporary files from what it simulates, never from
/// the host, so a seed's trace is the same in every run.
@Suite("A simulated disk")
struct SimulatedDiskTests {
  /// The description of a save that failed because every fsync of its temporary file did.
  private func failedSave(on disk: SimulatedDisk) -> String? {
    disk.fail(.fsync, times: 4, with: .ioError)
    let store = SaveStore(directory: "/saves", fileSystem: disk)
    guard
      case .failure(let error) = store.save(TestGameState.sample(), codec: testCodec, slot: "autosave").waitForResult()
    else { return nil }
    return error.description
  }

  @Test("names temporary files from its boot, never from the host's process id; a boot after a crash from its own")
  func temporaryNames() throws {
    let disk = SimulatedDisk()
    let first = try #require(failedSave(on: disk), "the save failed with the fsync")
    #expect(first.contains("/saves/autosave/.1.tmp-boot0-"), "\(first)")
    #expect(!first.contains("tmp-\(getpid())"))
    let rebooted = disk.crash { _ in 0 }.disk
    let second = try #require(failedSave(on: rebooted))
    #expect(second.contains(".tmp-boot1-"), "a new process of the simulated machine: \(second)")
  }

  @Test("says which calls its armed faults struck, in order, once each")
  func struckFaults() throws {
    let disk = SimulatedDisk()
    #expect(failedSave(on: disk) != nil)
    let struck = disk.takeStruckFaults()
    #expect(
      struck.map(\.path) == ["/saves/autosave/.1.tmp-boot0-1", "/saves/autosave/.1.tmp-boot0-2"],
      "the temporary file's fsync, then its redo into a new file: \(struck)")
    #expect(struck.allSatisfy { $0.operation == .fsync && $0.errno == .ioError })
    #expect(struck.first?.description.hasSuffix("failed with EIO (Input/output error)") == true)
    #expect(disk.takeStruckFaults().isEmpty, "each is taken once")
    #expect(disk.faultsInjected == 2)
  }

  @Test("a hold stops only the writes it names: a folder file written meanwhile passes it (a CI hang)")
  func holdStopsOnlyItsWrites() throws {
    let disk = SimulatedDisk()
    let store = SaveStore(directory: "/saves", fileSystem: disk)
    let reached = DispatchSemaphore(value: 0)
    disk.holdNextWrite(where: { $0.hasPrefix("/saves/autosave/.") && !$0.hasSuffix("-file") }, notify: reached)
    // A folder file, on this thread: it must not take the hold (it would wait for a release
    // only this thread gives). A timeout here is the test failing, not a wait for the answer.
    let folderFile = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      try? store.writeFolderFile(Array("x".utf8), named: "timers")
      folderFile.signal()
    }
    #expect(folderFile.wait(timeout: .now() + 30) == .success, "the folder file's write passed the hold")
    #expect(!disk.isHolding)
    let save = store.save(TestGameState.sample(), codec: testCodec, slot: "autosave")
    #expect(reached.wait(timeout: .now() + 30) == .success, "the save's write is the one held")
    #expect(disk.isHolding)
    disk.releaseHold()
    #expect(try save.wait().generation == 1)
  }

  @Test("deleting a slot goes through the file system: on a simulated disk its folder goes too")
  func deleteSlotRemovesTheFolder() throws {
    let disk = SimulatedDisk()
    let store = SaveStore(directory: "/saves", fileSystem: disk)
    _ = try store.save(TestGameState.sample(), codec: testCodec, slot: "autosave").wait()
    #expect(disk.kind(of: "/saves/autosave") == .directory)
    #expect(throws: FileSystemError.self, "a folder that holds files is not removed") {
      try disk.removeDirectory("/saves")
    }
    try store.deleteSlot("autosave")
    #expect(disk.kind(of: "/saves/autosave") != .directory, "the empty folder went with the slot")
    #expect(try disk.contents(ofDirectory: "/saves").filter { !$0.hasPrefix(".") } == [])
  }

  @Test("a rename whose folder flush failed is reported as unflushed until a flush succeeds or a crash decides")
  func unflushedAfterFailedFlush() throws {
    let disk = SimulatedDisk()
    let store = SaveStore(directory: "/saves", fileSystem: disk)
    _ = try store.save(TestGameState.sample(), codec: testCodec, slot: "autosave").wait()
    #expect(disk.unflushedAfterFailedFlush == [])
    disk.fail(.fsyncDirectory, times: 1, with: .noSpace)
    var state = TestGameState.sample()
    state.score.points = 2
    #expect(throws: SaveFileError.self) {
      try store.save(state, codec: testCodec, slot: "autosave").wait()
    }
    #expect(disk.unflushedAfterFailedFlush == ["/saves/autosave/0000000002.stasis"], "in place, told it failed")
    try disk.fsyncDirectory("/saves/autosave")
    #expect(disk.unflushedAfterFailedFlush == [], "a later flush made it durable")
  }

  @Test("the real disk names them from the process id, so two processes never share one")
  func realNames() {
    #expect(PosixFileSystem().temporaryTag == String(getpid()))
  }
}
