import Synchronization

/// How a ``CloudClient`` sends files: as deltas or whole, and in parts of what size.
public struct TransferOptions: Sendable, Equatable {
  /// Send and fetch only what differs from a revision both sides have, when the server takes
  /// deltas. True by default; false sends and fetches whole files, as every release before
  /// this one did (a file over ``partSize`` still goes in resumable parts).
  public var deltas: Bool
  /// The largest part of a resumable upload, in bytes (256 KiB by default): an upload cut
  /// part-way sends this much again, at most. At least 64.
  public var partSize: Int

  /// Deltas on, in parts of `partSize` bytes.
  public init(deltas: Bool = true, partSize: Int = 256 * 1024) {
    self.deltas = deltas
    self.partSize = max(64, partSize)
  }
}

/// A revision the device holds the bytes of, to send or fetch a delta from.
public struct HeldRevision: Sendable, Equatable {
  /// The revision.
  public var revision: Int
  /// Its file, as the device has it.
  public var bytes: [UInt8]

  /// Creates a held revision.
  public init(revision: Int, bytes: [UInt8]) {
    self.revision = revision
    self.bytes = bytes
  }
}

/// What went over the wire: the files uploaded and downloaded, and the bytes that carried them.
public struct TransferCounts: Sendable, Equatable {
  /// Files uploaded (each attempt counted once).
  public var filesUploaded = 0
  /// Their sizes, summed: what whole uploads would have sent.
  public var fileBytesUploaded = 0
  /// The bodies sent: deltas, parts, and parts sent again after a cut. A body counts when it is
  /// handed to the transport, so a part cut on its way counts whole (an upper bound on the wire).
  public var bytesSent = 0
  /// Files downloaded as deltas.
  public var deltasReceived = 0
  /// Their sizes, summed.
  public var fileBytesReceived = 0
  /// The deltas' bytes.
  public var bytesReceived = 0
  /// Requests handed to the transport (HTTP round trips), every kind counted: what a catch-up
  /// costs in round trips (a return with nothing new is 1).
  public var requests = 0
  /// Whole files received: a head or a revision that came whole, not as a delta.
  public var wholeFilesReceived = 0
  /// Their bytes.
  public var wholeFileBytesReceived = 0
}

/// What one client learned of its server, shared by its copies: whether it takes deltas, its
/// upload limit, the resumable uploads in progress, and what went over the wire.
final class ClientSession: Sendable {
  private struct State {
    var takesDeltas = false
    var uploadLimit: Int?
    /// By slot: the upload's key (what it sends) and its URL.
    var inProgress: [String: (key: String, location: String)] = [:]
    var counts = TransferCounts()
  }
  private let state = Mutex(State())

  var takesDeltas: Bool { state.withLock { $0.takesDeltas } }
  var uploadLimit: Int? { state.withLock { $0.uploadLimit } }
  var counts: TransferCounts { state.withLock { $0.counts } }

  /// Reads `X-Stasis-Features` and `Upload-Limit` from any answer.
  func learn(from response: CloudResponse) {
    guard let features = response.header("X-Stasis-Features") else { return }
    let limit = response.header("Upload-Limit").flatMap { value in
      value.split(separator: ",").lazy.compactMap { member -> Int? in
        let parts = member.split(separator: "=").map { $0.trimmingCharacters(in: .whitespaces) }
        return parts.count == 2 && parts[0] == "max-size" ? Int(parts[1]) : nil
      }.first
    }
    let deltas = features.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "delta" }
    state.withLock {
      $0.takesDeltas = deltas
      if let limit { $0.uploadLimit = limit }
    }
  }

  func resumable(slot: String, key: String) -> String? {
    state.withLock { $0.inProgress[slot].flatMap { $0.key == key ? $0.location : nil } }
  }

  func remember(slot: String, key: String, location: String) {
    state.withLock { $0.inProgress[slot] = (key, location) }
  }

  func forget(slot: String) { state.withLock { _ = $0.inProgress.removeValue(forKey: slot) } }

  func sent(_ bytes: Int) { state.withLock { $0.counts.bytesSent += bytes } }

  /// A request was handed to the transport.
  func requested() { state.withLock { $0.counts.requests += 1 } }

  /// A whole file of `bytes` came (a `200` head or revision).
  func received(whole bytes: Int) {
    state.withLock {
      $0.counts.wholeFilesReceived += 1
      $0.counts.wholeFileBytesReceived += bytes
    }
  }

  func uploaded(file: Int) {
    state.withLock {
      $0.counts.filesUploaded += 1
      $0.counts.fileBytesUploaded += file
    }
  }

  func received(delta: Int, file: Int) {
    state.withLock {
      $0.counts.deltasReceived += 1
      $0.counts.bytesReceived += delta
      $0.counts.fileBytesReceived += file
    }
  }
}
