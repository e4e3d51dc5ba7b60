extension SaveValue {
  /// Renames a field of this object; anything else is left alone.
  public mutating func renameField(_ old: String, to new: String) {
    guard case .object(var object) = self else { return }
    object.renameField(old, to: new)
    self = .object(object)
  }

  /// Removes a field of this object (a migration's way to drop data on purpose); anything
  /// else is left alone.
  public mutating func removeField(_ name: String) {
    guard case .object(var object) = self else { return }
    object[name] = nil
    self = .object(object)
  }
}

/// Turns a game's state into a save document and back: each top-level field of the state
/// becomes a named section (`score`, `level`, `camera`, `physics`), so tools see the parts
/// and a reader skips sections it does not know.
public struct SaveCodec<State: Codable & Sendable>: Sendable {
  /// The game that writes and reads.
  public var game: GameIdentity
  /// How older schemas reach the current one.
  public var migrations: SchemaMigrations
  /// Checks that need the game's context (its levels, its content), run on every decoded
  /// state after ``ValidatedSaveState/validate()``; a failure is an `invalidState` error.
  public var validator: (@Sendable (State) throws(InvalidStateError) -> Void)?

  /// Creates a codec for `game`'s current schema.
  public init(game: GameIdentity, migrations: SchemaMigrations = SchemaMigrations()) {
    self.game = game
    self.migrations = migrations
  }

  /// The document of `state`: one tree section per top-level field, sorted by name, then the
  /// raw sections (a thumbnail).
  public func document(
    for state: State, summary: SaveSummary, createdAt: Int64, rawSections: [(name: String, bytes: [UInt8])] = []
  ) throws(SaveFileError) -> SaveDocument {
    let tree = try SaveValueEncoder().encode(state)
    guard case .object(let object) = tree else {
      throw SaveFileError(.typeMismatch, "the state must be a struct with fields (it encoded as \(tree.typeName))")
    }
    var sections = object.fields.map { SaveSection(name: $0.name, content: .tree($0.value)) }
    sections += rawSections.map { SaveSection(name: $0.name, content: .raw($0.bytes)) }
    for section in sections {
      guard section.name.utf8.count <= FormatLimits.maxSectionNameBytes else {
        throw SaveFileError(.limitExceeded, "section name '\(section.name)' is too long")
      }
    }
    guard sections.count <= FormatLimits.maxSections else {
      throw SaveFileError(.limitExceeded, "\(sections.count) sections; the limit is \(FormatLimits.maxSections)")
    }
    try summary.checkSize()
    return SaveDocument(game: game, createdAt: createdAt, summary: summary, sections: sections)
  }

  /// Checks a state with its ``ValidatedSaveState/validate()`` when it has one, then with
  /// ``validator``: everything that simulates or draws a state that did not come from the
  /// game itself goes through here.
  public func validate(_ state: State) throws(SaveFileError) {
    do {
      if let checked = state as? any ValidatedSaveState { try checked.validate() }
      try validator?(state)
    } catch {
      throw SaveFileError(
        .invalidState, "\(error.value): \(error.reason)", context: .init(field: error.field),
        suggestion: "the values were edited or come from a faulty build; an older generation may load")
    }
  }

  /// The state in `document`: refused when written by another game or a newer schema,
  /// migrated when written by an older one, decoded by field name, then validated
  /// (``ValidatedSaveState``).
  public func state(from document: SaveDocument, path: String? = nil) throws(SaveFileError) -> State {
    try load(from: document, path: path).state
  }

  /// The state in `document` and what happened on the way: the migrations that ran, the
  /// fields that took defaults or were dropped by declaration, the sections left over.
  public func load(from document: SaveDocument, path: String? = nil) throws(SaveFileError) -> (
    state: State, report: LoadReport
  ) {
    func located(_ error: SaveFileError) -> SaveFileError { path.map { error.inFile($0) } ?? error }
    guard document.game.name == game.name else {
      throw located(
        SaveFileError(
          .anotherGame, "the save was written by '\(document.game.name)', not '\(game.name)'",
          context: .init(part: "header")))
    }
    let stored = document.game.schemaVersion
    guard stored <= game.schemaVersion else {
      throw located(
        SaveFileError(
          .newerSchema, "schema version \(stored); this build of \(game.name) knows up to \(game.schemaVersion)",
          context: .init(part: "header"), suggestion: "update the game to load it"))
    }
    var tree = document.tree
    do {
      let migrations = try migrations.migrate(&tree, from: stored, to: game.schemaVersion)
      let decoded = try SaveValueDecoder().decodeWithReport(State.self, from: tree)
      try validate(decoded.value)
      let known = ["thumbnail", LoadReport.sectionName]
      let unknown = document.sections.filter { $0.encoding == .raw && !known.contains($0.name) }.map(\.name)
      let report = LoadReport(
        storedSchema: stored, currentSchema: game.schemaVersion, migrations: migrations,
        defaultedFields: decoded.defaultedFields, droppedFields: decoded.droppedFields, unknownSections: unknown)
      return (decoded.value, report)
    } catch {
      var error = error
      // The first path component is the section.
      if let field = error.context.field, error.context.part == nil {
        let parts = field.split(separator: ".", maxSplits: 1).map(String.init)
        let head = parts[0].split(separator: "[").first.map(String.init) ?? parts[0]
        if document[section: head] != nil {
          error.context.part = head
          error.context.field = parts.count > 1 ? parts[1] : String(parts[0].dropFirst(head.count))
        }
      }
      throw located(error)
    }
  }
}
