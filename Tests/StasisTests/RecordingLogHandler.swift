import Logging
import Synchronization

/// A swift-log handler that keeps every message, for tests that count log lines.
struct RecordingLogHandler: LogHandler {
  final class Box: Sendable {
    private let lines = Mutex<[String]>([])
    var messages: [String] { lines.withLock { $0 } }
    func append(_ line: String) { lines.withLock { $0.append(line) } }
  }

  let box: Box
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .trace

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) { box.append("\(event.message)") }
}
