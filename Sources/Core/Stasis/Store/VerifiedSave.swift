/// A save file this process verified, and what verifying it found: its document, whether it is
/// signed, and, once the game's codec made a state of it, that state with its load report.
///
/// The one value the sync, the store and the coordinator hand each other for a file one of them
/// checked: a download verified by the sync is written by the store from its document (not
/// decoded again) and restored by the coordinator from its state (not read back, not decoded
/// again). `docs/ARCHITECTURE.md` ("One save") draws the path.
package struct VerifiedSave: Sendable {
  /// The file's document, as its bytes decode.
  package var document: SaveDocument
  /// Whether the file is signed (by a key the store's policy accepts).
  package var signed: Bool
  /// The game's state and load report, when the game's codec decoded `document` while
  /// verifying it (a ``DecodedState`` of the game's `State`); nil when nothing did.
  package var decoded: (any Sendable)?

  package init(document: SaveDocument, signed: Bool, decoded: (any Sendable)? = nil) {
    self.document = document
    self.signed = signed
    self.decoded = decoded
  }

  /// The state decoded while verifying, when it is a `State`: the coordinator's restore takes it
  /// instead of decoding the document again.
  package func decoded<State>(as type: State.Type) -> DecodedState<State>? { decoded as? DecodedState<State> }
}

/// A state the game's codec decoded from a document, and what happened on the way
/// (``SaveCodec/load(from:path:)``).
package struct DecodedState<State: Sendable>: Sendable {
  package var state: State
  package var report: LoadReport

  package init(state: State, report: LoadReport) {
    self.state = state
    self.report = report
  }
}
