import HummingbirdCore
import Metrics
import Synchronization

/// How many connections the server serves at once, and what it does past that.
///
/// Up to ``maximum`` connections are served. The next ``shedBand`` are accepted only to be
/// answered `503` with `Retry-After` and closed. Past both, the server stops accepting until
/// a connection closes, and new ones wait in the kernel's listen queue. So the server's
/// descriptors never pass `maximum + shedBand` for connections, and the rest of the soft
/// `RLIMIT_NOFILE` (``reserved`` plus the database's) stays free for the database pool, the
/// log and the runtime: the process never reaches `EMFILE`.
package struct ConnectionLimits: Sendable, Equatable {
  /// Connections served at once.
  package var maximum: Int
  /// Connections past ``maximum`` accepted only to be answered `503` and closed.
  package var shedBand: Int

  /// Descriptors kept for everything that is not a client connection: the runtime's event
  /// loops and thread pools, standard streams, the listening socket.
  package static let reserved = 128
  /// The default ``shedBand``.
  package static let defaultShedBand = 64
  /// The default ``maximum`` never passes this, however high the descriptor limit.
  package static let defaultCeiling = 10_000

  /// Creates limits.
  package init(maximum: Int, shedBand: Int = ConnectionLimits.defaultShedBand) {
    self.maximum = maximum
    self.shedBand = shedBand
  }

  /// The most connections `descriptors` (the soft limit) can serve when the database keeps
  /// `databaseDescriptors` open: what is left after the reserve, the database and the band.
  package static func largest(descriptors: Int, databaseDescriptors: Int, shedBand: Int = defaultShedBand) -> Int {
    descriptors - reserved - databaseDescriptors - shedBand
  }

  /// The default cap: ``largest(descriptors:databaseDescriptors:shedBand:)``, at most
  /// ``defaultCeiling``.
  package static func automatic(descriptors: Int, databaseDescriptors: Int) -> ConnectionLimits {
    ConnectionLimits(
      maximum: min(defaultCeiling, largest(descriptors: descriptors, databaseDescriptors: databaseDescriptors)))
  }
}

/// The live counts behind ``ConnectionLimits``, shared by the listening socket (which stops
/// accepting when all are taken) and each new connection (served, or shed with a `503`).
package final class ConnectionGate: Sendable {
  /// The limits it enforces.
  package let limits: ConnectionLimits
  private let open = Atomic<Int>(0)
  private let served = Atomic<Int>(0)
  private let shedCount = Atomic<Int>(0)

  /// A gate enforcing `limits`.
  package init(_ limits: ConnectionLimits) { self.limits = limits }

  /// Connections accepted and not yet closed, served or shed.
  package var openConnections: Int { open.load(ordering: .relaxed) }
  /// Connections being served.
  package var servedConnections: Int { served.load(ordering: .relaxed) }
  /// Connections answered `503` since start.
  package var shedConnections: Int { shedCount.load(ordering: .relaxed) }

  /// Takes a place for a new connection when one of the ``ConnectionLimits/maximum`` is free;
  /// false means shed it. A true answer is given back with ``leave()`` when it closes.
  func admit() -> Bool {
    var current = served.load(ordering: .relaxed)
    while current < limits.maximum {
      let (exchanged, original) = served.compareExchange(
        expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
      if exchanged {
        Gauge(label: "stasis_connections_served").record(current + 1)
        return true
      }
      current = original
    }
    shedCount.add(1, ordering: .relaxed)
    Counter(label: "stasis_connections_shed_total").increment()
    return false
  }

  /// Gives back the place ``admit()`` took.
  func leave() {
    let now = served.subtract(1, ordering: .acquiringAndReleasing).newValue
    Gauge(label: "stasis_connections_served").record(now)
  }

  fileprivate func opened() { open.add(1, ordering: .relaxed) }
  fileprivate func closed() { open.subtract(1, ordering: .relaxed) }
  fileprivate var isAccepting: Bool { open.load(ordering: .relaxed) < limits.maximum + limits.shedBand }

  /// What the listening socket asks before accepting: Hummingbird's hook on the server channel.
  package var acceptance: some AvailableConnectionsDelegate { Acceptance(gate: self) }

  private struct Acceptance: AvailableConnectionsDelegate {
    let gate: ConnectionGate
    func connectionOpened() { gate.opened() }
    func connectionClosed() { gate.closed() }
    func isAcceptingNewConnections() -> Bool { gate.isAccepting }
  }
}
