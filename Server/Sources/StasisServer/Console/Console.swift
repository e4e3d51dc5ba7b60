import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Mustache
import NIOCore
import Stasis
import StasisInspect
import StasisMerge
import StasisReplay

/// The studio console at `/console`: pages rendered on the server from mustache templates,
/// plain forms and links, no JavaScript. Staff sign in with a name and a password; a session
/// lives in an `HttpOnly`, `SameSite=Strict` cookie (`Secure` where TLS is used), every form
/// carries the session's CSRF token, and every page sends a Content-Security-Policy that lets
/// nothing but the console's own stylesheet and images load.
struct Console: Sendable {
  let studio: Studio
  let library: MustacheLibrary
  let secureCookies: Bool

  static let sessionCookie = "stasis_console"
  static let signInCookie = "stasis_sign_in"
  static let contentSecurityPolicy =
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    + "base-uri 'none'"

  init(studio: Studio, secureCookies: Bool) throws {
    self.studio = studio
    self.library = try ConsoleTemplates.library()
    self.secureCookies = secureCookies
  }

  func addRoutes(to router: Router<ServerContext>) {
    let console = router.group("console").add(middleware: ConsoleMiddleware(console: self))
    console.get("style.css") { _, _ in
      Response(
        status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "max-age=300"],
        body: .init(byteBuffer: ByteBuffer(string: ConsoleTemplates.style)))
    }
    console.get("sign-in") { request, context in try signInPage(request, context, name: "", problem: nil) }
    console.post("sign-in") { request, context in try await signIn(request, context) }
    console.post("sign-out") { request, context in
      let (id, session) = try await requireSession(request, context)
      _ = try await form(request, context, session: session)
      try await studio.signOut(id: id, staff: session.staff)
      var response = redirect("/console/sign-in")
      response.headers[.setCookie] = cookie(Self.sessionCookie, "", request: request, maxAge: 0)
      return response
    }
    console.get("") { request, context in try await playersPage(request, context) }
    console.get("players/:player") { request, context in try await playerPage(request, context) }
    console.get("players/:player/slots/:slot") { request, context in try await historyPage(request, context) }
    console.get("players/:player/slots/:slot/revisions/:revision") { request, context in
      try await revisionPage(request, context)
    }
    console.get("players/:player/slots/:slot/revisions/:revision/thumbnail.png") { request, context in
      _ = try await requireSession(request, context)
      let (_, bytes) = try await studio.file(
        of: try await player(context), slot: try slotName(context), revision: try revisionNumber(context))
      guard case .raw(let png)? = try decodedSave(bytes)[section: "thumbnail"]?.content else {
        throw StudioError(.notFound, "this revision has no thumbnail")
      }
      return Response(
        status: .ok, headers: [.contentType: "image/png", .cacheControl: "private, max-age=3600"],
        body: .init(byteBuffer: ByteBuffer(bytes: png)))
    }
    console.get("players/:player/slots/:slot/revisions/:revision/download") { request, context in
      let (_, session) = try await requireSession(request, context)
      let (metadata, bytes) = try await studio.download(
        session.staff, player: try await player(context), slot: try slotName(context),
        revision: try revisionNumber(context))
      return Response(
        status: .ok,
        headers: [
          .contentType: "application/vnd.stasis",
          .contentDisposition: "attachment; filename=\"\(metadata.slot)-r\(metadata.revision).stasis\"",
        ], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
    console.get("players/:player/slots/:slot/diff") { request, context in try await diffPage(request, context) }
    console.post("players/:player/slots/:slot/restore") { request, context in
      let (_, session) = try await requireSession(request, context)
      let fields = try await form(request, context, session: session)
      let player = try await player(context)
      let slot = try slotName(context)
      try studio.require(session.staff, .support, to: "restoring a revision")
      // The head the page showed: the restore is written on it, or refused (412).
      guard let revision = fields["revision"].flatMap({ Int64($0) }), let head = fields["head"].flatMap({ Int64($0) })
      else { throw StudioError(.badRequest, "the form names no revision, or not the head it was shown") }
      let result = try await studio.restore(
        session.staff, player: player, slot: slot, revision: revision, expectedHead: head,
        reason: fields["reason"] ?? "")
      return redirect(
        "/console/players/\(player.id)/slots/\(slot)?done=\(result.entry.id)")
    }
    console.get("players/:player/slots/:slot/revisions/:revision/discard") { request, context in
      try await discardPage(request, context)
    }
    console.post("players/:player/slots/:slot/revisions/:revision/discard") { request, context in
      let (_, session) = try await requireSession(request, context)
      let fields = try await form(request, context, session: session)
      let player = try await player(context)
      let slot = try slotName(context)
      let entry = try await studio.discard(
        session.staff, player: player, slot: slot, revision: try revisionNumber(context),
        confirm: fields["confirm"] ?? "", reason: fields["reason"] ?? "")
      return redirect("/console/players/\(player.id)/slots/\(slot)?done=\(entry.id)")
    }
    console.post("players/:player/tokens") { request, context in
      let (_, session) = try await requireSession(request, context)
      let fields = try await form(request, context, session: session)
      let player = try await player(context)
      let issued = try await studio.issueToken(
        session.staff, player: player, label: fields["label"] ?? "", reason: fields["reason"] ?? "")
      // The secret is in this page's body only: never in a URL, never again.
      return try page(
        "token",
        [
          "title": "Token issued", "player": playerFields(player), "label": issued.token.label,
          "secret": issued.secret,
        ], session: session)
    }
    console.post("players/:player/tokens/:token/revoke") { request, context in
      let (_, session) = try await requireSession(request, context)
      let fields = try await form(request, context, session: session)
      let player = try await player(context)
      guard let id = context.parameters.get("token").flatMap({ Int64($0) }) else {
        throw StudioError(.badRequest, "a token id is a whole number")
      }
      _ = try await studio.revokeToken(session.staff, player: player, id: id, reason: fields["reason"] ?? "")
      return redirect("/console/players/\(player.id)")
    }
    console.get("players/:player/replays/:replay/download") { request, context in
      let (_, session) = try await requireSession(request, context)
      guard let id = context.parameters.get("replay").flatMap({ Int64($0) }), id > 0 else {
        throw StudioError(.badRequest, "a replay's id is a positive whole number")
      }
      let (replay, bytes) = try await studio.downloadReplay(session.staff, player: try await player(context), id: id)
      return Response(
        status: .ok,
        headers: [
          .contentType: "application/vnd.stasis",
          .contentDisposition: "attachment; filename=\"\(replay.name).stasis\"",
        ], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
    console.get("players/:player/bundles/:bundle") { request, context in try await bundlePage(request, context) }
    console.get("players/:player/bundles/:bundle/download") { request, context in
      let (_, session) = try await requireSession(request, context)
      let (bundle, bytes) = try await studio.downloadBundle(
        session.staff, player: try await player(context), id: try bundleNumber(context))
      return Response(
        status: .ok,
        headers: [
          .contentType: "application/vnd.stasis",
          .contentDisposition: "attachment; filename=\"desync-\(bundle.id).desync.stasis\"",
        ], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
    console.get("audit") { request, context in try await auditPage(request, context) }
    console.post("audit/:entry/undo") { request, context in
      let (_, session) = try await requireSession(request, context)
      let fields = try await form(request, context, session: session)
      guard let id = context.parameters.get("entry").flatMap({ Int64($0) }) else {
        throw StudioError(.badRequest, "an audit entry's id is a whole number")
      }
      let result = try await studio.undo(session.staff, entry: id, reason: fields["reason"] ?? "")
      return redirect(
        "/console/players/\(result.entry.playerId ?? 0)/slots/\(result.entry.slot ?? "")?done=\(result.entry.id)")
    }
  }

  // MARK: Pages

  private func signInPage(_ request: Request, _ context: ServerContext, name: String, problem: String?) throws
    -> Response
  {
    // A sign-in form carries a token that must match a cookie of its own (double submit):
    // another site cannot sign a browser in as someone else.
    let token = Studio.randomToken()
    var response = try page("sign-in", ["title": "Sign in", "csrf": token, "name": name], problem: problem)
    response.headers[.setCookie] = cookie(Self.signInCookie, token, request: request, maxAge: 3600)
    return response
  }

  private func signIn(_ request: Request, _ context: ServerContext) async throws -> Response {
    let fields = try await formFields(request, context)
    guard let token = cookies(request)[Self.signInCookie], let sent = fields["csrf"], Studio.same(token, sent) else {
      throw StudioError(.forbidden, "the sign-in form has expired or was not sent by this console; sign in again")
    }
    let name = fields["name"] ?? ""
    do {
      let (id, _) = try await studio.signIn(
        name: name, password: fields["password"] ?? "", address: context.remoteAddress)
      var response = redirect("/console")
      response.headers[.setCookie] = cookie(
        Self.sessionCookie, id, request: request, maxAge: Studio.sessionLength / 1000)
      return response
    } catch let error as StudioError where error.kind == .unauthorized || error.kind == .tooManyRequests {
      var response = try signInPage(request, context, name: name, problem: error.description)
      response.status = HTTPResponse.Status(code: error.kind.rawValue)
      if let wait = error.retryAfter { response.headers[.retryAfter] = "\(wait)" }
      return response
    }
  }

  private func playersPage(_ request: Request, _ context: ServerContext) async throws -> Response {
    let (_, session) = try await requireSession(request, context)
    let query = request.uri.queryParameters.get("query")
    var values: [String: Any] = ["title": "Players", "query": query ?? "", "searched": query != nil]
    if let query {
      values["players"] = try await studio.findPlayers(query).map { playerFields($0) }
    }
    return try page("players", values, session: session)
  }

  private func playerPage(_ request: Request, _ context: ServerContext) async throws -> Response {
    let (_, session) = try await requireSession(request, context)
    let overview = try await studio.overview(of: try await player(context))
    let support = session.staff.role >= .support
    return try page(
      "player",
      [
        "title": overview.player.name, "player": playerFields(overview.player),
        "slots": overview.slots.map { metadataFields($0) },
        "devices": overview.devices.map {
          ["name": $0.name, "revisions": $0.revisions, "last": displayDate($0.lastUpload)] as [String: Any]
        },
        "tokens": overview.tokens.map { token in
          var fields: [String: Any] = [
            "id": token.id, "label": token.label, "fingerprint": token.fingerprint,
            "created": displayDate(token.createdAt), "canRevoke": support && token.revokedAt == nil,
          ]
          // An absent key is false to mustache; a nil in an `Any` is not.
          if let revoked = token.revokedAt { fields["revoked"] = displayDate(revoked) }
          return fields
        },
        "canSupport": support,
        "bundles": try await studio.bundles(of: overview.player).map { bundleFields($0) },
        "replays": try await studio.replays(of: overview.player).map { replay in
          [
            "id": replay.id, "name": replay.name, "game": replay.game, "build": replay.build,
            "ticks": "\(replay.startTick) to \(replay.startTick + replay.ticks)", "sent": displayDate(replay.updatedAt),
            "size": byteCount(replay.length),
          ] as [String: Any]
        },
      ], session: session)
  }

  private func bundlePage(_ request: Request, _ context: ServerContext) async throws -> Response {
    let (_, session) = try await requireSession(request, context)
    let player = try await player(context)
    let (stored, bytes) = try await studio.bundle(of: player, id: try bundleNumber(context))
    let bundle: DesyncBundle
    do throws(SaveFileError) {
      bundle = try DesyncBundle(bytes: bytes)
    } catch {
      throw StudioError(.conflict, "the stored bundle does not read: \(error.description)")
    }
    let report = bundle.report
    let manifest = report.manifest
    var reportFields: [String: Any] = [
      "summary": report.summary, "tick": report.tick, "exact": report.isExact, "lastMatch": report.lastMatchingTick,
      "recorded": hexDigest(report.recordedDigest), "replayed": hexDigest(report.replayedDigest),
      "keyframe": report.keyframeTick,
    ]
    // An absent key is false to mustache; a nil in an `Any` is not.
    if let compared = report.comparedTick { reportFields["compared"] = compared }
    return try page(
      "bundle",
      [
        "title": "Desync bundle #\(stored.id)", "player": playerFields(player), "bundle": bundleFields(stored),
        "report": reportFields, "differences": report.differences,
        "manifest": [
          "game": manifest.game, "build": manifest.build, "schema": manifest.schemaVersion, "seed": manifest.seed,
          "startTick": manifest.startTick, "endTick": manifest.endTick, "tickRate": manifest.tickRate,
          "keyframes": every(manifest.keyframeInterval), "digests": every(manifest.digestInterval),
          "scope": manifest.digestScope, "resumed": manifest.resumedAt,
        ] as [String: Any],
      ], session: session)
  }

  private func bundleFields(_ bundle: StoredBundle) -> [String: Any] {
    [
      "id": bundle.id, "summary": bundle.summary, "tick": bundle.tick, "game": bundle.game, "build": bundle.build,
      "received": displayDate(bundle.createdAt), "size": byteCount(bundle.length), "sha256": bundle.sha256,
    ]
  }

  private func every(_ ticks: Int) -> String { ticks == 1 ? "every tick" : "every \(ticks) ticks" }

  private func hexDigest(_ digest: UInt64) -> String {
    let hex = String(digest, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }

  private func bundleNumber(_ context: ServerContext) throws -> Int64 {
    guard let id = context.parameters.get("bundle").flatMap({ Int64($0) }), id > 0 else {
      throw StudioError(.badRequest, "a bundle's id is a positive whole number")
    }
    return id
  }

  private func historyPage(_ request: Request, _ context: ServerContext) async throws -> Response {
    let (_, session) = try await requireSession(request, context)
    let player = try await player(context)
    let slot = try slotName(context)
    let history = try await studio.history(of: player, slot: slot)
    // The left-hand choice: the newest kept loser (where lost progress usually is), else the
    // revision before the head.
    let from =
      (history.revisions.first { $0.isKept && $0.revision != history.head }
      ?? history.revisions.first { $0.revision != history.head })?.revision
    var rows: [[String: Any]] = []
    for revision in history.revisions {
      var fields = metadataFields(revision)
      fields["isHead"] = revision.revision == history.head
      fields["isFrom"] = revision.revision == from
      fields["roles"] = history.roles(of: revision)
      fields["summary"] = summaryFields(revision.summaryJSON)
      fields["label"] = optionLabel(revision, head: history.head)
      if revision.revision != history.head {
        fields["compareWithHead"] =
          "/console/players/\(player.id)/slots/\(slot)/diff?from=\(revision.revision)&to=\(history.head)"
      }
      // Known only from the file's section table: a save without one gets no image to break.
      if await hasThumbnail(player, revision) { fields["thumbnail"] = thumbnailURL(player, revision) }
      rows.append(fields)
    }
    var values: [String: Any] = [
      "title": "\(slot) of \(player.name)", "player": playerFields(player), "slot": slot, "revisions": rows,
      "entries": history.audit.filter { $0.action != .download }.map { entryFields($0, session: session) },
    ]
    if let done = request.uri.queryParameters.get("done").flatMap({ Int64($0) }),
      let entry = history.audit.first(where: { $0.id == done })
    {
      let newHead = entry.headAfter.map { " · the head is now r\($0)" } ?? ""
      values["notice"] = "Done: \(describe(entry))\(newHead) (audit entry #\(entry.id))."
    }
    return try page("history", values, session: session)
  }

  private func revisionPage(_ request: Request, _ context: ServerContext) async throws -> Response {
    let (_, session) = try await requireSession(request, context)
    let player = try await player(context)
    let slot = try slotName(context)
    let number = try revisionNumber(context)
    let history = try await studio.history(of: player, slot: slot)
    let (metadata, bytes) = try await studio.file(of: player, slot: slot, revision: number)
    let document = try decodedSave(bytes)
    var values: [String: Any] = [:]
    if document[section: "thumbnail"] != nil { values["thumbnail"] = thumbnailURL(player, metadata) }
    return try page(
      "revision",
      values.merging([
        "title": "r\(number) of \(slot)", "player": playerFields(player), "slot": slot,
        "meta": metadataFields(metadata), "roles": history.roles(of: metadata), "head": history.head,
        "summary": summaryFields(metadata.summaryJSON),
        "others": history.revisions.filter { $0.revision != number }.map {
          ["revision": $0.revision, "label": optionLabel($0, head: history.head)] as [String: Any]
        },
        "tree": SaveInspection.dump(document.tree),
        "canRestore": session.staff.role >= .support && number != history.head,
        "canDiscard": session.staff.role >= .admin && metadata.isKept,
      ]) { $1 }, session: session)
  }

  private func diffPage(_ request: Request, _ context: ServerContext) async throws -> Response {
    let (_, session) = try await requireSession(request, context)
    let player = try await player(context)
    let slot = try slotName(context)
    guard let from = request.uri.queryParameters.get("from").flatMap({ Int64($0) }),
      let to = request.uri.queryParameters.get("to").flatMap({ Int64($0) })
    else { throw StudioError(.badRequest, "choose two revisions to compare") }
    let history = try await studio.history(of: player, slot: slot)
    let old = try decodedSave(try await studio.file(of: player, slot: slot, revision: from).1)
    let new = try decodedSave(try await studio.file(of: player, slot: slot, revision: to).1)
    let count = SaveInspection.differences(old, new).count
    return try page(
      "diff",
      [
        "title": "r\(from) → r\(to)", "player": playerFields(player), "slot": slot, "from": from, "to": to,
        "count": count, "text": count == 0 ? "No differences." : SaveInspection.diff(old, new), "head": history.head,
        // The left-hand revision is the one support chose to compare: restorable from here.
        "canRestore": session.staff.role >= .support && from != history.head,
      ], session: session)
  }

  private func discardPage(_ request: Request, _ context: ServerContext) async throws -> Response {
    let (_, session) = try await requireSession(request, context)
    try studio.require(session.staff, .admin, to: "discarding a kept revision")
    let player = try await player(context)
    let slot = try slotName(context)
    let number = try revisionNumber(context)
    let (metadata, _) = try await studio.file(of: player, slot: slot, revision: number)
    guard let kept = metadata.keptReason else {
      throw StudioError(.conflict, "r\(number) is not kept: pruning removes it in its turn")
    }
    return try page(
      "discard",
      [
        "title": "Discard r\(number)", "player": playerFields(player), "slot": slot, "revision": number,
        "kept": kept, "name": "\(slot) r\(number)",
      ], session: session)
  }

  private func auditPage(_ request: Request, _ context: ServerContext) async throws -> Response {
    let (_, session) = try await requireSession(request, context)
    let query = request.uri.queryParameters
    let player = query.get("player").flatMap { $0.isEmpty ? nil : $0 }
    let staff = query.get("staff").flatMap { $0.isEmpty ? nil : $0 }
    let entries = try await studio.audit(AuditFilter(player: player, staff: staff, limit: 200))
    return try page(
      "audit",
      [
        "title": "Audit log", "player": player ?? "", "staffFilter": staff ?? "",
        "entries": entries.map { entryFields($0, session: session) },
      ], session: session)
  }

  // MARK: Rendering

  func page(_ name: String, _ values: [String: Any], session: StaffSession? = nil, problem: String? = nil) throws
    -> Response
  {
    var values = values
    if let session {
      values["staff"] =
        ["name": session.staff.name, "role": session.staff.role.rawValue, "csrf": session.csrf] as [String: Any]
      values["csrf"] = session.csrf
    }
    if let problem { values["problem"] = problem }
    guard let html = library.render(values, withTemplate: name) else {
      throw StudioError(.notFound, "no page '\(name)'")
    }
    return Response(
      status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
      body: .init(byteBuffer: ByteBuffer(string: html)))
  }

  private func playerFields(_ player: Player) -> [String: Any] {
    ["id": player.id, "name": player.name, "created": displayDate(player.createdAt), "revoked": player.revoked]
  }

  private func metadataFields(_ metadata: RevisionMetadata) -> [String: Any] {
    var fields: [String: Any] = [
      "slot": metadata.slot, "revision": metadata.revision, "device": metadata.device,
      "uploaded": displayDate(metadata.uploadedAt), "created": displayDate(metadata.createdAt),
      "playTime": playTime(metadata.playTime), "size": byteCount(metadata.bytes), "game": metadata.game,
      "build": metadata.build, "schema": metadata.schema, "sha256": metadata.sha256,
    ]
    // An absent key is false to mustache: a game that records no progress shows none.
    if let progress = metadata.progress { fields["progress"] = percent(progress) }
    return fields
  }

  private func entryFields(_ entry: AuditEntry, session: StaffSession) -> [String: Any] {
    let heads =
      switch (entry.headBefore, entry.headAfter) {
      case (let before?, let after?) where before != after: "r\(before) → r\(after)"
      case (let before?, _): "r\(before)"
      case (nil, let after?): "→ r\(after)"
      case (nil, nil): ""
      }
    var fields: [String: Any] = [
      "id": entry.id, "at": displayDate(entry.at), "staff": entry.staff, "what": describe(entry), "heads": heads,
      "reason": entry.reason,
      "canUndo": (entry.action == .restore || entry.action == .undo) && entry.undoneBy == nil
        && session.staff.role >= .support,
    ]
    if let undoneBy = entry.undoneBy { fields["undone"] = "undone by #\(undoneBy)" }
    return fields
  }

  private func describe(_ entry: AuditEntry) -> String {
    var text = entry.action.rawValue
    switch entry.action {
    case .issueToken, .revokeToken, .downloadBundle, .downloadReplay: if let id = entry.revision { text += " \(id)" }
    default: if let revision = entry.revision { text += " r\(revision)" }
    }
    if let player = entry.player { text += " · \(player)" }
    if let slot = entry.slot { text += " / \(slot)" }
    if let undoes = entry.undoes { text += " (undoes #\(undoes))" }
    return text
  }

  /// True when the revision's file has a `thumbnail` section (read from its section table).
  private func hasThumbnail(_ player: Player, _ metadata: RevisionMetadata) async -> Bool {
    guard let (_, bytes) = try? await studio.file(of: player, slot: metadata.slot, revision: metadata.revision),
      let header = try? bytes.withUnsafeBytes({ try SaveFileFormat.readHeader($0) })
    else { return false }
    return header.sections.contains { $0.name == "thumbnail" }
  }

  /// A revision as a choice of the Compare menus, what tells it apart and what it is:
  /// `r6 · kept loser, lost to r7 · level 2 · score 360 · 33% · 30 s · laptop`.
  private func optionLabel(_ metadata: RevisionMetadata, head: Int64) -> String {
    var parts = ["r\(metadata.revision)"]
    if metadata.revision == head {
      parts.append("head")
    } else if let lostTo = metadata.lostTo {
      parts.append("kept loser, lost to r\(lostTo)")
    }
    parts += summaryFields(metadata.summaryJSON).map { "\($0["key"] ?? "") \($0["value"] ?? "")" }
    if let progress = metadata.progress { parts.append(percent(progress)) }
    parts += [playTime(metadata.playTime), metadata.device]
    return parts.filter { !$0.isEmpty }.joined(separator: " · ")
  }

  private func thumbnailURL(_ player: Player, _ metadata: RevisionMetadata) -> String {
    "/console/players/\(player.id)/slots/\(metadata.slot)/revisions/\(metadata.revision)/thumbnail.png"
  }

  /// The game's own summary fields, in its order, as key and text.
  private func summaryFields(_ json: String) -> [[String: Any]] {
    guard !json.isEmpty, json != "null",
      let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
    else { return [] }
    return object.keys.sorted().map { key in
      let value = object[key]
      let text =
        switch value {
        case let string as String: string
        case let number as NSNumber: number.stringValue
        default: value.map { "\($0)" } ?? "null"
        }
      return ["key": key, "value": text]
    }
  }

  // MARK: Requests

  /// The signed-in session, or a redirect to the sign-in page.
  func requireSession(_ request: Request, _ context: ServerContext) async throws -> (String, StaffSession) {
    guard let id = cookies(request)[Self.sessionCookie], !id.isEmpty,
      let session = try await studio.session(id: id)
    else { throw ConsoleRedirect(location: "/console/sign-in") }
    return (id, session)
  }

  /// A form's fields, after checking its CSRF token against the session's.
  private func form(_ request: Request, _ context: ServerContext, session: StaffSession) async throws -> [String:
    String]
  {
    let fields = try await formFields(request, context)
    guard let sent = fields["csrf"], Studio.same(sent, session.csrf) else {
      throw StudioError(.forbidden, "the form's CSRF token is missing or wrong; reload the page and try again")
    }
    return fields
  }

  /// An `application/x-www-form-urlencoded` body of at most 64 KB.
  private func formFields(_ request: Request, _ context: ServerContext) async throws -> [String: String] {
    var buffer = ByteBuffer()
    for try await part in request.body {
      guard buffer.readableBytes + part.readableBytes <= 64 * 1024 else {
        throw StudioError(.badRequest, "the form is larger than 64 KB")
      }
      var part = part
      buffer.writeBuffer(&part)
    }
    var fields: [String: String] = [:]
    for pair in String(buffer: buffer).split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
      }
      let key = decode(parts[0])
      if fields[key] == nil { fields[key] = parts.count > 1 ? decode(parts[1]) : "" }
    }
    return fields
  }

  private func player(_ context: ServerContext) async throws -> Player {
    guard let id = context.parameters.get("player").flatMap({ Int64($0) }) else {
      throw StudioError(.notFound, "no such player")
    }
    return try await studio.player(id: id)
  }

  func cookies(_ request: Request) -> [String: String] {
    var cookies: [String: String] = [:]
    for field in request.headers where field.name == .cookie {
      for pair in field.value.split(separator: ";") {
        let parts = pair.split(separator: "=", maxSplits: 1)
        guard parts.count == 2 else { continue }
        let name = parts[0].trimmingCharacters(in: .whitespaces)
        if cookies[name] == nil { cookies[name] = parts[1].trimmingCharacters(in: .whitespaces) }
      }
    }
    return cookies
  }

  /// A cookie for the console's paths: `HttpOnly`, `SameSite=Strict`, and `Secure` when the
  /// request came over TLS (`--secure-cookies`, or a proxy's `X-Forwarded-Proto: https`).
  private func cookie(_ name: String, _ value: String, request: Request, maxAge: Int64) -> String {
    let tls = secureCookies || request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased() == "https"
    return "\(name)=\(value); Path=/console; Max-Age=\(maxAge); HttpOnly; SameSite=Strict\(tls ? "; Secure" : "")"
  }
}

func redirect(_ location: String) -> Response {
  Response(status: .seeOther, headers: [.location: location])
}

/// Sends the browser elsewhere (to sign in).
struct ConsoleRedirect: Error {
  var location: String
}

/// Every console answer: its security headers; errors as a page (a signed-out or expired
/// session gets the sign-in page, never a stack trace; an unexpected error is logged and
/// answered with a page that says so).
struct ConsoleMiddleware: RouterMiddleware {
  typealias Context = ServerContext
  let console: Console

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    var response: Response
    do {
      response = try await next(request, context)
    } catch let redirect as ConsoleRedirect {
      response = StasisServer.redirect(redirect.location)
    } catch let error as StudioError {
      response = try await errorPage(error.kind.rawValue, error.description, request: request, context: context)
      if let wait = error.retryAfter { response.headers[.retryAfter] = "\(wait)" }
    } catch let error as APIError {
      response = try await errorPage(Int(error.status.code), error.message, request: request, context: context)
    } catch let error as HTTPError {
      response = try await errorPage(
        Int(error.status.code), error.body ?? error.status.reasonPhrase, request: request,
        context: context)
    } catch {
      context.logger.error("\(request.method) \(request.uri.path): \(error)")
      response = try await errorPage(
        500, "The console failed to answer; it was logged.", request: request, context: context)
    }
    response.headers[.contentSecurityPolicy] = Console.contentSecurityPolicy
    response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
    response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
    response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
    if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
    return response
  }

  private func errorPage(_ status: Int, _ message: String, request: Request, context: Context) async throws
    -> Response
  {
    let session = try? await console.requireSession(request, context).1
    let heading =
      switch status {
      case 403: "Not allowed"
      case 404: "Not found"
      case 409, 412: "Not done"
      case 429: "Too many attempts"
      case 500...: "Something went wrong"
      default: "Not done"
      }
    var response = try console.page(
      "error", ["title": heading, "heading": heading, "message": message, "back": "/console"], session: session)
    response.status = HTTPResponse.Status(code: status)
    return response
  }
}

/// `2026-11-24 09:15:02 UTC`: a date as staff read it.
func displayDate(_ milliseconds: Int64) -> String {
  let iso = isoDate(milliseconds)
  return iso.prefix(10) + " " + iso.dropFirst(11).prefix(8) + " UTC"
}

/// `1 h 02 min`, `3 min 20 s`, `42 s`.
func playTime(_ seconds: Double) -> String {
  let total = Int(seconds.rounded(.down))
  let (hours, minutes, rest) = (total / 3600, total % 3600 / 60, total % 60)
  if hours > 0 { return "\(hours) h \(minutes < 10 ? "0" : "")\(minutes) min" }
  if minutes > 0 { return "\(minutes) min \(rest) s" }
  return "\(rest) s"
}

/// `33%`: a progress fraction from 0 to 1 as a whole percentage, rounded down (only a finished
/// game reads `100%`), and at least `1%` once started.
func percent(_ fraction: Double) -> String {
  let value = max(0, min(1, fraction)) * 100
  return "\(value > 0 && value < 1 ? 1 : Int(value.rounded(.down)))%"
}

/// `812 B`, `12.4 KB`, `16.3 MB` (powers of 1000, as a player's file manager shows them).
func byteCount(_ bytes: Int64) -> String {
  if bytes < 1000 { return "\(bytes) B" }
  if bytes < 1_000_000 { return String(format: "%.1f KB", Double(bytes) / 1000) }
  return String(format: "%.1f MB", Double(bytes) / 1_000_000)
}
